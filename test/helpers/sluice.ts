/**
 * Start sluice for a test, the way a user would, against a stand-in upstream.
 *
 * `startSluice(opts)` runs the real runtime in-process (src/runtime/) on port 0 for the proxy and the
 * dashboard, with a temp `SLUICE_HOME`, the given config written to `{SLUICE_HOME}/config.yaml`,
 * `proxy.ca_bundle` = the test CA and every `providers.*.upstream` (the sign-in back ends too) pointed
 * at `opts.upstream`.
 *
 * `spawnSluice(args, opts)` runs `bun src/cli.ts serve …` (or `opts.binary`) as a subprocess with the
 * same kind of config and waits for its "proxy listening" line to learn the ports.
 *
 * @example
 * await using up = await startUpstream();
 * await using s = await startSluice({ upstream: up.url, config: { proxy: { timeout: 5 } } });
 * const client = new Anthropic({ baseURL: s.proxyUrl, apiKey: "sk-ant-test" });
 *
 * await using p = await spawnSluice([], { upstream: up.url });
 * p.kill("SIGTERM"); const code = await p.exited; // p.output holds stdout+stderr so far
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { stringify } from "yaml";
import type { RequestHook } from "../../src/core/hook.ts";
import { PROVIDERS } from "../../src/core/types.ts";
import { type SluiceRuntime, startRuntime } from "../../src/runtime/index.ts";
import { type Ran, run } from "./run.ts";
import { testTls } from "./tls.ts";

const REPO = resolve(import.meta.dir, "../..");

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);
function merge(a: Plain, b: Plain): Plain {
  const out: Plain = { ...a };
  for (const [k, v] of Object.entries(b))
    out[k] = isPlain(out[k]) && isPlain(v) ? merge(out[k] as Plain, v) : v;
  return out;
}

export interface SluiceTestOptions {
  /** Base URL of the stand-in upstream used for every provider (e.g. `up.url`). */
  upstream?: string;
  /** Extra config (nested keys) written to config.yaml, merged over the test defaults. */
  config?: Plain;
  /** Use this SLUICE_HOME instead of a fresh temp dir. */
  home?: string;
  /** Trust the test CA via proxy.ca_bundle (default true). */
  trustTestCa?: boolean;
  /** Start the dashboard (default true). */
  dashboard?: boolean;
  /** `--no-default-rules`. */
  noDefaultRules?: boolean;
  /**
   * Leave `proxy.warm_up` at its default (on). Off by default in tests: each start would spend its
   * warm-up's CPU beside the suite; test/proxy/warm-up.test.ts runs it.
   */
  warmUp?: boolean;
}

/** Create a temp SLUICE_HOME with config.yaml; returns the directory. */
export function writeTestConfig(opts: SluiceTestOptions = {}): string {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), "sluice-home-"));
  let cfg: Plain = { logging: { level: "warning" } };
  if (!opts.warmUp) cfg = merge(cfg, { proxy: { warm_up: false } });
  if (opts.trustTestCa !== false) cfg = merge(cfg, { proxy: { ca_bundle: testTls().caPath } });
  if (opts.upstream)
    cfg = merge(cfg, {
      providers: Object.fromEntries(PROVIDERS.map((p) => [p, { upstream: opts.upstream }])),
    });
  if (opts.dashboard === false) cfg = merge(cfg, { dashboard: { enabled: false } });
  if (opts.config) cfg = merge(cfg, opts.config);
  writeFileSync(join(home, "config.yaml"), stringify(cfg), { mode: 0o600 });
  return home;
}

export interface InProcessSluice {
  proxyUrl: string;
  dashboardUrl: string | null;
  runtime: SluiceRuntime;
  configDir: string;
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Start the real runtime in this process on port 0 (proxy and dashboard). */
export async function startSluice(
  opts: SluiceTestOptions & { hook?: RequestHook; quiet?: boolean } = {},
): Promise<InProcessSluice> {
  const home = writeTestConfig(opts);
  const runtime = await startRuntime({
    env: { ...process.env, SLUICE_HOME: home, SLUICE_DASHBOARD_PASSWORD: undefined },
    projectDir: null,
    port: 0,
    dashboardPort: 0,
    noDefaultRules: opts.noDefaultRules,
    hook: opts.hook,
    stderr: opts.quiet === false,
    installSignals: false,
    printBanner: false,
  });
  const addr = runtime.proxyAddress();
  const dash = runtime.dashboardAddress();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await runtime.shutdown("test");
  };
  return {
    proxyUrl: `http://${addr.host}:${addr.port}`,
    dashboardUrl: dash ? `http://${dash.host}:${dash.port}` : null,
    runtime,
    configDir: home,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

export interface SpawnedSluice {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  proxyUrl: string;
  dashboardUrl: string | null;
  configDir: string;
  /** Everything printed so far (stdout and stderr interleaved). */
  readonly output: string;
  /** Resolves when the output matches. */
  waitForOutput(re: RegExp, from?: number): Promise<RegExpMatchArray>;
  kill(signal?: NodeJS.Signals | number): void;
  exited: Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Run `sluice serve` as a subprocess (`bun src/cli.ts serve` by default, or `opts.binary`),
 * with `--port 0 --dashboard-port 0` unless `args` sets them. Rejects if it exits before listening.
 */
export async function spawnSluice(
  args: string[] = [],
  opts: SluiceTestOptions & {
    binary?: string;
    cwd?: string;
    env?: Record<string, string>;
    command?: string[];
    /** Add `--port 0 --dashboard-port 0` unless args set them (default true; false = ports from config). */
    portFlags?: boolean;
  } = {},
): Promise<SpawnedSluice> {
  const home = writeTestConfig(opts);
  const cmd = opts.command ?? [
    ...(opts.binary ? [opts.binary] : [process.execPath, join(REPO, "src/cli.ts")]),
    "serve",
  ];
  const full = [...cmd, ...args];
  if (opts.portFlags !== false) {
    if (!args.includes("--port") && !args.includes("-p")) full.push("--port", "0");
    if (!args.includes("--dashboard-port")) full.push("--dashboard-port", "0");
  }
  if (opts.noDefaultRules) full.push("--no-default-rules");
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    SLUICE_HOME: home,
    NO_COLOR: "1",
  };
  delete env.SLUICE_DASHBOARD_PASSWORD;
  const proc = Bun.spawn(full, {
    cwd: opts.cwd ?? home,
    env: { ...env, ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const followed = followOutput(proc);
  const { exited, waitForOutput } = followed;
  const m = await waitForOutput(/sluice: proxy listening on (http:\/\/[\d.]+:\d+)/);
  const d = followed.output.match(/sluice: dashboard on (http:\/\/[\d.]+:\d+)/);
  return {
    proc,
    proxyUrl: m[1]!,
    dashboardUrl: d?.[1] ?? null,
    configDir: home,
    get output() {
      return followed.output;
    },
    waitForOutput,
    kill: (signal = "SIGTERM") => proc.kill(signal),
    exited,
    async [Symbol.asyncDispose]() {
      if (proc.exitCode === null && !proc.killed) proc.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * Resolves once a sluice's start-up warm-up is over, as its `/health` tells (a sluice without one
 * answers at once). For a subprocess; in process, `runtime.warmedUp()`.
 */
export async function warmedUp(proxyUrl: string): Promise<void> {
  for (;;) {
    const h = (await (await fetch(`${proxyUrl}/health`)).json()) as { warm_up?: string };
    if (h.warm_up !== "running") return;
    await Bun.sleep(10); // a poll of its state: the warm-up runs for about a second
  }
}

export interface FollowedOutput {
  /** Everything printed so far (stdout and stderr interleaved). */
  readonly output: string;
  /**
   * Resolves when the output printed after character `from` (default 0) matches; rejects if the
   * process exits first.
   */
  waitForOutput(re: RegExp, from?: number): Promise<RegExpMatchArray>;
  /** The exit code, once both streams are read. */
  exited: Promise<number>;
}

/** Collect a subprocess's stdout and stderr as they come, and wait on what it prints. */
export function followOutput(proc: Subprocess<"ignore", "pipe", "pipe">): FollowedOutput {
  let output = "";
  const listeners = new Set<() => void>();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of stream) {
      output += dec.decode(chunk, { stream: true });
      for (const l of [...listeners]) l();
    }
  };
  const pumps = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  const exited = proc.exited.then(async (code) => {
    await pumps.catch(() => {});
    for (const l of [...listeners]) l();
    return code;
  });
  let exitedFlag = false;
  exited.then(() => (exitedFlag = true));
  const waitForOutput = (re: RegExp, from = 0) =>
    new Promise<RegExpMatchArray>((resolveMatch, reject) => {
      const check = () => {
        const m = output.slice(from).match(re);
        if (m) {
          listeners.delete(check);
          resolveMatch(m);
        } else if (exitedFlag) {
          listeners.delete(check);
          reject(new Error(`process exited before printing ${re}; output:\n${output}`));
        }
      };
      listeners.add(check);
      exited.then(check);
      check();
    });
  return {
    get output() {
      return output;
    },
    waitForOutput,
    exited,
  };
}

/** Run a sluice command to completion (e.g. a config error); returns exit code and output. */
export async function runSluice(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; binary?: string } = {},
): Promise<Ran> {
  const cmd = opts.binary ? [opts.binary] : [process.execPath, join(REPO, "src/cli.ts")];
  return run([...cmd, ...args], {
    cwd: opts.cwd ?? REPO,
    env: { ...process.env, NO_COLOR: "1", ...opts.env },
  });
}

/** A WebSocket to `path` on a sluice proxy (`proxyUrl`, http://…) with `headers`, once it is open. */
export async function openWebSocket(
  proxyUrl: string,
  path: string,
  headers: Record<string, string>,
): Promise<WebSocket> {
  // Bun's client takes headers in the options argument, which the DOM type does not know.
  const ws = new WebSocket(`${proxyUrl.replace("http", "ws")}${path}`, { headers } as unknown as string[]);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`WebSocket to ${path} through sluice failed to open`));
  });
  return ws;
}

/**
 * An endpoint that is down but holds its port: it accepts each TCP connection and closes it at once,
 * so nothing else in the run can take the port (a port from freePort() can be reused by any listener
 * started meanwhile, even the server under test, which then answers its own health check).
 *
 * await using dead = deadEndpoint(); // dead.url = http://127.0.0.1:<port>
 */
export function deadEndpoint(scheme: "http" | "https" = "http") {
  const l = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: { open: (s) => void s.terminate(), data() {} },
  });
  return { url: `${scheme}://127.0.0.1:${l.port}`, port: l.port, [Symbol.dispose]: () => l.stop(true) };
}

/** A TCP port that was free a moment ago (for tests that must put a port in a config file). */
export function freePort(): number {
  const l = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = l.port;
  l.stop(true);
  return port;
}

/**
 * Two sluices in front of `upstream`, without dashboards: one with the default policy and one that
 * redacts secrets, for tests that compare a block with a redaction of the same payload.
 */
export async function blockingAndRedacting(upstream: string): Promise<[InProcessSluice, InProcessSluice]> {
  const s = await startSluice({ upstream, dashboard: false });
  const redacting = await startSluice({
    upstream,
    dashboard: false,
    config: { detectors: { secrets: { action: "redact" } } },
  });
  return [s, redacting];
}

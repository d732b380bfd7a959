/**
 * `sluice doctor --live`: routing proved by traffic. Each installed tool with a non-interactive mode
 * (`probe` in tools.ts) is run once as the user has it set up: their environment and config files,
 * nothing of sluice's added, so only the current settings decide where its request goes. It is asked
 * for a one-word answer (one tiny model call on the user's account), in an empty scratch directory so
 * that no project file goes with it, and stopped after a timeout.
 *
 * Whether sluice saw it is read from the running sluice itself: its per-client counters
 * (`sluice_client_requests_total` and `sluice_unscanned_requests_total` on the proxy's `/metrics`,
 * which needs no dashboard login), read before the tools start and again after each ends. A count
 * that grew for a tool's client while it ran is its request (for Aider, also LiteLLM's and the
 * OpenAI SDK's, whose user agents its requests carry). Another session of the same tool running
 * at that moment would count too: the check proves that the tool's requests reach sluice, not which
 * ones. A request sluice answered without forwarding (a block) still counts: sluice saw it. A tool
 * that failed proves nothing: Codex signed in with ChatGPT, for one, sends its account checks and
 * telemetry through sluice and then gives up when the answer names no back end for the conversation.
 *
 * Of what a tool prints only its last line is kept, with every credential the scanner finds masked.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Config } from "../config/schema.ts";
import { sanitizeLine } from "../core/log.ts";
import type { Tool } from "./tools.ts";

/** The prompt every tool gets: one word back, and a mark that says where it came from. */
export const PROBE_PROMPT = "Reply with the single word OK. (sluice doctor --live check)";

/**
 * After a tool ends, its request may still be finishing inside sluice (it is counted once its answer
 * has gone out): while sluice has requests in flight, counters are read again, this long at most.
 */
const SETTLE_MS = 2000;
const SETTLE_POLL_MS = 100;
/** A tool that ignores SIGTERM this long after its timeout is killed. */
const KILL_AFTER_MS = 2000;
/** At most this much of each output stream is kept (only its last line is ever shown). */
const OUTPUT_TAIL = 64 * 1024;

/** Per client: requests by sign-in mode, and unread requests by reason; requests in flight. */
export interface ClientCounts {
  requests: Map<string, Map<string, number>>;
  unscanned: Map<string, Map<string, number>>;
  active: number;
}

export type LiveStatus = "seen" | "not_seen" | "failed";

export interface LiveResult {
  status: LiveStatus;
  /** Requests sluice saw from the tool while it ran, by sign-in mode (`api_key`, `oauth`, `chatgpt`…). */
  logins: Record<string, number>;
  /** Of those, the ones it forwarded without reading, by reason. */
  unscanned: Record<string, number>;
  /** The tool's exit code; null when it was stopped or could not start. */
  exit_code: number | null;
  timed_out: boolean;
  /** The last line it printed (stderr first), credentials masked; null when it printed nothing. */
  last_line: string | null;
}

export interface LiveOptions {
  /** The running sluice's proxy (`http://127.0.0.1:8080`). */
  proxy: string;
  /** The environment the tools run in: the user's own. */
  env: Record<string, string | undefined>;
  timeoutMs: number;
  /** The configuration whose rules mask a credential in a tool's last line. */
  config: Config;
}

/** Thrown when the running sluice cannot be read: nothing could be proved. */
export class SluiceUnreachable extends Error {}

const COUNTER =
  /^sluice_(client_requests|unscanned_requests)_total\{client="((?:[^"\\]|\\.)*)",(?:login|reason)="((?:[^"\\]|\\.)*)"\} (\d+)$/;
const unescapeLabel = (v: string) => v.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));

/** The per-client counters of the Prometheus text of `/metrics`. */
export function parseClientCounts(text: string): ClientCounts {
  const counts: ClientCounts = { requests: new Map(), unscanned: new Map(), active: 0 };
  for (const line of text.split("\n")) {
    if (line.startsWith("sluice_active_requests ")) counts.active = Number(line.slice(23)) || 0;
    const m = COUNTER.exec(line);
    if (!m) continue;
    const into = m[1] === "client_requests" ? counts.requests : counts.unscanned;
    const client = unescapeLabel(m[2]!);
    let per = into.get(client);
    if (!per) into.set(client, (per = new Map()));
    per.set(unescapeLabel(m[3]!), Number(m[4]));
  }
  return counts;
}

/** The running sluice's per-client counters; SluiceUnreachable when it does not answer as sluice. */
export async function readClientCounts(proxy: string): Promise<ClientCounts> {
  let text: string;
  try {
    const res = await fetch(`${proxy}/metrics`, { signal: AbortSignal.timeout(5000) });
    text = await res.text();
    if (!res.ok || !text.includes("sluice_client_requests_total")) throw new Error(`answered ${res.status}`);
  } catch (e) {
    throw new SluiceUnreachable(
      `sluice is not answering at ${proxy} (${(e as Error).message}): start it with \`sluice serve\`, then run this again`,
    );
  }
  return parseClientCounts(text);
}

/** What grew in `after` over `before` for one client. */
function grown(before: Map<string, number> | undefined, after: Map<string, number> | undefined) {
  const out: Record<string, number> = {};
  for (const [k, n] of after ?? []) {
    const d = n - (before?.get(k) ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}

/** Counts of several clients added up, key by key. */
function sum(parts: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of parts) for (const [k, n] of Object.entries(p)) out[k] = (out[k] ?? 0) + n;
  return out;
}

export const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** The last `OUTPUT_TAIL` characters of a stream. */
async function tail(stream: ReadableStream<Uint8Array>): Promise<string> {
  const dec = new TextDecoder();
  let out = "";
  for await (const chunk of stream) {
    out += dec.decode(chunk, { stream: true });
    if (out.length > 2 * OUTPUT_TAIL) out = out.slice(-OUTPUT_TAIL);
  }
  return out.slice(-OUTPUT_TAIL);
}

function killGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal); // the tool and whatever it started
  } catch {
    /* already gone */
  }
}

interface ProbeRun {
  exitCode: number | null;
  timedOut: boolean;
  output: string;
}

/** Every tool's process group still running, so that an interrupted doctor stops them too. */
const running = new Set<number>();

/** Run `argv` with the prompt in an empty scratch directory, under a timeout. */
async function runProbe(
  probe: NonNullable<Tool["probe"]>,
  env: LiveOptions["env"],
  timeoutMs: number,
): Promise<ProbeRun> {
  const cwd = mkdtempSync(join(tmpdir(), "sluice-doctor-"));
  try {
    let proc: ReturnType<typeof Bun.spawn<"ignore", "pipe", "pipe">>;
    try {
      proc = Bun.spawn([...probe.args, PROBE_PROMPT], {
        cwd,
        env: { ...env, ...probe.env },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
        detached: true,
      });
    } catch (e) {
      return {
        exitCode: null,
        timedOut: false,
        output: `could not start ${probe.args[0]}: ${(e as Error).message}`,
      };
    }
    const pid = proc.pid;
    running.add(pid);
    let timedOut = false;
    let killer: ReturnType<typeof setTimeout> | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(pid, "SIGTERM");
      killer = setTimeout(() => killGroup(pid, "SIGKILL"), KILL_AFTER_MS);
    }, timeoutMs);
    const outputs = Promise.all([tail(proc.stdout), tail(proc.stderr)]);
    const code = await proc.exited;
    clearTimeout(timer);
    clearTimeout(killer);
    // Whatever the tool left behind holds its output open: it goes with it.
    killGroup(pid, "SIGKILL");
    running.delete(pid);
    const [stdout, stderr] = await outputs;
    return {
      exitCode: timedOut || proc.signalCode ? null : code,
      timedOut,
      output: lastLine(stderr) ? stderr : stdout,
    };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** Stop every tool still running (doctor interrupted). */
export function stopProbes(): void {
  for (const pid of running) killGroup(pid, "SIGKILL");
  running.clear();
}

/**
 * The last line of some output that says something, without terminal escapes, at most 300
 * characters: a stack frame (`at fn (file:…)`) is passed over for the message above it, as Node
 * tools print the message last and their stack after it.
 */
function lastLine(text: string): string | null {
  const lines = Bun.stripANSI(text)
    .split(/\r?\n|\r/)
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const last = lines.findLast((l) => !/^at\s/.test(l)) ?? lines.at(-1);
  return last === undefined ? null : last.slice(0, 300);
}

/** `line` with every credential the rules in force find, and anything that looks like one, masked. */
export async function maskCredentials(line: string, config: Config): Promise<string> {
  const { makeTextScanner, rulesInForce } = await import("../scan/setup.ts");
  const findings = makeTextScanner({ config, rules: rulesInForce(config) })(line, "output");
  let out = line;
  let until = Number.POSITIVE_INFINITY;
  for (const f of [...findings].sort((a, b) => b.start - a.start)) {
    if (f.end > until) continue; // inside a span already masked
    out = out.slice(0, f.start) + f.preview + out.slice(f.end);
    until = f.start;
  }
  return sanitizeLine(out);
}

/** Run one tool and read what sluice saw of it. */
async function checkOne(tool: Tool, before: ClientCounts, opts: LiveOptions): Promise<LiveResult> {
  const run = await runProbe(tool.probe!, opts.env, opts.timeoutMs);
  const clients = [tool.client ?? "", ...(tool.seenAs ?? [])];
  let logins: Record<string, number> = {};
  let unscanned: Record<string, number> = {};
  let active = 0;
  const read = async () => {
    const now = await readClientCounts(opts.proxy);
    logins = sum(clients.map((c) => grown(before.requests.get(c), now.requests.get(c))));
    unscanned = sum(clients.map((c) => grown(before.unscanned.get(c), now.unscanned.get(c))));
    active = now.active;
  };
  await read();
  const settled = Date.now() + SETTLE_MS;
  while (total(logins) === 0 && active > 0 && Date.now() < settled) {
    await Bun.sleep(SETTLE_POLL_MS);
    await read();
  }
  // A tool that failed proved nothing, whatever sluice saw of it (an account check, telemetry); a
  // conversation sent around sluice is not seen, whatever went through it.
  const failed = run.timedOut || run.exitCode !== 0;
  const seen = total(logins) > 0 && !unscanned.bypass;
  const line = lastLine(run.output);
  return {
    status: failed ? "failed" : seen ? "seen" : "not_seen",
    logins,
    unscanned,
    exit_code: run.exitCode,
    timed_out: run.timedOut,
    last_line: line === null ? null : await maskCredentials(line, opts.config),
  };
}

/**
 * Run every tool of `all` (each with a `probe`) at once and say, per tool id, whether sluice saw it.
 * Throws SluiceUnreachable before running any tool when sluice is not answering.
 */
export async function liveCheck(all: Tool[], opts: LiveOptions): Promise<Map<string, LiveResult>> {
  const before = await readClientCounts(opts.proxy);
  const results = await Promise.all(all.map(async (t) => [t.id, await checkOne(t, before, opts)] as const));
  return new Map(results);
}

/** How a sign-in mode counted by sluice reads for a person. */
export function loginLabel(login: string, toolId: string): string {
  switch (login) {
    case "api_key":
      return "api key";
    case "oauth":
      return toolId === "claude" ? "subscription (OAuth)" : "OAuth token";
    case "auth_token":
      return "auth token";
    case "chatgpt":
      return "signed in with ChatGPT";
    case "google":
      return "signed in with Google";
    case "none":
      return "no credential";
    default:
      return login;
  }
}

/**
 * `sluice mcp`: wiring. Loads the configuration, builds the payload pipeline, opens the store when
 * there is one, and runs the mode the flags ask for with one security core (McpSession) per session.
 */
import { join } from "node:path";
import { loadConfig, type UpstreamTls, upstreamTls } from "../config/load.ts";
import { type Config, customRuleDef } from "../config/schema.ts";
import { Bus } from "../core/bus.ts";
import type { RequestHook } from "../core/hook.ts";
import { type Level, Logger } from "../core/log.ts";
import { type Action, blankSession, type RuleDef } from "../core/types.ts";
import { loadBuiltinRules } from "../detect/builtin.ts";
import { ExtensionHost } from "../extensions/host.ts";
import { installationKey } from "../policy/hmac-key.ts";
import { createPipeline } from "../policy/pipeline.ts";
import type { Store } from "../store/index.ts";
import { FileBaselines } from "./baselines-file.ts";
import { McpSession } from "./core.ts";
import { type BaselineStore, StoreBaselines } from "./drift.ts";
import { filterEnv } from "./env.ts";
import { Reporter } from "./events.ts";
import { runHttpBridge } from "./http-bridge.ts";
import { startReverseProxy } from "./reverse.ts";
import { runStdio } from "./stdio.ts";
import { runWsBridge } from "./ws-bridge.ts";

export interface McpCliOptions {
  /** stdio mode: the server command and its arguments. */
  command: string[];
  upstream: string | null;
  /** `--listen`: `:<port>` or `<loopback host>:<port>`. */
  listen: string | null;
  env: string[];
  envFilter: boolean;
  configPath?: string;
  action?: "log" | "alert" | "redact" | "block";
  format?: "text" | "json";
  logLevel?: Level;
  color?: boolean;
  /** Server identity for drift baselines; default the command line or the upstream URL. */
  name?: string;
  headers: [string, string][];
  sessionBinding?: boolean;
  acceptDrift: boolean;
  store: boolean;
}

export class UsageError extends Error {
  override name = "UsageError";
}

export type Mode =
  | { kind: "stdio"; command: string[] }
  | { kind: "http-bridge"; upstream: URL }
  | { kind: "reverse"; upstream: URL; host: string; port: number }
  | { kind: "ws-bridge"; upstream: URL };

/** Parse `--listen` (`:8090`, `127.0.0.1:8090`, `localhost:0`, `[::1]:8090`); loopback only. */
export function parseListen(s: string): { host: string; port: number } {
  const m = /^(?:(\[[^\]]+\]|[^:]*))?:(\d{1,5})$/.exec(s.trim());
  if (!m) throw new UsageError(`--listen ${JSON.stringify(s)}: expected :<port> or <host>:<port>`);
  const rawHost = m[1] || "127.0.0.1";
  const host = rawHost === "localhost" ? "127.0.0.1" : rawHost.replace(/^\[|\]$/g, "");
  const port = Number(m[2]);
  if (port > 65535) throw new UsageError(`--listen: port ${port} is out of range`);
  if (!/^127\.\d+\.\d+\.\d+$/.test(host) && host !== "::1")
    throw new UsageError(`--listen ${s}: sluice listens on loopback only (127.0.0.1 or ::1)`);
  return { host, port };
}

export function resolveMode(o: McpCliOptions): Mode {
  if (o.command.length) {
    if (o.upstream || o.listen) throw new UsageError("give either -- <command> or --upstream, not both");
    return { kind: "stdio", command: o.command };
  }
  if (!o.upstream) throw new UsageError("nothing to proxy: give -- <command> [args] or --upstream <url>");
  let url: URL;
  try {
    url = new URL(o.upstream);
  } catch {
    throw new UsageError(`--upstream ${JSON.stringify(o.upstream)} is not a URL`);
  }
  if (url.username || url.password)
    throw new UsageError("--upstream must not carry credentials; use --header 'Authorization: …'");
  if (o.listen) {
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new UsageError("--listen proxies Streamable HTTP: --upstream must be http:// or https://");
    return { kind: "reverse", upstream: url, ...parseListen(o.listen) };
  }
  if (url.protocol === "http:" || url.protocol === "https:") return { kind: "http-bridge", upstream: url };
  if (url.protocol === "ws:" || url.protocol === "wss:") return { kind: "ws-bridge", upstream: url };
  throw new UsageError(`--upstream ${url.protocol} is not supported (http, https, ws, wss)`);
}

function serverIdFor(mode: Mode, name?: string): string {
  if (name) return name;
  if (mode.kind === "stdio") return `stdio:${mode.command.join(" ")}`;
  return `${mode.upstream.protocol}//${mode.upstream.host}${mode.upstream.pathname}`;
}

/** The rules in force: the store's enabled rules when it has any, else the shipped ones; plus YAML custom_rules. */
export function rulesFor(config: Config, store: Store | null): RuleDef[] {
  const fromStore = store?.enabledRules() ?? [];
  const base = fromStore.length ? fromStore : loadBuiltinRules().filter((r) => r.enabled);
  const names = new Set(base.map((r) => r.name));
  return [...base, ...config.custom_rules.filter((r) => !names.has(r.name)).map(customRuleDef)];
}

async function openStoreMaybe(configDir: string, bus: Bus, log: Logger): Promise<Store | null> {
  try {
    const { openStore } = await import("../store/index.ts");
    return openStore({ configDir, bus, log });
  } catch (err) {
    log.warn(`store unavailable, MCP findings go to the log only: ${(err as Error).message}`);
    return null;
  }
}

/** The store's `mcp_tool_baselines` table when the store is open, else a JSON file in the config dir. */
function baselinesFor(store: Store | null, configDir: string): BaselineStore {
  return store ? new StoreBaselines(store.mcp) : new FileBaselines(join(configDir, "mcp-baselines.json"));
}

/**
 * What the sessions of one `sluice mcp` run share: the configuration (with `--action` applied), the
 * log, the store when there is one, the rules and the payload pipeline their messages go through.
 */
class McpRun {
  config: Config;
  rules: RuleDef[];
  rulesVersion = 1;
  readonly hook: RequestHook;
  /** The plugins of `extensions`, around the hook as in `sluice serve`. */
  readonly extensions: ExtensionHost;
  readonly serverId: string;
  readonly baselines: BaselineStore;
  readonly tls: UpstreamTls;
  #passthrough: boolean;
  #modeCheckedAt = 0;

  private constructor(
    readonly o: McpCliOptions,
    readonly mode: Mode,
    readonly configDir: string,
    readonly log: Logger,
    readonly bus: Bus,
    readonly store: Store | null,
    config: Config,
  ) {
    this.config = config;
    this.rules = rulesFor(config, store);
    // Built lazily: rules compile on the first message, and a fault there fails open with a scan_error.
    const scan = createPipeline({
      config: () => this.config,
      rules: () => this.rules,
      rulesVersion: () => this.rulesVersion,
      hmacKey: installationKey(configDir, (m) => log.warn(m)),
    }).hook;
    this.extensions = new ExtensionHost({
      log,
      bus,
      timeoutMs: () => this.config.extension_timeout_ms,
      rules: () => this.rules,
      rulesVersion: () => this.rulesVersion,
    });
    this.hook = this.extensions.wrap(() => scan);
    this.#passthrough = config.proxy.mode === "passthrough";
    this.tls = upstreamTls(config);
    this.serverId = serverIdFor(mode, o.name);
    this.baselines = baselinesFor(store, configDir);
  }

  static async open(o: McpCliOptions): Promise<McpRun> {
    const mode = resolveMode(o);
    const loaded = loadConfig({ configPath: o.configPath });
    const config = withAction(loaded.config, o.action);
    const log = new Logger({
      level: o.logLevel ?? config.logging.level,
      format: o.format ?? config.logging.format,
      color: o.color,
    });
    for (const w of loaded.warnings) log.warn(w);
    const bus = new Bus();
    const store = o.store ? await openStoreMaybe(loaded.configDir, bus, log) : null;
    const run = new McpRun(o, mode, loaded.configDir, log, bus, store, config);
    await run.extensions.load(config.extensions, loaded.configDir);
    return run;
  }

  /** Reload the configuration and rules (SIGHUP): swapped whole, or the old kept and the reason logged. */
  reload(): void {
    try {
      this.config = withAction(loadConfig({ configPath: this.o.configPath }).config, this.o.action);
      this.rules = rulesFor(this.config, this.store);
      this.rulesVersion++;
      void this.extensions.load(this.config.extensions, this.configDir);
      this.log.warn("configuration reloaded (SIGHUP)");
    } catch (err) {
      this.log.error(`configuration not reloaded, keeping the old one: ${(err as Error).message}`);
    }
  }

  /** `proxy.mode` is passthrough: `sluice serve` may switch it while this process runs (checked once a second). */
  isPassthrough(): boolean {
    const now = Date.now();
    if (this.store && now - this.#modeCheckedAt > 1000) {
      this.#modeCheckedAt = now;
      try {
        const m = this.store.readSetting("proxy.mode");
        this.#passthrough = m ? m === "passthrough" : this.config.proxy.mode === "passthrough";
      } catch {
        /* keep the last known mode */
      }
    }
    return this.#passthrough;
  }

  /** A new session with its own security core, reported as started. */
  session(): McpSession {
    const ctx = blankSession({
      session_id: `mcp-${crypto.randomUUID()}`,
      client: "mcp",
      working_directory: process.cwd(),
      os_platform: process.platform,
    });
    const session = new McpSession({
      serverId: this.serverId,
      config: () => this.config,
      hook: this.hook,
      baselines: this.baselines,
      reporter: new Reporter(this.bus, this.log, this.serverId, ctx),
      passthrough: () => this.isPassthrough(),
      poisonAction: (): Action =>
        this.o.action ?? (this.config.detectors.injection.action || this.config.pipeline.default_action),
      sessionBinding: this.o.sessionBinding,
      acceptDrift: this.o.acceptDrift,
    });
    session.opts.reporter.event({
      kind: "session-start",
      severity: "info",
      message: `MCP session started (${this.mode.kind})`,
      mode: this.mode.kind,
    });
    return session;
  }

  /** Report a session's end; resolves with `code` once the store has its rows. */
  async ended(session: McpSession, code: number): Promise<number> {
    session.opts.reporter.event({
      kind: "session-end",
      severity: "info",
      message: `MCP session ended (${this.mode.kind}, exit ${code})`,
      mode: this.mode.kind,
      exit_code: code,
      client: session.clientName,
      server_name: session.serverName,
      blocked_tools: [...session.blockedTools.keys()],
    });
    return this.finish(code);
  }

  async finish(code: number): Promise<number> {
    try {
      await this.store?.flush();
      await this.store?.close();
    } catch {
      /* the store never decides the exit code */
    }
    return code;
  }
}

const withAction = (c: Config, action: McpCliOptions["action"]): Config =>
  action ? { ...c, pipeline: { ...c.pipeline, default_action: action } } : c;

/** stdio: one session around a child process, with a filtered environment. */
async function runStdioMode(run: McpRun, command: string[]): Promise<number> {
  const { o, config, log } = run;
  const filtered = filterEnv(process.env, {
    filter: o.envFilter && config.mcp.env_filter,
    allowlist: config.mcp.env_allowlist,
    extra: o.env,
  });
  const session = run.session();
  if (filtered.withheld.length)
    session.opts.reporter.event({
      kind: "env-filtered",
      severity: "info",
      message: `environment filter: ${filtered.withheld.length} variable(s) withheld from the MCP server`,
      withheld: filtered.withheld,
    });
  const r = await runStdio({ command, env: filtered.env, session, log });
  return run.ended(session, r.code);
}

/** The reverse proxy: a listener with a session per MCP session, until SIGINT or SIGTERM; SIGHUP reloads. */
async function runReverseMode(run: McpRun, mode: Extract<Mode, { kind: "reverse" }>): Promise<number> {
  const server = startReverseProxy({
    host: mode.host,
    port: mode.port,
    upstream: mode.upstream,
    log: run.log,
    newSession: () => run.session(),
    headers: run.o.headers,
    tls: run.tls,
  });
  const reload = () => run.reload();
  process.on("SIGHUP", reload);
  const stopped = new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  // Printed once every handler is in place (not subject to --log-level): scripts and tests read
  // the address from it.
  const where = `http://${mode.host.includes(":") ? `[${mode.host}]` : mode.host}:${server.port}`;
  process.stderr.write(`sluice mcp: listening on ${where} -> ${mode.upstream.href}\n`);
  await stopped;
  process.off("SIGHUP", reload);
  await server.stop(true);
  return run.finish(0);
}

/** Run `sluice mcp`. Resolves with the process exit code. */
export async function runMcp(o: McpCliOptions): Promise<number> {
  const run = await McpRun.open(o);
  const { mode, log, tls } = run;
  const headers = o.headers;
  switch (mode.kind) {
    case "stdio":
      return runStdioMode(run, mode.command);
    case "http-bridge": {
      const session = run.session();
      return run.ended(session, await runHttpBridge({ upstream: mode.upstream, session, log, headers, tls }));
    }
    case "ws-bridge": {
      const session = run.session();
      return run.ended(session, await runWsBridge({ upstream: mode.upstream, session, log, headers, tls }));
    }
    case "reverse":
      return runReverseMode(run, mode);
  }
}

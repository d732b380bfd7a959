/**
 * `sluice mcp`: wiring. Loads the configuration, builds the payload pipeline, opens the store when
 * there is one, and runs the mode the flags ask for with one security core (McpSession) per session.
 */
import { join } from "node:path";
import { loadConfig, upstreamTls } from "../config/load.ts";
import { type Config, customRuleDef } from "../config/schema.ts";
import { Bus } from "../core/bus.ts";
import { type Level, Logger } from "../core/log.ts";
import { type Action, blankSession, type RuleDef } from "../core/types.ts";
import { loadBuiltinRules } from "../detect/builtin.ts";
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

/** Run `sluice mcp`. Resolves with the process exit code. */
export async function runMcp(o: McpCliOptions): Promise<number> {
  const mode = resolveMode(o);
  const loaded = loadConfig({ configPath: o.configPath });
  const withAction = (c: Config): Config =>
    o.action ? { ...c, pipeline: { ...c.pipeline, default_action: o.action } } : c;
  let config: Config = withAction(loaded.config);
  const log = new Logger({
    level: o.logLevel ?? config.logging.level,
    format: o.format ?? config.logging.format,
    color: o.color,
  });
  for (const w of loaded.warnings) log.warn(w);
  const bus = new Bus();
  const store = o.store ? await openStoreMaybe(loaded.configDir, bus, log) : null;
  let rules = rulesFor(config, store);
  let rulesVersion = 1;
  // Built lazily: rules compile on the first message, and a fault there fails open with a scan_error.
  const hook = createPipeline({
    config: () => config,
    rules: () => rules,
    rulesVersion: () => rulesVersion,
    hmacKey: installationKey(loaded.configDir, (m) => log.warn(m)),
  }).hook;

  let modeCheckedAt = 0;
  let passthrough = config.proxy.mode === "passthrough";
  const isPassthrough = () => {
    const now = Date.now();
    if (store && now - modeCheckedAt > 1000) {
      modeCheckedAt = now;
      try {
        // `sluice serve` may switch the mode while this process runs.
        const m = store.readSetting("proxy.mode");
        passthrough = m ? m === "passthrough" : config.proxy.mode === "passthrough";
      } catch {
        /* keep the last known mode */
      }
    }
    return passthrough;
  };

  const tls = upstreamTls(config);
  const serverId = serverIdFor(mode, o.name);
  const baselines = baselinesFor(store, loaded.configDir);
  const poisonAction = (): Action =>
    o.action ?? (config.detectors.injection.action || config.pipeline.default_action);

  const newSession = (): McpSession => {
    const ctx = blankSession({
      session_id: `mcp-${crypto.randomUUID()}`,
      client: "mcp",
      working_directory: process.cwd(),
      os_platform: process.platform,
    });
    const reporter = new Reporter(bus, log, serverId, ctx);
    return new McpSession({
      serverId,
      config: () => config,
      hook,
      baselines,
      reporter,
      passthrough: isPassthrough,
      poisonAction,
      sessionBinding: o.sessionBinding,
      acceptDrift: o.acceptDrift,
    });
  };

  const modeName = mode.kind;
  const started = (session: McpSession): McpSession => {
    session.opts.reporter.event({
      kind: "session-start",
      severity: "info",
      message: `MCP session started (${modeName})`,
      mode: modeName,
    });
    return session;
  };
  const ended = (session: McpSession, code: number): number => {
    session.opts.reporter.event({
      kind: "session-end",
      severity: "info",
      message: `MCP session ended (${modeName}, exit ${code})`,
      mode: modeName,
      exit_code: code,
      client: session.clientName,
      server_name: session.serverName,
      blocked_tools: [...session.blockedTools.keys()],
    });
    return code;
  };

  const finish = async (code: number) => {
    try {
      await store?.flush();
      await store?.close();
    } catch {
      /* the store never decides the exit code */
    }
    return code;
  };

  switch (mode.kind) {
    case "stdio": {
      const filtered = filterEnv(process.env, {
        filter: o.envFilter && config.mcp.env_filter,
        allowlist: config.mcp.env_allowlist,
        extra: o.env,
      });
      const session = started(newSession());
      if (filtered.withheld.length)
        session.opts.reporter.event({
          kind: "env-filtered",
          severity: "info",
          message: `environment filter: ${filtered.withheld.length} variable(s) withheld from the MCP server`,
          withheld: filtered.withheld,
        });
      const r = await runStdio({ command: mode.command, env: filtered.env, session, log });
      return finish(ended(session, r.code));
    }
    case "http-bridge": {
      const session = started(newSession());
      return finish(
        ended(
          session,
          await runHttpBridge({ upstream: mode.upstream, session, log, headers: o.headers, tls }),
        ),
      );
    }
    case "ws-bridge": {
      const session = started(newSession());
      return finish(
        ended(session, await runWsBridge({ upstream: mode.upstream, session, log, headers: o.headers, tls })),
      );
    }
    case "reverse": {
      const server = startReverseProxy({
        host: mode.host,
        port: mode.port,
        upstream: mode.upstream,
        log,
        newSession,
        headers: o.headers,
        tls,
      });
      // A long-running listener reloads its configuration and rules on SIGHUP (one path: load, swap whole
      // or keep the old and say why).
      const reload = () => {
        try {
          const next = loadConfig({ configPath: o.configPath });
          config = withAction(next.config);
          rules = rulesFor(config, store);
          rulesVersion++;
          log.warn("configuration reloaded (SIGHUP)");
        } catch (err) {
          log.error(`configuration not reloaded, keeping the old one: ${(err as Error).message}`);
        }
      };
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
      return finish(0);
    }
  }
}

/**
 * Runs the plugins named in `extensions` (their interface: types.ts). Plugins are imported from their
 * files at start and again on every reload (a changed file is read afresh), in the compiled binary too.
 *
 * Where sluice calls them:
 * - around the request-scanning hook (`wrap`): `pre_request` and `evaluate` are awaited, since they
 *   decide; `post_scan`, `redact` and `rule_metrics` are told afterwards without holding the request;
 *   an `accelerator` prefilter may skip a scan;
 * - from the event bus: `request_trace` (each finished request), `open`, `finding_detected` and
 *   `close` (WebSocket tunnels), `config_reload`;
 * - when asked: `health` (`/health`), `metrics` (`/metrics`), `clients` (the client catalog).
 *
 * A hook that throws or does not answer within `extension_timeout_ms` is logged (once a minute per
 * plugin and hook) and counted, and sluice goes on as if it were absent: a plugin can add a block,
 * never break a request.
 */
import { statSync } from "node:fs";
import { basename, isAbsolute, resolve } from "node:path";
import type { Bus } from "../core/bus.ts";
import type { RequestHook, ScanRequest, Verdict } from "../core/hook.ts";
import type { Logger } from "../core/log.ts";
import { ACTIONS, type Action, type Finding, type RuleDef } from "../core/types.ts";
import { systemFinding } from "../policy/system-finding.ts";
import { loggablePath } from "../proxy/headers.ts";
import type { HookName, PayloadInfo, PluginClient, SluicePlugin } from "./types.ts";

interface Loaded {
  name: string;
  file: string;
  plugin: SluicePlugin;
}

export interface ExtensionHostDeps {
  log: Logger;
  bus: Bus;
  /** How long an awaited hook may take. */
  timeoutMs(): number;
  /** The enabled rules, for accelerators. */
  rules(): RuleDef[];
  rulesVersion(): number;
}

const TIMED_OUT = Symbol("timed out");
const FAULT_LOG_EVERY_MS = 60_000;

export class ExtensionHost {
  #plugins: Loaded[] = [];
  /** `plugin\0hook` → faults (throws and timeouts). */
  readonly faults = new Map<string, number>();
  #lastFaultLog = new Map<string, number>();
  #prefilters: { version: number; list: { p: Loaded; test: (text: string) => boolean }[] } | null = null;

  constructor(private deps: ExtensionHostDeps) {
    const { bus } = deps;
    bus.on("request", (e) => {
      this.#tell("request_trace", (p) =>
        p.request_trace?.({
          request_id: e.request_id,
          provider: e.provider,
          client: e.client,
          method: e.method,
          path: e.path,
          action: e.action,
          finding_count: e.finding_count,
          duration_ms: e.duration_ms,
          upstream_status: e.upstream_status,
          session_id: e.session_id,
        }),
      );
    });
    bus.on("ws-connection", (e) => {
      const ws = {
        connection_id: e.connection_id,
        provider: e.provider,
        target: e.target_url,
        session_id: e.session_id,
      };
      if (e.phase === "open") this.#tell("open", (p) => p.open?.(ws));
      else
        this.#tell("close", (p) =>
          p.close?.({
            ...ws,
            close_code: e.close_code,
            frames_in: e.frames_in,
            frames_out: e.frames_out,
            findings: e.findings,
            duration_ms: e.duration_ms,
          }),
        );
    });
    bus.on("finding", (e) => {
      if (e.transport !== "websocket") return;
      // A frame's request id is `<connection id>#<frame number>`.
      const [connection_id = "", frame] = e.request_id.split("#");
      this.#tell("finding_detected", (p) =>
        p.finding_detected?.({ connection_id, frame: Number(frame) || null }, e.finding),
      );
    });
    bus.on("config-reloaded", (e) => {
      if (e.source !== "startup") this.#tell("config_reload", (p) => p.config_reload?.(e.changes));
    });
  }

  /** Names of the plugins loaded. */
  get names(): string[] {
    return this.#plugins.map((p) => p.name);
  }

  /**
   * Import the plugins of `files` (relative to `baseDir`), replacing those loaded before. A file that
   * cannot be imported, or whose default export is not an object, is reported and left out.
   */
  async load(files: readonly string[], baseDir: string): Promise<string[]> {
    const problems: string[] = [];
    const next: Loaded[] = [];
    for (const f of files) {
      const file = isAbsolute(f) ? f : resolve(baseDir, f);
      try {
        // The file's modification time in the specifier: an edited plugin is imported afresh on reload.
        const mod = (await import(`${file}?mtime=${statSync(file).mtimeMs}`)) as { default?: unknown };
        const plugin = mod.default;
        if (!plugin || typeof plugin !== "object")
          throw new Error("its default export must be an object whose methods are hook names");
        const name =
          typeof (plugin as SluicePlugin).name === "string"
            ? (plugin as SluicePlugin).name!
            : basename(file).replace(/\.[^.]+$/, "");
        next.push({ name, file, plugin: plugin as SluicePlugin });
      } catch (e) {
        problems.push(`extension ${f}: ${(e as Error).message}`);
      }
    }
    this.#plugins = next;
    this.#prefilters = null;
    for (const p of problems) this.deps.log.error(p);
    if (next.length > 0) this.deps.log.info(`extensions loaded: ${next.map((p) => p.name).join(", ")}`);
    return problems;
  }

  /** The request-scanning hook with the plugins around it. */
  wrap(inner: () => RequestHook): RequestHook {
    return async (req) => {
      const plugins = this.#plugins;
      if (plugins.length === 0) return inner()(req);
      const info = payloadInfo(req);
      for (const p of plugins) {
        if (!p.plugin.pre_request) continue;
        const r = await this.#await(p, "pre_request", () => p.plugin.pre_request!(info, req.session));
        if (r && typeof r === "object" && typeof r.block === "string")
          return blockedBy(p.name, r.block, info);
      }
      if (this.#skipByPrefilter(req))
        return { action: "pass", findings: [], scanned_bytes: req.body.byteLength };
      let verdict = await inner()(req);
      for (const p of plugins) {
        if (!p.plugin.evaluate) continue;
        const outcome = { action: verdict.action, findings: verdict.findings };
        const chosen = await this.#await(p, "evaluate", () => p.plugin.evaluate!(info, outcome, req.session));
        verdict = this.#applyChoice(p, verdict, chosen);
      }
      const outcome = { action: verdict.action, findings: verdict.findings };
      this.#tell("post_scan", (p) => p.post_scan?.(info, outcome, { session: req.session }));
      if (verdict.action === "redact") {
        const replaced = verdict.findings.filter((f) => f.action === "redact");
        this.#tell("redact", (p) => p.redact?.(info, replaced));
      }
      if (verdict.findings.length > 0) {
        const hits: Record<string, number> = {};
        for (const f of verdict.findings) hits[f.rule] = (hits[f.rule] ?? 0) + 1;
        this.#tell("rule_metrics", (p) => p.rule_metrics?.(hits, info));
      }
      return verdict;
    };
  }

  /** `/health` fields of the plugins that have a health hook, by plugin name. */
  health(): Record<string, unknown> | null {
    if (this.#plugins.length === 0) return null;
    const out: Record<string, unknown> = {};
    for (const p of this.#plugins) {
      const h = p.plugin.health ? this.#sync(p, "health", () => p.plugin.health!()) : undefined;
      out[p.name] = h && typeof h === "object" ? h : { loaded: true };
    }
    return out;
  }

  /** The plugins' gauges and the fault counter, in Prometheus text. */
  metricsText(): string {
    const out: string[] = [];
    for (const p of this.#plugins) {
      const m = p.plugin.metrics ? this.#sync(p, "metrics", () => p.plugin.metrics!()) : undefined;
      if (!m || typeof m !== "object") continue;
      for (const [k, v] of Object.entries(m))
        if (typeof v === "number" && Number.isFinite(v))
          out.push(`sluice_extension_${metricName(p.name)}_${metricName(k)} ${v}`);
    }
    if (this.faults.size > 0) {
      out.push("# HELP sluice_extension_errors_total Extension hooks that threw or timed out.");
      out.push("# TYPE sluice_extension_errors_total counter");
      for (const [k, n] of [...this.faults].sort()) {
        const [plugin, hook] = k.split("\u0000");
        out.push(`sluice_extension_errors_total{plugin="${plugin}",hook="${hook}"} ${n}`);
      }
    }
    return out.length ? `${out.join("\n")}\n` : "";
  }

  /** Clients the plugins add to the catalog. */
  clients(): PluginClient[] {
    return this.#plugins.flatMap((p) => {
      const list = p.plugin.clients ? this.#sync(p, "clients", () => p.plugin.clients!()) : undefined;
      return Array.isArray(list)
        ? list.filter(
            (c) =>
              c &&
              typeof c.id === "string" &&
              typeof c.display_name === "string" &&
              typeof c.setup === "string",
          )
        : [];
    });
  }

  /** An `evaluate` answer applied: a known action changes the verdict; `redact` only where there is a redacted body. */
  #applyChoice(p: Loaded, verdict: Verdict, chosen: unknown): Verdict {
    if (chosen === undefined || chosen === null || chosen === verdict.action) return verdict;
    if (typeof chosen !== "string" || !(ACTIONS as readonly string[]).includes(chosen)) {
      this.#fault(p, "evaluate", `returned ${JSON.stringify(chosen)}, not an action`);
      return verdict;
    }
    if (chosen === "redact" && !verdict.body) return verdict;
    return { ...verdict, action: chosen as Action, body: chosen === "redact" ? verdict.body : undefined };
  }

  /** Whether every accelerator's prefilter says this body cannot match (then it is not scanned). */
  #skipByPrefilter(req: ScanRequest): boolean {
    const version = this.deps.rulesVersion();
    if (this.#prefilters?.version !== version) {
      const rules = this.deps
        .rules()
        .filter((r) => r.enabled)
        .map((r) => ({ name: r.name, pattern: r.pattern }));
      const list: { p: Loaded; test: (text: string) => boolean }[] = [];
      for (const p of this.#plugins) {
        if (!p.plugin.accelerator) continue;
        const test = this.#sync(p, "accelerator", () => p.plugin.accelerator!(rules));
        if (typeof test === "function") list.push({ p, test });
      }
      this.#prefilters = { version, list };
    }
    const list = this.#prefilters.list;
    if (list.length === 0) return false;
    const text = new TextDecoder().decode(req.body);
    return list.every(({ p, test }) => this.#sync(p, "accelerator", () => test(text)) === false);
  }

  /** Call an awaited hook within the timeout; undefined on a throw or timeout. */
  async #await<T>(p: Loaded, hook: HookName, fn: () => T | Promise<T>): Promise<T | undefined> {
    let result: T | Promise<T>;
    try {
      result = fn();
    } catch (e) {
      this.#fault(p, hook, (e as Error)?.message ?? String(e));
      return undefined;
    }
    if (!(result instanceof Promise)) return result;
    const ms = this.deps.timeoutMs();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<typeof TIMED_OUT>((r) => {
      timer = setTimeout(() => r(TIMED_OUT), ms);
    });
    try {
      const out = await Promise.race([result, late]);
      if (out === TIMED_OUT) {
        result.catch(() => {}); // it may still fail later: nobody is waiting for it
        this.#fault(p, hook, `did not answer within ${ms} ms`);
        return undefined;
      }
      return out;
    } catch (e) {
      this.#fault(p, hook, (e as Error)?.message ?? String(e));
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Tell every plugin that has the hook, without waiting for them. */
  #tell(hook: HookName, call: (p: SluicePlugin) => unknown): void {
    for (const p of this.#plugins) {
      if (typeof p.plugin[hook] !== "function") continue;
      void this.#await(p, hook, () => call(p.plugin));
    }
  }

  /** Call a hook that must answer at once; undefined on a throw. */
  #sync<T>(p: Loaded, hook: HookName, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (e) {
      this.#fault(p, hook, (e as Error)?.message ?? String(e));
      return undefined;
    }
  }

  #fault(p: Loaded, hook: HookName, message: string): void {
    const key = `${p.name}\u0000${hook}`;
    this.faults.set(key, (this.faults.get(key) ?? 0) + 1);
    const now = Date.now();
    if (now - (this.#lastFaultLog.get(key) ?? 0) >= FAULT_LOG_EVERY_MS) {
      this.#lastFaultLog.set(key, now);
      this.deps.log.warn(`extension ${p.name}: ${hook} failed, ignored: ${message.slice(0, 300)}`, {
        faults: this.faults.get(key),
      });
    }
  }
}

function payloadInfo(req: ScanRequest): PayloadInfo {
  const q = req.path.indexOf("?");
  return {
    request_id: req.id ?? "",
    provider: req.provider,
    transport: req.transport,
    method: req.method,
    path: q < 0 ? req.path : loggablePath(req.path.slice(0, q), req.path.slice(q)),
    size: req.body.byteLength,
  };
}

/** The verdict of a payload a plugin refused before scanning. */
function blockedBy(plugin: string, reason: string, info: PayloadInfo): Verdict {
  const finding: Finding = {
    ...systemFinding(
      "extension_block",
      info.path || "(body)",
      `blocked by extension ${plugin}: ${reason.slice(0, 300)}`,
    ),
    action: "block",
  };
  return { action: "block", findings: [finding], scanned_bytes: 0 };
}

/** A Prometheus metric name part: letters, digits and underscores. */
function metricName(s: string): string {
  return s.replace(/[^A-Za-z0-9_]/g, "_");
}

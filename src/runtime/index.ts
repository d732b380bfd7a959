/**
 * The running `sluice serve`: loads the configuration, opens the store, builds the payload pipeline,
 * starts the proxy and the dashboard, and owns the lifecycle: reload (SIGHUP or API) swaps the whole
 * configuration or keeps the old one, and shutdown drains in six steps (see `shutdown`).
 *
 * Longer than most files: this is the one place where the parts meet, and each part of the
 * lifecycle (start, reload, a mode switch, the six steps of shutdown) touches several of them in an
 * order that matters; the parts themselves live in their folders.
 *
 * @example
 * const rt = await startRuntime({ port: 0, dashboardPort: 0 });
 * // … later
 * await rt.shutdown("SIGTERM");
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Document, parseDocument } from "yaml";
import pkg from "../../package.json" with { type: "json" };
import {
  ConfigError,
  configDir as defaultConfigDir,
  diffConfig,
  type LoadedConfig,
  listenerClash,
  loadConfig,
  type UpstreamTls,
  upstreamTls,
} from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { STANDALONE, VERSION } from "../core/build-info.ts";
import { Bus } from "../core/bus.ts";
import type { RequestHook } from "../core/hook.ts";
import { type Level, Logger } from "../core/log.ts";
import { blankSession, type RuleDef } from "../core/types.ts";
import { type DashboardHandle, startDashboard } from "../dashboard/index.ts";
import { loadBuiltinRules } from "../detect/builtin.ts";
import { ExtensionHost } from "../extensions/host.ts";
import { Metrics } from "../metrics/index.ts";
import { loadOrCreateNotifyKey, secretBox } from "../notify/secret-box.ts";
import { Notifications } from "../notify/service.ts";
import { installationKey } from "../policy/hmac-key.ts";
import { contentHash } from "../policy/mask.ts";
import { createPipeline, type Pipeline } from "../policy/pipeline.ts";
import { systemFinding } from "../policy/system-finding.ts";
import { HostPool } from "../proxy/pool.ts";
import { Relay } from "../proxy/relay.ts";
import { ProxyServer } from "../proxy/server.ts";
import { WARM_UP_TURNS, warmUp } from "../proxy/warm-up.ts";
import { openStore, type Store } from "../store/index.ts";
import { startTracing, type Tracing } from "../tracing/index.ts";
import type { ProxyMode, ReloadResult, Runtime } from "./contract.ts";

export { ConfigError };

export const versionLabel = (): string => (STANDALONE ? VERSION : `${pkg.version}-dev`);

export interface StartOptions {
  /** `--config`: the global config file (must exist). Default `{config_dir}/config.yaml`. */
  configPath?: string;
  /** Where `.sluice.yaml` is looked for; default the working directory; null disables. */
  projectDir?: string | null;
  env?: Record<string, string | undefined>;
  /** `--port` (0 = any free port). Overrides the config. */
  port?: number;
  /** `--dashboard-port` (0 = any free port). */
  dashboardPort?: number;
  /** `--log-dir`: audit log directory. */
  logDir?: string;
  format?: "text" | "json";
  color?: boolean;
  logLevel?: Level;
  noDefaultRules?: boolean;
  /**
   * `--engine-port` (combined split mode): the scanning proxy listens on this port as the engine and a
   * relay takes the proxy port, applying `--fail-mode` (default relay.fail_mode) while the engine is down.
   */
  enginePort?: number;
  failMode?: "open" | "closed";
  /** Replace the pipeline's hook (unit-level tests only). */
  hook?: RequestHook;
  /** Write the application log to stderr (default true). */
  stderr?: boolean;
  /** Install SIGINT/SIGTERM/SIGHUP handlers (default false; `sluice serve` sets it). */
  installSignals?: boolean;
  /** Print the "listening" lines to stdout (default true). */
  printBanner?: boolean;
}

export class SluiceRuntime implements Runtime {
  readonly bus = new Bus();
  #notifications: Notifications | null = null;
  readonly log: Logger;
  readonly startedAt = new Date();
  readonly version = versionLabel();
  readonly metrics = new Metrics();
  readonly configDir: string;
  readonly store: Store;
  readonly proxy: ProxyServer;
  #config: Config;
  #files: string[];
  #mode: ProxyMode;
  #rules: RuleDef[] = [];
  #rulesVersion = 0;
  #rulesStale = true;
  #tls: UpstreamTls;
  #pool: HostPool;
  #hook: RequestHook;
  /** The scanning pipeline (the hook unless an embedder gave its own). */
  readonly #pipeline: Pipeline;
  /** The start's warm-up of the request path (warm-up.ts): not run, running, or over. */
  #warmUp: "off" | "running" | "done" = "off";
  #warmedUp: Promise<void> = Promise.resolve();
  readonly #warmUpAbort = new AbortController();
  /** The plugins of `extensions`, around the hook and on the bus. */
  readonly extensions: ExtensionHost;
  #tracing: Tracing | null = null;
  #tracingGeneration = 0;
  #dashboard: DashboardHandle | null = null;
  /** The relay of combined split mode (`--engine-port`), in front of the proxy. */
  #relay: Relay | null = null;
  #reloading: Promise<unknown> = Promise.resolve();
  #shuttingDown: Promise<string> | null = null;
  #signalHandlers: [NodeJS.Signals, () => void][] = [];
  /** The installation key every stored hash of a value is keyed with. */
  readonly #hmacKey: Uint8Array;

  private constructor(
    readonly opts: StartOptions,
    loaded: LoadedConfig,
  ) {
    this.configDir = loaded.configDir;
    this.#config = this.#withOverrides(loaded.config);
    this.#files = loaded.files;
    const lc = this.#config.logging;
    this.log = new Logger({
      level: opts.logLevel ?? lc.level,
      format: opts.format ?? lc.format,
      color: opts.color,
      file: join(this.configDir, "logs", "sluice.log"),
      maxFileBytes: lc.max_file_bytes,
      maxFiles: lc.max_files,
      stderr: opts.stderr ?? true,
    });
    this.bus.onListenerError = (event, err) =>
      this.log.error(`listener for ${event} failed: ${(err as Error)?.message ?? err}`);
    for (const w of loaded.warnings) this.log.warn(w);
    this.#hmacKey = installationKey(this.configDir, (m) => this.log.error(m));
    this.store = openStore({
      configDir: this.configDir,
      hmacKey: this.#hmacKey,
      bus: this.bus,
      log: this.log,
      auditDir: opts.logDir ? resolve(opts.logDir) : (this.#config.logging.dir ?? undefined),
      config: () => this.#config,
    });
    this.metrics.audit = () => this.store.auditStats();
    this.#tls = upstreamTls(this.#config);
    this.#pool = new HostPool(
      this.#config.proxy.max_connections,
      this.#config.proxy.timeout * 2000,
      this.log,
      {
        reuseStreams: this.#config.proxy.reuse_stream_connections,
        warmConnections: this.#config.proxy.warm_connections,
        http2: this.#config.proxy.upstream_http2,
        tls: () => this.#tls,
      },
    );
    this.#pool.startSweeper();
    const stored = this.store.getSetting("proxy.mode");
    this.#mode = stored === "active" || stored === "passthrough" ? stored : this.#config.proxy.mode;
    const hmacKey = this.#hmacKey;
    const pipeline = createPipeline({
      config: () => this.#config,
      rules: () => this.rules(),
      rulesVersion: () => this.rulesVersion(),
      hmacKey,
    });
    this.#pipeline = pipeline;
    this.#hook = opts.hook ?? pipeline.hook;
    this.extensions = new ExtensionHost({
      log: this.log,
      bus: this.bus,
      timeoutMs: () => this.#config.extension_timeout_ms,
      rules: () => this.rules(),
      rulesVersion: () => this.rulesVersion(),
    });
    this.metrics.extensions = () => this.extensions.metricsText();
    const hooked = this.extensions.wrap(() => this.#hook);
    this.proxy = new ProxyServer({
      config: () => this.#config,
      dashboardUrl: () => {
        const d = this.dashboardAddress();
        return d ? `http://${d.host.includes(":") ? `[${d.host}]` : d.host}:${d.port}` : null;
      },
      mode: () => this.#mode,
      hook: () => hooked,
      bus: this.bus,
      log: this.log,
      metrics: this.metrics,
      tls: () => this.#tls,
      pool: () => this.#pool,
      hmacKey,
      health: () => {
        const extensions = this.extensions.health();
        return {
          status: "ok",
          version: this.version,
          uptime: (Date.now() - this.startedAt.getTime()) / 1000,
          requests: this.metrics.totalRequests,
          warm_up: this.#warmUp,
          ...(extensions ? { extensions } : {}),
        };
      },
      tracing: () => this.#tracing,
      quiet: () => this.store.writeNow(),
    });
  }

  /** Load the configuration and start everything. Throws ConfigError for a configuration problem. */
  static async start(opts: StartOptions = {}): Promise<SluiceRuntime> {
    const loaded = loadConfig({ configPath: opts.configPath, projectDir: opts.projectDir, env: opts.env });
    const rt = new SluiceRuntime(opts, loaded);
    await rt.#startup();
    return rt;
  }

  async #startup(): Promise<void> {
    const cfg = this.#config;
    const clash = listenerClash(cfg, { combined: this.opts.enginePort !== undefined });
    if (clash) throw new ConfigError(clash);
    this.#tracing = await this.#startTracing(cfg);
    await this.extensions.load(cfg.extensions, this.configDir);
    const useDefaults = !this.opts.noDefaultRules && cfg.rules.auto_import;
    try {
      if (useDefaults) {
        const n = this.store.importDefaultRules(loadBuiltinRules());
        if (n > 0) this.log.info(`imported ${n} community rules`);
      }
      this.store.reconcileConfigRules(cfg.custom_rules);
    } catch (e) {
      this.log.error(`rule import failed: ${(e as Error).message}`);
    }
    this.store.onRulesChanged(() => this.rulesChanged());
    this.rulesChanged();
    const combined = this.opts.enginePort !== undefined;
    if (this.opts.failMode && !combined)
      this.log.warn("--fail-mode only applies with --engine-port; ignored");
    const server = this.proxy.listen(cfg.bind, combined ? cfg.engine.port : cfg.port);
    if (combined) {
      const engineUrl = `http://${cfg.bind.includes(":") ? `[${cfg.bind}]` : cfg.bind}:${server.port}`;
      this.#relay = new Relay({
        config: () => this.#config,
        log: this.log,
        tls: () => this.#tls,
        pool: () => this.#pool,
        engineUrl: () => engineUrl,
        failMode: () => this.#config.relay.fail_mode, // --fail-mode is in it already (#withOverrides)
      });
      this.#relay.listen(cfg.bind, cfg.port);
    }
    if (cfg.dashboard.enabled) {
      try {
        this.#dashboard = await startDashboard(this, this.store, {
          port: cfg.dashboard.port,
          hostname: cfg.bind,
        });
      } catch (e) {
        this.log.error(
          `dashboard failed to start on ${cfg.bind}:${cfg.dashboard.port}: ${(e as Error).message}`,
        );
      }
    }
    this.#startNotifications();
    // Signals before the banner: whoever reads "listening" may signal at once.
    if (this.opts.installSignals) this.#installSignals();
    if (this.opts.printBanner !== false) {
      const d = this.dashboardAddress();
      if (d) console.log(`sluice: dashboard on http://${d.host}:${d.port}`);
      if (this.#relay) {
        console.log(`sluice: engine listening on http://${cfg.bind}:${server.port}`);
        console.log(
          `sluice: proxy listening on http://${cfg.bind}:${this.#relay.server!.port} (relay, fail_mode ${this.#relay.opts.failMode})`,
        );
      } else console.log(`sluice: proxy listening on http://${cfg.bind}:${server.port}`);
      if (this.#mode === "passthrough") console.log("sluice: mode passthrough (requests are NOT scanned)");
    }
    this.#warmUpstreams();
    this.#warmRequestPath();
    this.log.info(`sluice ${this.version} started`, {
      proxy: `${cfg.bind}:${server.port}`,
      mode: this.#mode,
      config: this.#files.join(",") || "(defaults)",
    });
    this.bus.emit("config-reloaded", { changes: [], source: "startup" });
  }

  notifications(): Notifications | null {
    return this.#notifications;
  }

  /** Settles when the start's warm-up of the request path is over (at once when none runs). */
  warmedUp(): Promise<void> {
    return this.#warmedUp;
  }

  /**
   * Synthetic turns through the request path, in the background (warm-up.ts); not with
   * `proxy.warm_up: false` or an embedder's own hook (the warm-up scans only with sluice's pipeline).
   */
  #warmRequestPath(): void {
    if (!this.#config.proxy.warm_up || this.opts.hook) return;
    this.#warmUp = "running";
    const started = performance.now();
    const deps = { hook: this.#pipeline.hook, forget: this.#pipeline.forget, hmacKey: this.#hmacKey };
    this.#warmedUp = warmUp(deps, WARM_UP_TURNS, this.#warmUpAbort.signal).then(
      (r) => {
        this.#warmUp = "done";
        const ms = Math.round(performance.now() - started);
        if (r.stopped && r.stopped !== "aborted")
          this.log.info(
            `the start-up warm-up stopped after ${r.turns} synthetic turns: rule ${r.stopped} matched its made-up text (nothing was recorded)`,
          );
        else this.log.debug(`warmed up the request path: ${r.turns} synthetic turns in ${ms} ms`);
      },
      (e) => {
        this.#warmUp = "done";
        this.log.warn(`the warm-up failed: ${(e as Error).message}`);
      },
    );
  }

  /** Notification channels listen on the bus; sending runs on their own queues, never on a request. */
  #startNotifications(): void {
    const d = this.dashboardAddress();
    const url = d ? `http://${d.host.includes(":") ? `[${d.host}]` : d.host}:${d.port}` : "";
    let box: ReturnType<typeof secretBox> | null = null;
    this.#notifications = new Notifications({
      bus: this.bus,
      log: this.log,
      dashboardUrl: url,
      configChannels: () => this.#config.notifications.channels,
      repo: this.store.notifyChannels,
      box: () => (box ??= secretBox(loadOrCreateNotifyKey(this.configDir))),
    });
  }

  /**
   * Open a connection to each provider's upstream that saw traffic in the last week, so that the
   * first turn after a restart does not pay for TCP and TLS (`proxy.warm_connections`, see pool.ts).
   */
  #warmUpstreams(): void {
    const cfg = this.#config;
    if (!cfg.proxy.warm_connections) return;
    for (const [provider, { upstream }] of Object.entries(cfg.providers)) {
      let seen = false;
      try {
        seen = this.store.audit.list({ provider, days: 7 }, 1, 0).total > 0;
      } catch (e) {
        this.log.warn(`cannot read recent traffic for ${provider}: ${(e as Error).message}`);
      }
      if (seen) void this.#pool.warm(upstream);
    }
  }

  #withOverrides(config: Config): Config {
    const c = structuredClone(config);
    if (this.opts.port !== undefined) c.port = this.opts.port;
    if (this.opts.dashboardPort !== undefined) c.dashboard.port = this.opts.dashboardPort;
    if (this.opts.logLevel) c.logging.level = this.opts.logLevel;
    if (this.opts.format) c.logging.format = this.opts.format;
    if (this.opts.logDir) c.logging.dir = resolve(this.opts.logDir);
    if (this.opts.enginePort !== undefined) c.engine.port = this.opts.enginePort;
    if (this.opts.failMode) c.relay.fail_mode = this.opts.failMode;
    return c;
  }

  config(): Config {
    return this.#config;
  }
  contentHash(value: string): string {
    return contentHash(value, this.#hmacKey);
  }

  mode(): ProxyMode {
    return this.#mode;
  }

  setMode(mode: ProxyMode, source: string): void {
    const previous = this.#mode;
    if (previous === mode) return;
    this.#mode = mode;
    try {
      this.store.setSetting("proxy.mode", mode);
    } catch (e) {
      this.log.error(`cannot persist proxy.mode: ${(e as Error).message}`);
    }
    this.log.warn(`proxy mode ${previous} -> ${mode} (by ${source})`);
    this.bus.emit("mode-changed", { mode, previous });
    if (mode === "passthrough") {
      const finding = systemFinding(
        "mode_changed",
        "proxy.mode",
        `proxy switched from ${previous} to passthrough by ${source}: requests are no longer scanned`,
        // Every switch is its own finding, not a repeat of the last one.
        `${Date.now()}:${source}`,
      );
      this.metrics.countFinding("mode_changed");
      this.bus.emit("finding", {
        finding,
        session: blankSession({
          session_id: "system",
          client: "sluice",
          client_name: "sluice",
          os_platform: process.platform,
        }),
        provider: "unknown",
        request_id: `mode-${Date.now()}`,
        transport: "system",
      });
    }
  }

  /** The global config file reloads and API patches write to. */
  configFile(): string {
    return this.opts.configPath ? resolve(this.opts.configPath) : join(this.configDir, "config.yaml");
  }

  reload(
    patch?: Record<string, unknown>,
    source: "sighup" | "api" = patch ? "api" : "sighup",
  ): Promise<ReloadResult> {
    const run = this.#reloading.then(() => this.#reload(patch, source));
    this.#reloading = run.catch(() => {});
    return run;
  }

  async #reload(patch: Record<string, unknown> | undefined, source: "sighup" | "api"): Promise<ReloadResult> {
    const file = this.configFile();
    let loaded: LoadedConfig;
    let tmp: string | null = null;
    try {
      if (patch && Object.keys(patch).length > 0) {
        const text = existsSync(file) ? readFileSync(file, "utf8") : "";
        const doc = text.trim() ? parseDocument(text) : new Document({});
        if (doc.errors.length > 0) throw new ConfigError(`${file}: invalid YAML: ${doc.errors[0]!.message}`);
        for (const [key, value] of Object.entries(patch)) doc.setIn(key.split("."), value);
        tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, doc.toString(), { mode: 0o600 });
        loaded = loadConfig({ configPath: tmp, projectDir: this.opts.projectDir, env: this.opts.env });
        loaded.warnings = loaded.warnings.map((w) => w.replaceAll(tmp!, file));
      } else {
        loaded = loadConfig({
          configPath: this.opts.configPath,
          projectDir: this.opts.projectDir,
          env: this.opts.env,
        });
      }
      const clash = listenerClash(this.#withOverrides(loaded.config), { combined: this.#relay !== null });
      if (clash) throw new ConfigError(clash);
    } catch (e) {
      if (tmp) rmSync(tmp, { force: true });
      const msg = e instanceof ConfigError ? e.message.replaceAll(tmp ?? "\0", file) : String(e);
      this.log.error(`config reload (${source}) refused, keeping the old configuration: ${msg}`);
      return { ok: false, changes: [], error: msg, warnings: [] };
    }
    if (tmp) renameSync(tmp, file);
    const next = this.#withOverrides(loaded.config);
    const prev = this.#config;
    const changes = diffConfig(prev, next);
    for (const w of loaded.warnings) this.log.warn(w);
    this.#config = next;
    this.#files = loaded.files;
    this.#apply(prev, next);
    // A reload is rare and its diff matters: shown at the default log level.
    this.log.warn(`config reloaded (${source}): ${changes.length ? changes.join("; ") : "no changes"}`);
    if (
      patch &&
      "proxy.mode" in patch &&
      (patch["proxy.mode"] === "active" || patch["proxy.mode"] === "passthrough")
    )
      this.setMode(patch["proxy.mode"], source === "api" ? "api" : "config");
    else if (prev.proxy.mode !== next.proxy.mode) this.setMode(next.proxy.mode, "config file");
    this.bus.emit("config-reloaded", { changes, source });
    return { ok: true, changes, warnings: loaded.warnings };
  }

  /** Tracing per `cfg`; a tracing setup that fails is logged and leaves tracing off. */
  async #startTracing(cfg: Config): Promise<Tracing | null> {
    try {
      return await startTracing(cfg, this.log, this.opts.env ?? process.env);
    } catch (e) {
      this.log.error(`tracing could not start, continuing without it: ${(e as Error).message}`);
      return null;
    }
  }

  /** Make a swapped-in configuration take effect. */
  #apply(prev: Config, next: Config): void {
    this.log.level = next.logging.level;
    this.log.format = next.logging.format;
    this.#notifications?.refresh();
    // Plugins are imported again on every reload, so that an edited plugin file takes effect.
    void this.extensions.load(next.extensions, this.configDir);
    if (JSON.stringify(prev.tracing) !== JSON.stringify(next.tracing)) {
      // Spans already made are exported by the old exporter while the new one starts.
      const old = this.#tracing;
      this.#tracing = null;
      void old?.shutdown();
      const generation = ++this.#tracingGeneration;
      void this.#startTracing(next).then((t) => {
        if (generation === this.#tracingGeneration) this.#tracing = t;
        else void t?.shutdown(); // a later reload started its own
      });
    }
    if (prev.proxy.ca_bundle !== next.proxy.ca_bundle || prev.proxy.verify_ssl !== next.proxy.verify_ssl) {
      try {
        this.#tls = upstreamTls(next);
      } catch (e) {
        this.log.error(`cannot rebuild the upstream TLS context: ${(e as Error).message}`);
      }
    }
    this.#pool.idleEvictMs = next.proxy.timeout * 2000;
    this.#pool.reuseStreams = next.proxy.reuse_stream_connections;
    this.#pool.warmConnections = next.proxy.warm_connections;
    this.#pool.http2 = next.proxy.upstream_http2;
    if (prev.proxy.max_connections !== next.proxy.max_connections)
      this.log.warn("proxy.max_connections takes effect at the next restart");
    if (JSON.stringify(prev.custom_rules) !== JSON.stringify(next.custom_rules)) {
      try {
        this.store.reconcileConfigRules(next.custom_rules);
      } catch (e) {
        this.log.error(`custom_rules reconcile failed: ${(e as Error).message}`);
      }
      this.rulesChanged();
    }
    if (this.#relay && (prev.port !== next.port || prev.bind !== next.bind)) {
      this.log.warn("port and bind take effect at the next restart in combined split mode");
      this.#config = { ...next, port: prev.port, bind: prev.bind };
    } else if (prev.port !== next.port || prev.bind !== next.bind) {
      try {
        const s = this.proxy.rebind(next.bind, next.port);
        this.log.warn(
          `proxy moved to ${next.bind}:${s.port}; requests in flight on the old address finish there`,
        );
        if (this.opts.printBanner !== false)
          console.log(`sluice: proxy listening on http://${next.bind}:${s.port}`);
      } catch (e) {
        this.log.error(
          `cannot listen on ${next.bind}:${next.port}: ${(e as Error).message}; staying where we are`,
        );
        this.#config = { ...next, port: prev.port, bind: prev.bind };
      }
    }
    if (prev.dashboard.port !== next.dashboard.port || prev.dashboard.enabled !== next.dashboard.enabled)
      this.log.warn("dashboard.port and dashboard.enabled take effect at the next restart");
  }

  rules(): RuleDef[] {
    if (this.#rulesStale) {
      this.#rulesStale = false;
      try {
        this.#rules = this.store.enabledRules();
      } catch (e) {
        this.log.error(`cannot read the rules: ${(e as Error).message}`);
      }
    }
    return this.#rules;
  }
  rulesVersion(): number {
    return this.#rulesVersion;
  }
  rulesChanged(): void {
    this.#rulesStale = true;
    this.#rulesVersion++;
  }

  stats() {
    return {
      requests: this.metrics.totalRequests,
      active_requests: this.proxy.activeRequests,
      findings: this.metrics.totalFindings,
      by_action: Object.fromEntries(this.metrics.requestsByAction),
    };
  }

  /** The upstream connection pool (slots, reuse, warm connections). */
  get pool(): HostPool {
    return this.#pool;
  }

  extensionClients() {
    return this.extensions.clients();
  }

  proxyAddress(): { host: string; port: number } {
    const port = this.#relay?.server?.port ?? this.proxy.server?.port ?? this.#config.port;
    return { host: this.#config.bind, port };
  }

  dashboardAddress(): { host: string; port: number } | null {
    return this.#dashboard ? { host: this.#config.bind, port: this.#dashboard.port } : null;
  }

  #installSignals(): void {
    const onStop = (sig: NodeJS.Signals) => () => {
      if (this.#shuttingDown) {
        process.stderr.write(`sluice: second ${sig}, exiting now\n`);
        process.exit(130);
      }
      void this.shutdown(sig).then(() => process.exit(0));
    };
    const onHup = () => void this.reload(undefined, "sighup");
    for (const [sig, fn] of [
      ["SIGINT", onStop("SIGINT")],
      ["SIGTERM", onStop("SIGTERM")],
      ["SIGHUP", onHup],
    ] as [NodeJS.Signals, () => void][]) {
      process.on(sig, fn);
      this.#signalHandlers.push([sig, fn]);
    }
  }

  /**
   * Shutdown in six steps, so that nothing in flight is lost: stop accepting; drain up to
   * `proxy.drain_timeout`; force-close what is left (with a warning); close the pool; flush and close
   * the store and audit logs; print the session summary (returned too).
   */
  shutdown(reason: string): Promise<string> {
    if (!this.#shuttingDown) this.#shuttingDown = this.#shutdown(reason);
    return this.#shuttingDown;
  }

  async #shutdown(reason: string): Promise<string> {
    this.log.info(`shutting down (${reason})`);
    this.#warmUpAbort.abort();
    const relayStopped = this.#relay?.stop(); // 1 (the relay stops accepting and drains with the engine)
    this.proxy.stopAccepting(); // 1
    const active = this.proxy.activeRequests;
    if (active > 0 && this.opts.printBanner !== false)
      console.log(
        `sluice: draining ${active} request(s) in flight (up to ${this.#config.proxy.drain_timeout} s)`,
      );
    const left = await this.proxy.drain(this.#config.proxy.drain_timeout * 1000); // 2
    if (left > 0) this.log.warn(`drain timeout: force-closing ${left} request(s) still in flight`); // 3
    await this.proxy.forceClose();
    if (relayStopped) {
      let t: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([relayStopped, new Promise((r) => (t = setTimeout(r, 1000)))]);
      clearTimeout(t);
      await this.#relay?.server?.stop(true);
    }
    this.#pool.close(); // 4
    await this.#tracing?.shutdown();
    try {
      this.#notifications?.stop();
      await this.#dashboard?.stop();
    } catch (e) {
      this.log.error(`dashboard stop failed: ${(e as Error).message}`);
    }
    try {
      await this.store.flush(); // 5
      await this.store.close();
    } catch (e) {
      this.log.error(`store close failed: ${(e as Error).message}`);
    }
    for (const [sig, fn] of this.#signalHandlers) process.off(sig, fn);
    this.#signalHandlers = [];
    const summary = this.summary(); // 6
    if (this.opts.printBanner !== false) console.log(summary);
    return summary;
  }

  /** The session summary printed at shutdown. */
  summary(): string {
    const m = this.metrics;
    const secs = Math.round((Date.now() - this.startedAt.getTime()) / 1000);
    const actions = [...m.requestsByAction]
      .filter(([, n]) => n > 0)
      .map(([a, n]) => `${a} ${n}`)
      .join(", ");
    const providers = [...m.requestsByProvider]
      .filter(([, n]) => n > 0)
      .map(([p, n]) => `${p} ${n}`)
      .join(", ");
    const findings = [...m.findingsByType]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([t, n]) => `${t} ${n}`)
      .join(", ");
    return [
      `sluice: session summary (up ${secs} s)`,
      `  requests: ${m.totalRequests}${actions ? ` (${actions})` : ""}`,
      `  providers: ${providers || "none"}`,
      `  findings: ${m.totalFindings}${findings ? ` (${findings})` : ""}`,
      ...this.#auditSummary(),
    ].join("\n");
  }

  /** A summary line when the audit trail lost lines (the log says when and why). */
  #auditSummary(): string[] {
    const a = this.store.auditStats();
    if (a.errors === 0) return [];
    const last = a.last_error ? ` (last: ${a.last_error})` : "";
    return a.dropped > 0
      ? [`  audit trail: ${a.dropped} line(s) lost, ${a.errors} failed write(s)${last}`]
      : [`  audit trail: ${a.errors} failed write(s), every line written in the end${last}`];
  }
}

export function startRuntime(opts: StartOptions = {}): Promise<SluiceRuntime> {
  return SluiceRuntime.start(opts);
}

export { defaultConfigDir };

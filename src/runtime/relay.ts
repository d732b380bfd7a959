/**
 * `sluice relay` as a running process: loads the configuration, starts the split-mode relay
 * (src/proxy/relay.ts) on the proxy port, reloads on SIGHUP, stops on SIGINT/SIGTERM.
 *
 * @example
 * const r = await startRelay({ port: 0, engineUrl: "http://127.0.0.1:8090", failMode: "open" });
 * await r.stop();
 */
import { ConfigError, diffConfig, loadConfig, upstreamTls } from "../config/load.ts";
import { type Level, Logger } from "../core/log.ts";
import { HostPool } from "../proxy/pool.ts";
import { Relay } from "../proxy/relay.ts";

export { ConfigError };

export interface RelayStartOptions {
  configPath?: string;
  projectDir?: string | null;
  env?: Record<string, string | undefined>;
  /** `--port` (0 = any free port); default relay.port. */
  port?: number;
  /** `--engine`; default relay.engine_url. */
  engineUrl?: string;
  /** `--fail-mode`; default relay.fail_mode. */
  failMode?: "open" | "closed";
  logLevel?: Level;
  format?: "text" | "json";
  color?: boolean;
  stderr?: boolean;
  installSignals?: boolean;
  printBanner?: boolean;
}

export interface RelayHandle {
  relay: Relay;
  url: string;
  log: Logger;
  reload(): { ok: boolean; error?: string };
  stop(): Promise<void>;
}

export async function startRelay(opts: RelayStartOptions = {}): Promise<RelayHandle> {
  const load = () => {
    const loaded = loadConfig({ configPath: opts.configPath, projectDir: opts.projectDir, env: opts.env });
    const c = loaded.config;
    if (opts.engineUrl) c.relay.engine_url = opts.engineUrl;
    if (opts.failMode) c.relay.fail_mode = opts.failMode;
    if (opts.port !== undefined) c.relay.port = opts.port;
    return loaded;
  };
  const loaded = load();
  let config = loaded.config;
  const log = new Logger({
    level: opts.logLevel ?? config.logging.level,
    format: opts.format ?? config.logging.format,
    color: opts.color,
    stderr: opts.stderr ?? true,
  });
  for (const w of loaded.warnings) log.warn(w);
  let tls = upstreamTls(config);
  const pool = new HostPool(config.proxy.max_connections, config.proxy.timeout * 2000, log, {
    reuseStreams: config.proxy.reuse_stream_connections,
    http2: config.proxy.upstream_http2,
    tls: () => tls,
  });
  pool.startSweeper();
  const relay = new Relay({
    config: () => config,
    log,
    tls: () => tls,
    pool: () => pool,
    engineUrl: () => config.relay.engine_url,
    failMode: () => config.relay.fail_mode,
  });
  const server = relay.listen(config.bind, config.relay.port);
  const url = `http://${config.bind}:${server.port}`;
  const reload = () => {
    try {
      const next = load();
      const nextTls = upstreamTls(next.config); // may throw: then nothing is swapped
      const changes = diffConfig(config, next.config);
      config = next.config;
      tls = nextTls;
      pool.reuseStreams = config.proxy.reuse_stream_connections;
      pool.http2 = config.proxy.upstream_http2;
      log.warn(`config reloaded (sighup): ${changes.length ? changes.join("; ") : "no changes"}`);
      return { ok: true };
    } catch (e) {
      const error = e instanceof ConfigError ? e.message : String(e);
      log.error(`config reload (sighup) refused, keeping the old configuration: ${error}`);
      return { ok: false, error };
    }
  };
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      await relay.stop();
      pool.close();
    })();
    return stopping;
  };
  if (opts.installSignals) {
    const onStop = (sig: string) => () => {
      if (stopping) {
        process.stderr.write(`sluice: second ${sig}, exiting now\n`);
        process.exit(130);
      }
      void stop().then(() => process.exit(0));
    };
    process.on("SIGINT", onStop("SIGINT"));
    process.on("SIGTERM", onStop("SIGTERM"));
    process.on("SIGHUP", () => void reload());
  }
  if (opts.printBanner !== false) {
    console.log(`sluice: relay to engine ${config.relay.engine_url} (fail_mode ${config.relay.fail_mode})`);
    console.log(`sluice: proxy listening on ${url}`);
  }
  return { relay, url, log, reload, stop };
}

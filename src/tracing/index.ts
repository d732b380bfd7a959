/**
 * Tracing of proxied requests, exported over OTLP/HTTP when `tracing.enabled` is set. One span per
 * request (`sluice.request`) with `provider`, `body.size`, `findings.count`, `action` and
 * `scan.duration_ms`; child spans for the scan and the upstream exchange; a client's W3C
 * `traceparent` makes the request span its child and is passed upstream as the upstream span's.
 *
 * Off by default, and then nothing is loaded: the proxy holds `null` and skips every call. The
 * OpenTelemetry SDK (`otel.ts`) is imported only when tracing is turned on.
 */
import type { Config } from "../config/schema.ts";
import type { Logger } from "../core/log.ts";

/** What the proxy tells the trace of one request. */
export interface RequestTrace {
  /** The scan ran from `start` to `end` (`performance.now()` times). */
  scanned(start: number, end: number): void;
  /**
   * The upstream exchange starts: the headers to send gain the upstream span's `traceparent` when the
   * client sent one. Returns the function that ends the exchange.
   */
  upstream(headers: Headers, host: string): (status: number | null, error: string | null) => void;
  /** The request is over (answered or blocked). */
  end(result: RequestResult): void;
}

export interface RequestResult {
  provider: string;
  bodySize: number;
  findings: number;
  action: string;
  scanMs: number;
  status: number | null;
  error: string | null;
}

export interface RequestStart {
  method: string;
  /** The path as sluice logs it (query values masked). */
  path: string;
  requestId: string;
  headers: Headers;
  /** `performance.now()` when the request arrived. */
  start: number;
}

export interface Tracing {
  request(start: RequestStart): RequestTrace;
  /** Export what is queued and stop. */
  shutdown(): Promise<void>;
}

/** Where spans go: `tracing.endpoint`, else the standard OTLP environment variables, else the default collector. */
export function tracesEndpoint(
  config: Config,
  env: Record<string, string | undefined> = process.env,
): string {
  if (config.tracing.endpoint) return config.tracing.endpoint;
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT)
    return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces`;
  return "http://127.0.0.1:4318/v1/traces";
}

/** Tracing per the configuration, or null when it is off. */
export async function startTracing(
  config: Config,
  log: Logger,
  env: Record<string, string | undefined> = process.env,
): Promise<Tracing | null> {
  if (!config.tracing.enabled) return null;
  const { otlpTracing } = await import("./otel.ts");
  const endpoint = tracesEndpoint(config, env);
  log.info(`tracing: exporting spans to ${endpoint}`);
  return otlpTracing({ endpoint, serviceName: config.tracing.service_name, log });
}

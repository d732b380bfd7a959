/**
 * The OpenTelemetry SDK behind `Tracing`: spans batched in a bounded queue (spans beyond it are
 * dropped, never held) and exported as OTLP/JSON over HTTP. Loaded only when tracing is on.
 *
 * Attributes carry no request content: the provider, sizes, counts, the action, the method, the path
 * with query values masked, the status, and sluice's request id.
 */
import { type Context, context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { VERSION } from "../core/build-info.ts";
import type { Logger } from "../core/log.ts";
import type { RequestResult, RequestStart, RequestTrace, Tracing } from "./index.ts";

/** Spans waiting for export at most; a collector that is down costs this much memory, not more. */
const MAX_QUEUED_SPANS = 2048;

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  get: (h: Headers, key: string) => h.get(key) ?? undefined,
  keys: (h: Headers) => [...h.keys()],
};
const headerSetter = { set: (h: Headers, key: string, value: string) => h.set(key, value) };

/** Epoch milliseconds of a `performance.now()` time, as span times are given. */
const epochMs = (t: number) => performance.timeOrigin + t;

export function otlpTracing(opts: { endpoint: string; serviceName: string; log: Logger }): Tracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": opts.serviceName, "service.version": VERSION }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: opts.endpoint, timeoutMillis: 10_000 }),
        maxQueueSize: MAX_QUEUED_SPANS,
        maxExportBatchSize: 512,
        scheduledDelayMillis: 1000,
        exportTimeoutMillis: 10_000,
      }),
    ],
  });
  const tracer = provider.getTracer("sluice", VERSION);

  return {
    request(start: RequestStart): RequestTrace {
      const propagated = start.headers.has("traceparent");
      const parent: Context = propagated
        ? propagator.extract(context.active(), start.headers, headerGetter)
        : context.active();
      const span: Span = tracer.startSpan(
        "sluice.request",
        {
          kind: SpanKind.SERVER,
          startTime: epochMs(start.start),
          attributes: {
            "http.request.method": start.method,
            "url.path": start.path,
            "sluice.request_id": start.requestId,
          },
        },
        parent,
      );
      const inside = trace.setSpan(parent, span);
      return {
        scanned(from, to) {
          tracer.startSpan("sluice.scan", { startTime: epochMs(from) }, inside).end(epochMs(to));
        },
        upstream(headers, host) {
          const up = tracer.startSpan(
            "sluice.upstream",
            { kind: SpanKind.CLIENT, attributes: { "server.address": host } },
            inside,
          );
          if (propagated) propagator.inject(trace.setSpan(inside, up), headers, headerSetter);
          return (status, error) => {
            if (status !== null) up.setAttribute("http.response.status_code", status);
            if (error) up.setStatus({ code: SpanStatusCode.ERROR, message: error });
            up.end();
          };
        },
        end(r: RequestResult) {
          span.setAttributes({
            provider: r.provider,
            "body.size": r.bodySize,
            "findings.count": r.findings,
            action: r.action,
            "scan.duration_ms": r.scanMs,
          });
          if (r.status !== null) span.setAttribute("http.response.status_code", r.status);
          if (r.error) span.setStatus({ code: SpanStatusCode.ERROR, message: r.error });
          span.end();
        },
      };
    },
    async shutdown() {
      try {
        await provider.shutdown();
      } catch (e) {
        opts.log.warn(`tracing: the last spans could not be exported: ${(e as Error).message}`);
      }
    },
  };
}

/**
 * Tracing, as a team running a collector sees it: sluice configured with `tracing.enabled` exports
 * one `sluice.request` span per proxied request over OTLP/HTTP (JSON) to a local receiver, with the
 * scan and the upstream exchange as child spans; a client's W3C `traceparent` becomes the parent
 * and reaches the upstream as the upstream span's. Off (the default), nothing is exported and the
 * client's headers pass unchanged. The compiled binary exports too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { hostBinaries } from "../helpers/binaries.ts";
import { type InProcessSluice, spawnSluice, startSluice } from "../helpers/sluice.ts";
import { anthropicMessage, json, startUpstream, type Upstream } from "../helpers/upstream.ts";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number };
}

/** A local OTLP/HTTP receiver: every span of every export it got. */
function startReceiver() {
  const spans: OtlpSpan[] = [];
  const services: string[] = [];
  let waiters: (() => void)[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      if (new URL(req.url).pathname !== "/v1/traces" || req.method !== "POST")
        return new Response("not found", { status: 404 });
      const body = (await req.json()) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: OtlpValue }[] };
          scopeSpans: { spans: OtlpSpan[] }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        services.push(
          String(rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue),
        );
        for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      for (const w of waiters) w();
      waiters = [];
      return Response.json({});
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    services,
    /** Resolves once `n` spans named `name` arrived. */
    async until(name: string, n = 1): Promise<OtlpSpan[]> {
      for (;;) {
        const found = spans.filter((s) => s.name === name);
        if (found.length >= n) return found;
        await new Promise<void>((r) => waiters.push(r));
      }
    },
    stop: () => server.stop(true),
  };
}

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.doubleValue);
};

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;
const GH_TOKEN = ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"].join("");

let up: Upstream;
let receiver: ReturnType<typeof startReceiver>;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json(anthropicMessage("traced")));
  receiver = startReceiver();
});
afterAll(async () => {
  await up?.stop();
  receiver?.stop();
});

describe("tracing on", () => {
  let s: InProcessSluice;
  beforeAll(async () => {
    s = await startSluice({
      upstream: up.url,
      config: {
        tracing: { enabled: true, endpoint: `${receiver.url}/v1/traces`, service_name: "sluice-test" },
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
  });

  test("a request through the Anthropic SDK: its span, the scan and upstream children, traceparent both ways", async () => {
    const client = new Anthropic({
      apiKey: "sk-ant-test",
      baseURL: s.proxyUrl,
      defaultHeaders: { traceparent: TRACEPARENT },
      maxRetries: 0,
    });
    const before = up.requests.length;
    const msg = await client.messages.create({
      model: "claude-test-model",
      max_tokens: 16,
      messages: [{ role: "user", content: "hello, traced" }],
    });
    expect(msg.content[0]).toMatchObject({ text: "traced" });
    await s.runtime.shutdown("test"); // exports what is queued
    const [root] = await receiver.until("sluice.request");
    const [scan] = await receiver.until("sluice.scan");
    const [upstream] = await receiver.until("sluice.upstream");
    expect(receiver.services).toContain("sluice-test");
    expect(root!.traceId).toBe(TRACE_ID);
    expect(root!.parentSpanId).toBe(CLIENT_SPAN);
    expect(root!.kind).toBe(2); // server
    expect(attr(root!, "provider")).toBe("anthropic");
    expect(attr(root!, "action")).toBe("pass");
    expect(attr(root!, "findings.count")).toBe(0);
    expect(attr(root!, "body.size")).toBeGreaterThan(50);
    expect(attr(root!, "scan.duration_ms")).toBeGreaterThanOrEqual(0);
    expect(attr(root!, "http.response.status_code")).toBe(200);
    expect(attr(root!, "url.path")).toBe("/v1/messages");
    for (const child of [scan!, upstream!]) {
      expect(child.traceId).toBe(TRACE_ID);
      expect(child.parentSpanId).toBe(root!.spanId);
    }
    expect(upstream!.kind).toBe(3); // client
    expect(attr(upstream!, "http.response.status_code")).toBe(200);
    const sent = up.requests.slice(before).find((r) => r.path.startsWith("/v1/messages"))!;
    expect(sent.headers.get("traceparent")).toBe(`00-${TRACE_ID}-${upstream!.spanId}-01`);
  });
});

test("a blocked request: action block and its findings on the span, no upstream span, no value in any attribute", async () => {
  receiver.spans.length = 0;
  const s = await startSluice({
    upstream: up.url,
    config: { tracing: { enabled: true, endpoint: `${receiver.url}/v1/traces` } },
  });
  const res = await fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k" },
    body: JSON.stringify({
      model: "m",
      max_tokens: 1,
      messages: [{ role: "user", content: `token ${GH_TOKEN}` }],
    }),
  });
  expect(res.status).toBe(400);
  await res.arrayBuffer();
  await s.stop();
  const [root] = await receiver.until("sluice.request");
  expect(attr(root!, "action")).toBe("block");
  expect(attr(root!, "findings.count")).toBeGreaterThanOrEqual(1);
  expect(attr(root!, "http.response.status_code")).toBe(400);
  expect(root!.parentSpanId ?? "").toBe(""); // no traceparent: a root span
  expect(receiver.spans.filter((x) => x.name === "sluice.upstream")).toHaveLength(0);
  expect(JSON.stringify(receiver.spans)).not.toContain(GH_TOKEN.slice(4));
});

test("tracing off (the default): nothing exported, the client's traceparent passes unchanged", async () => {
  receiver.spans.length = 0;
  await using s = await startSluice({ upstream: up.url });
  const before = up.requests.length;
  const res = await fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k", traceparent: TRACEPARENT },
    body: JSON.stringify({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  await s.stop();
  expect(up.requests.slice(before).at(-1)!.headers.get("traceparent")).toBe(TRACEPARENT);
  expect(receiver.spans).toHaveLength(0);
});

test("the compiled binary exports spans to OTEL_EXPORTER_OTLP_ENDPOINT", async () => {
  receiver.spans.length = 0;
  const { sluice } = await hostBinaries();
  await using p = await spawnSluice([], {
    binary: sluice,
    upstream: up.url,
    config: { tracing: { enabled: true } },
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  const res = await fetch(`${p.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k" },
    body: JSON.stringify({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  p.kill("SIGTERM");
  expect(await p.exited).toBe(0);
  const [root] = await receiver.until("sluice.request");
  expect(attr(root!, "provider")).toBe("anthropic");
}, 120_000);

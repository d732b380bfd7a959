/**
 * Split mode: the relay forwards through a healthy engine (adding X-Request-ID
 * relay-<n> and X-Forwarded-For); with the engine down, fail_mode open forwards to the provider
 * uninspected and closed answers 503 + Retry-After in the provider's shape; during
 * queue_on_startup requests wait for the engine.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { ScanRequest } from "../../src/core/hook.ts";
import { startRelay } from "../../src/runtime/relay.ts";
import { startTestRelay } from "../helpers/relay.ts";
import {
  deadEndpoint,
  freePort,
  runSluice,
  spawnSluice,
  startSluice,
  writeTestConfig,
} from "../helpers/sluice.ts";
import { json, type SseControl, sse, startUpstream, type Upstream } from "../helpers/upstream.ts";

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg_split" }));
});
afterAll(async () => {
  await up?.stop();
});

const ANTH = { "content-type": "application/json", "x-api-key": "k" };
const relay = (engineUrl: string, failMode: "open" | "closed", over: Record<string, unknown> = {}) =>
  startTestRelay(up.url, engineUrl, failMode, over);

const send = (base: string) =>
  fetch(`${base}/v1/messages`, { method: "POST", headers: ANTH, body: '{"model":"m"}' });

test("healthy engine: requests go through it, with X-Request-ID and X-Forwarded-For", async () => {
  const seen: ScanRequest[] = [];
  await using engine = await startSluice({
    upstream: up.url,
    dashboard: false,
    hook: (r) => {
      seen.push(r);
      return { action: "pass", findings: [], scanned_bytes: r.body.byteLength };
    },
  });
  await using r = await relay(engine.proxyUrl, "closed", { queue_on_startup: 5 });
  const res = await send(r.url);
  expect(await res.json()).toEqual({ id: "msg_split" });
  expect(seen).toHaveLength(1);
  expect(seen[0]!.headers.get("x-request-id")).toBe("relay-1");
  expect(seen[0]!.headers.get("x-forwarded-for")).toBe("127.0.0.1");
  const health = (await (await fetch(`${r.url}/health`)).json()) as Record<string, unknown>;
  expect(health).toMatchObject({ status: "ok", engine: "healthy", fail_mode: "closed" });
  expect(typeof health.uptime).toBe("number");
});

test("engine down, fail_mode open: forwarded straight to the provider, uninspected", async () => {
  using dead = deadEndpoint();
  await using r = await relay(dead.url, "open");
  const before = up.requests.length;
  const res = await send(r.url);
  expect(res.status).toBe(200);
  expect(up.requests.length).toBe(before + 1);
  expect(((await (await fetch(`${r.url}/health`)).json()) as { engine: string }).engine).toBe("unhealthy");
});

test("engine down, fail_mode closed: 503 with Retry-After in the provider's shape", async () => {
  using dead = deadEndpoint();
  await using r = await relay(dead.url, "closed", { health_check_interval: 2 });
  const before = up.requests.length;
  const res = await send(r.url);
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBe("2");
  expect(await res.json()).toMatchObject({ type: "error", error: { type: "api_error" } });
  expect(up.requests.length).toBe(before);
});

// Regression: the relay read fail_mode and engine_url once at start, so a SIGHUP that changed them
// logged "config reloaded" and changed nothing.
test("a reload switches fail_mode and engine_url for the next request", async () => {
  using dead = deadEndpoint();
  const over = { relay: { health_check_interval: 0.1, health_check_timeout: 0.5, queue_on_startup: 0 } };
  const home = writeTestConfig({
    upstream: up.url,
    config: {
      ...over,
      relay: { ...over.relay, fail_mode: "closed", engine_url: dead.url },
    },
  });
  const r = await startRelay({
    env: { ...process.env, SLUICE_HOME: home },
    projectDir: null,
    port: 0,
    stderr: false,
    printBanner: false,
  });
  try {
    expect((await send(r.url)).status).toBe(503);
    writeTestConfig({
      home,
      upstream: up.url,
      config: { ...over, relay: { ...over.relay, fail_mode: "open" } },
    });
    expect(r.reload()).toEqual({ ok: true });
    expect((await send(r.url)).status).toBe(200);
    expect(r.log.recent.join("\n")).toContain('relay.fail_mode: "closed" -> "open"');
  } finally {
    await r.stop();
  }
});

const CLI = join(import.meta.dir, "../../src/cli.ts");

test("during queue_on_startup a request waits for the engine to come up, then goes through it", async () => {
  const enginePort = freePort();
  await using r = await relay(`http://127.0.0.1:${enginePort}`, "closed", { queue_on_startup: 20 });
  const pending = send(r.url);
  // fail_mode is closed: without the wait this would be a 503.
  await using engine = await spawnSluice(["--port", String(enginePort), "--dashboard-port", "0"], {
    upstream: up.url,
    command: [process.execPath, CLI, "engine"],
    portFlags: false,
  });
  expect(engine.proxyUrl).toBe(`http://127.0.0.1:${enginePort}`);
  const res = await pending;
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ id: "msg_split" });
  expect(r.relay.state).toBe("healthy");
});

test("`sluice relay` runs as a command and checks its flags", async () => {
  using dead = deadEndpoint();
  const args = ["--port", "0", "--engine", dead.url, "--fail-mode", "open"];
  await using p = await spawnSluice(args, {
    upstream: up.url,
    command: [process.execPath, CLI, "relay"],
    portFlags: false,
    config: { relay: { queue_on_startup: 0 } },
  });
  const res = await send(p.proxyUrl);
  expect(res.status).toBe(200);
  p.kill("SIGTERM");
  expect(await p.exited).toBe(0);
  const bad = await runSluice(["relay", "--fail-mode", "maybe"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--fail-mode = "maybe" is invalid');
});

test("`sluice serve --engine-port` runs engine and relay in one process (combined mode)", async () => {
  await using p = await spawnSluice(["--engine-port", "0", "--fail-mode", "closed"], { upstream: up.url });
  const engineLine = await p.waitForOutput(/sluice: engine listening on (http:\/\/[\d.]+:\d+)/);
  expect(engineLine[1]).not.toBe(p.proxyUrl);
  const res = await send(p.proxyUrl);
  expect(await res.json()).toEqual({ id: "msg_split" });
  expect(up.requests.at(-1)!.headers.get("x-request-id")).toMatch(/^relay-\d+$/);
  const health = (await (await fetch(`${p.proxyUrl}/health`)).json()) as Record<string, unknown>;
  expect(health).toMatchObject({ engine: "healthy", fail_mode: "closed" });
  const metrics = await fetch(`${p.proxyUrl}/metrics`);
  expect(metrics.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  expect(await metrics.text()).toContain('sluice_provider_requests_total{provider="anthropic"} 1');
  p.kill("SIGTERM");
  expect(await p.exited).toBe(0);
  expect(p.output).toMatch(/session summary[\s\S]*requests: 1/);
});

test("WebSocket upgrades (Codex) go through the engine while healthy, straight upstream when fail_mode is open", async () => {
  up.ws("/v1/responses");
  const frames: string[] = [];
  await using engine = await startSluice({
    upstream: up.url,
    dashboard: false,
    hook: (r) => {
      frames.push(new TextDecoder().decode(r.body));
      return { action: "pass", findings: [], scanned_bytes: r.body.byteLength };
    },
  });
  const roundTrip = async (base: string, text: string) => {
    const ws = new WebSocket(`${base.replace("http", "ws")}/v1/responses`, {
      headers: { authorization: "Bearer sk-x" },
    } as unknown as string[]);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = () => reject(new Error("upgrade failed"));
    });
    const echoed = new Promise<string>((r) =>
      ws.addEventListener("message", (e) => r(String(e.data)), { once: true }),
    );
    ws.send(text);
    const got = await echoed;
    ws.close();
    return got;
  };
  {
    await using r = await relay(engine.proxyUrl, "closed", { queue_on_startup: 5 });
    expect(await roundTrip(r.url, "via-engine")).toBe("via-engine");
    expect(frames).toEqual(["via-engine"]);
  }
  {
    using dead = deadEndpoint();
    await using r = await relay(dead.url, "open");
    expect(await roundTrip(r.url, "direct")).toBe("direct");
    expect(frames).toEqual(["via-engine"]);
    expect(up.wsMessages.at(-1)).toBe("direct");
  }
});

test("a 502 the engine answers itself (provider unreachable) is passed on; the engine stays healthy", async () => {
  using dead = deadEndpoint("https");
  await using engine = await startSluice({
    dashboard: false,
    config: { proxy: { retries: 0 }, providers: { anthropic: { upstream: dead.url } } },
  });
  await using r = await relay(engine.proxyUrl, "open", { queue_on_startup: 5 });
  const before = up.requests.length;
  const res = await send(r.url);
  expect(res.status).toBe(502);
  expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
    "could not reach upstream",
  );
  expect(r.relay.state).toBe("healthy");
  expect(up.requests.length).toBe(before);
});

test("SSE through relay and engine still arrives chunk by chunk", async () => {
  let ctl!: SseControl;
  const started = new Promise<void>((r) =>
    up.on("POST", "/v1/chat/completions", () => {
      ctl = sse();
      r();
      return ctl.response();
    }),
  );
  await using engine = await startSluice({ upstream: up.url, dashboard: false });
  await using r = await relay(engine.proxyUrl, "closed", { queue_on_startup: 5 });
  const resP = fetch(`${r.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer sk-x", "content-type": "application/json" },
    body: JSON.stringify({
      model: "m",
      messages: [{ role: "user", content: "x".repeat(10_000) }],
      stream: true,
    }),
  });
  await started;
  ctl.send("data: one\n\n");
  const res = await resP;
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  expect(dec.decode((await reader.read()).value)).toBe("data: one\n\n");
  ctl.send("data: two\n\n");
  expect(dec.decode((await reader.read()).value)).toBe("data: two\n\n");
  ctl.end();
  expect((await reader.read()).done).toBe(true);
});

/**
 * WebSocket tunnels: Codex's `GET /v1/responses` upgrade relayed to the upstream as wss://, frames both
 * ways unchanged, each client frame through the hook, a block answered with an error event on a
 * Responses socket and closed with 1008 on a /ws tunnel; the upgrade completes
 * only after the upstream's 101; `/ws?url=` accepts only ws:// and wss:// targets.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RequestEvent, WsConnectionEvent } from "../../src/core/bus.ts";
import type { ScanRequest, Verdict } from "../../src/core/hook.ts";
import { startSlowLink } from "../helpers/slow-link.ts";
import { startSluice } from "../helpers/sluice.ts";
import { startUpstream, type Upstream } from "../helpers/upstream.ts";

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
  up.ws("/v1/responses", {
    message(ws, msg) {
      // Answer like the Responses API: one JSON event per frame.
      const req = JSON.parse(String(msg)) as { type: string; input: unknown };
      ws.send(JSON.stringify({ type: "response.created", echo: req.input }));
      ws.send(JSON.stringify({ type: "response.completed" }));
    },
  });
  up.ws("/echo");
  up.ws("/refuse", { refuse: () => new Response("no", { status: 403 }) });
});
afterAll(async () => {
  await up?.stop();
});

function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers } as unknown as string[]);
    ws.binaryType = "arraybuffer";
    ws.onopen = () => resolve(ws);
    ws.onerror = () => reject(new Error("websocket failed to open"));
  });
}
function nextMessage(ws: WebSocket): Promise<string | ArrayBuffer> {
  return new Promise((r) => ws.addEventListener("message", (e) => r(e.data), { once: true }));
}
function closed(ws: WebSocket): Promise<CloseEvent> {
  return new Promise((r) => ws.addEventListener("close", (e) => r(e), { once: true }));
}

test("Codex WebSocket: relayed to upstream wss://, frames unchanged both ways, each frame scanned", async () => {
  const scanned: ScanRequest[] = [];
  await using s = await startSluice({
    upstream: up.url,
    hook: (r) => {
      scanned.push(r);
      return { action: "pass", findings: [], scanned_bytes: r.body.byteLength };
    },
  });
  const events: WsConnectionEvent[] = [];
  s.runtime.bus.on("ws-connection", (e) => events.push(e));
  const requests: RequestEvent[] = [];
  s.runtime.bus.on("request", (e) => requests.push(e));
  const ws = await open(`${s.proxyUrl.replace("http", "ws")}/v1/responses`, {
    authorization: "Bearer sk-test",
    "session-id": "codex-sess",
    "user-agent": "codex_cli_rs/0.169.0",
  });
  const frame = JSON.stringify({
    type: "response.create",
    model: "gpt-5-codex",
    input: [{ type: "message", text: "é ✓" }],
  });
  const got: string[] = [];
  const two = new Promise<void>((r) =>
    ws.addEventListener("message", (e) => {
      got.push(String(e.data));
      if (got.length === 2) r();
    }),
  );
  ws.send(frame);
  await two;
  expect(JSON.parse(got[0]!)).toEqual({ type: "response.created", echo: [{ type: "message", text: "é ✓" }] });
  expect(up.wsMessages.at(-1)).toBe(frame);
  const upgrade = up.requests.at(-1)!;
  expect(upgrade.path).toBe("/v1/responses");
  expect(upgrade.headers.get("authorization")).toBe("Bearer sk-test");
  expect(upgrade.headers.get("session-id")).toBe("codex-sess");
  expect(scanned).toHaveLength(1);
  expect(scanned[0]).toMatchObject({ transport: "websocket", provider: "openai" });
  expect(scanned[0]!.session).toMatchObject({ session_id: "codex-sess", client: "codex" });
  expect(new TextDecoder().decode(scanned[0]!.body)).toBe(frame);
  // binary frames pass unchanged too
  const bin = new Uint8Array([0, 1, 2, 250, 255]);
  up.ws("/v1/responses", {});
  ws.close(1000);
  await closed(ws);
  const echo = await open(`${s.proxyUrl.replace("http", "ws")}/v1/responses`, {
    authorization: "Bearer sk-test",
  });
  const m = nextMessage(echo);
  echo.send(bin);
  expect(new Uint8Array((await m) as ArrayBuffer)).toEqual(bin);
  echo.close();
  await closed(echo);
  expect(events.filter((e) => e.phase === "open").length).toBe(2);
  // Each client frame is one request of the audit trail, with the model from the frame.
  expect(requests[0]).toMatchObject({
    method: "WS",
    path: "/v1/responses",
    provider: "openai",
    action: "pass",
    model: "gpt-5-codex",
    session_id: "codex-sess",
    client: "codex",
    bytes: new TextEncoder().encode(frame).byteLength,
  });
  expect(requests).toHaveLength(2);
});

/** A hook that blocks every frame holding "SECRET", with one finding at `input[0].text`. */
const secretHook = (r: ScanRequest): Verdict =>
  new TextDecoder().decode(r.body).includes("SECRET")
    ? {
        action: "block",
        findings: [
          {
            rule: "r1",
            detector: "custom",
            finding_type: "custom_secret",
            severity: "high",
            action: "block",
            action_source: "rule",
            matched_rules: ["r1"],
            path: "input[0].text",
            start: 0,
            end: 6,
            preview: "SE****",
            content_hash: "1".repeat(64),
            value_hash: null,
            decoded: null,
            description: "",
          },
        ],
        scanned_bytes: r.body.byteLength,
      }
    : { action: "pass", findings: [], scanned_bytes: r.body.byteLength };

test("a blocked frame on a Responses socket is answered with a 400 error event; the socket stays open", async () => {
  up.ws("/v1/responses");
  await using s = await startSluice({ upstream: up.url, hook: secretHook });
  const ws = await open(`${s.proxyUrl.replace("http", "ws")}/v1/responses`, { authorization: "Bearer sk-x" });
  const ok = nextMessage(ws);
  ws.send("harmless");
  expect(await ok).toBe("harmless");
  const before = up.wsMessages.length;
  const errorEvent = nextMessage(ws);
  ws.send("my SECRET value");
  // Codex reads this as an HTTP 400: an invalid request it shows and does not retry or reconnect for.
  const event = String(await errorEvent);
  expect(JSON.parse(event)).toMatchObject({
    type: "error",
    status_code: 400,
    error: { type: "invalid_request_error", code: "blocked_by_sluice" },
  });
  // Codex reads the status as `status` or its other name `status_code`, and drops an event with both.
  expect(JSON.parse(event)).not.toHaveProperty("status");
  expect(event).toContain("custom_secret at input[0].text");
  expect(event).not.toContain("SECRET value");
  expect(up.wsMessages.length).toBe(before);
  const next = nextMessage(ws);
  ws.send("next turn");
  expect(await next).toBe("next turn");
  expect(ws.readyState).toBe(WebSocket.OPEN);
  // The log line names the rule and the field, as for a blocked HTTP request, never the value.
  const line = s.runtime.log.recent.find((l) => l.includes("blocked a WebSocket frame"));
  expect(line).toContain("custom_secret at input[0].text (rule r1; block: set on the rule)");
  expect(line).not.toContain("SECRET value");
  ws.close();
});

/** A `/ws?url=` tunnel through `s` to the stand-in's echo socket (loopback, so `s` must allow it). */
function openEchoTunnel(s: { proxyUrl: string }): Promise<WebSocket> {
  const target = `${up.url.replace("https", "wss")}/echo`;
  return open(`${s.proxyUrl.replace("http", "ws")}/ws?url=${encodeURIComponent(target)}`);
}

test("a blocked frame on a /ws?url= tunnel closes both sides with 1008 and never reaches the target", async () => {
  await using s = await startSluice({
    upstream: up.url,
    hook: secretHook,
    config: { websocket: { allowed_private_targets: ["127.0.0.1"] } },
  });
  const ws = await openEchoTunnel(s);
  const ok = nextMessage(ws);
  ws.send("harmless");
  expect(await ok).toBe("harmless");
  const before = up.wsMessages.length;
  const c = closed(ws);
  ws.send("my SECRET value");
  const ev = await c;
  expect(ev.code).toBe(1008);
  expect(ev.reason).toContain("custom_secret");
  expect(ev.reason).not.toContain("SECRET value");
  expect(up.wsMessages.length).toBe(before);
});

test("the upgrade completes only after the upstream's 101: a refused upstream upgrade fails the client's", async () => {
  await using s = await startSluice({ upstream: `${up.url}/refuse-prefix` });
  up.ws("/refuse-prefix/v1/responses", { refuse: () => new Response("no", { status: 403 }) });
  await expect(
    open(`${s.proxyUrl.replace("http", "ws")}/v1/responses`, { authorization: "Bearer sk-x" }),
  ).rejects.toThrow();
  const res = await fetch(`${s.proxyUrl}/v1/responses`, {
    headers: {
      upgrade: "websocket",
      connection: "Upgrade",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
      "sec-websocket-version": "13",
      authorization: "Bearer sk-x",
    },
  });
  expect(res.status).toBe(502);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_unreachable");
});

test("/ws?url= relays to ws:// and wss:// targets only", async () => {
  // The stand-in listens on loopback, which /ws opens only when allowed (test/security/ws-ssrf.test.ts).
  await using s = await startSluice({
    upstream: up.url,
    config: { websocket: { allowed_private_targets: ["127.0.0.1"] } },
  });
  const ws = await openEchoTunnel(s);
  const m = nextMessage(ws);
  ws.send("ping");
  expect(await m).toBe("ping");
  ws.close();
  for (const bad of ["http://127.0.0.1:1/", "file:///etc/passwd", "not a url"]) {
    const res = await fetch(`${s.proxyUrl}/ws?url=${encodeURIComponent(bad)}`, {
      headers: {
        upgrade: "websocket",
        connection: "Upgrade",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-version": "13",
      },
    });
    expect(res.status).toBe(400);
  }
});

test("frames the upstream sends right after its 101, before the client side is open, are not lost", async () => {
  up.ws("/greet/v1/responses", {
    open(ws) {
      ws.send("greeting-1");
      ws.send(new Uint8Array([1, 2, 3]));
    },
  });
  await using s = await startSluice({ upstream: `${up.url}/greet` });
  const got: (string | ArrayBuffer)[] = [];
  const two = new Promise<void>((resolve, reject) => {
    const ws = new WebSocket(`${s.proxyUrl.replace("http", "ws")}/v1/responses`, {
      headers: { authorization: "Bearer sk-x" },
    } as unknown as string[]);
    ws.binaryType = "arraybuffer";
    ws.onerror = () => reject(new Error("failed"));
    ws.onmessage = (e) => {
      got.push(e.data);
      if (got.length === 2) {
        ws.close();
        resolve();
      }
    };
  });
  await two;
  expect(got[0]).toBe("greeting-1");
  expect(new Uint8Array(got[1] as ArrayBuffer)).toEqual(new Uint8Array([1, 2, 3]));
});

test("frames sent back to back are scanned and forwarded in order, each with its request event; a blocked one is held back", async () => {
  up.ws("/order/v1/responses");
  await using s = await startSluice({ upstream: `${up.url}/order`, hook: secretHook });
  const requests: RequestEvent[] = [];
  s.runtime.bus.on("request", (e) => requests.push(e));
  const ws = await open(`${s.proxyUrl.replace("http", "ws")}/v1/responses`, { authorization: "Bearer sk-x" });
  const frames = ["turn 1", "turn 2", "turn 3 my SECRET value", "turn 4", "turn 5", "turn 6"];
  const answers: string[] = [];
  const all = new Promise<void>((r) =>
    ws.addEventListener("message", (e) => {
      answers.push(String(e.data));
      if (answers.length === frames.length) r();
    }),
  );
  const before = up.wsMessages.length;
  for (const f of frames) ws.send(f);
  await all;
  expect(up.wsMessages.slice(before)).toEqual(frames.filter((f) => !f.includes("SECRET")));
  expect(answers.filter((a) => a.startsWith("turn"))).toEqual(frames.filter((f) => !f.includes("SECRET")));
  expect(answers.filter((a) => a.includes("blocked_by_sluice"))).toHaveLength(1);
  expect(requests.map((e) => [e.request_id.split("#")[1], e.action])).toEqual([
    ["1", "pass"],
    ["2", "pass"],
    ["3", "block"],
    ["4", "pass"],
    ["5", "pass"],
    ["6", "pass"],
  ]);
  ws.close();
});

test("permessage-deflate: never on the client's side of sluice; offered to the upstream only when the client offered it", async () => {
  // The upstream accepts compression; a link with no delay in front of it counts the bytes sluice sends it.
  await using deflating = await startUpstream({ wsDeflate: true });
  deflating.ws("/v1/responses");
  await using link = await startSlowLink({ port: deflating.port, rttMs: 0 });
  await using s = await startSluice({ upstream: link.url });
  const frame = JSON.stringify({
    type: "response.create",
    input: [{ type: "message", text: "a".repeat(100_000) }],
  });
  for (const offer of [true, false]) {
    const ws = new WebSocket(`${s.proxyUrl.replace("http", "ws")}/v1/responses`, {
      headers: { authorization: "Bearer sk-x" },
      perMessageDeflate: offer,
    } as unknown as string[]);
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error("websocket failed to open"));
    });
    // Loopback: compressing costs both ends time on every frame and saves none.
    expect(ws.extensions).toBe("");
    const offered = deflating.requests.at(-1)!.headers.get("sec-websocket-extensions") ?? "";
    if (offer) expect(offered).toContain("permessage-deflate");
    else expect(offered).toBe("");
    const echoed = nextMessage(ws);
    ws.send(frame);
    expect(await echoed).toBe(frame);
    expect(deflating.wsMessages.at(-1)).toBe(frame);
    // Compressed on the way to the upstream when the client would have had it compressed there.
    const sent = link.log.at(-1)!.up;
    if (offer) expect(sent).toBeLessThan(frame.length / 10);
    else expect(sent).toBeGreaterThan(frame.length);
    ws.close();
    await closed(ws);
  }
});

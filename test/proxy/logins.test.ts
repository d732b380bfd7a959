/**
 * The sign-in modes end to end, replaying what the real tools sent (test/fixtures/logins/): Gemini
 * CLI signed in with Google (Code Assist, the `request` wrapper), Codex signed in with ChatGPT (the
 * `/backend-api/codex/responses` Responses body, zstd over SSE and as WebSocket frames) and Claude
 * Code on a subscription (OAuth bearer). Each is detected, forwarded byte for byte to its own
 * upstream, scanned, redacted in place and blocked in its provider's error shape; its session is
 * read; and traffic sluice cannot read is counted per tool in /metrics and the store.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { zstdCompressSync, zstdDecompressSync } from "node:zlib";
import type { RequestEvent } from "../../src/core/bus.ts";
import type { Finding } from "../../src/core/types.ts";
import { recorded } from "../helpers/recorded.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

// Fake credentials assembled at run time (never real, never a literal in the source).
const AWS_ID = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");
const TICKET = "SLT-123456-ABCD";
const OAUTH = ["sk-ant-oat01-", "fixture", "0".repeat(80), "-AAAAAAAA"].join("");

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const sse = (events: unknown[]) =>
  new Response(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(""), {
    headers: { "content-type": "text/event-stream" },
  });

let up: Upstream;
let s: InProcessSluice;
const requests: RequestEvent[] = [];
const findings: Finding[] = [];
const waiters: { pred: (e: RequestEvent) => boolean; resolve: (e: RequestEvent) => void }[] = [];

/** The first request event from index `from` on for which `pred` holds (recorded, or the next to be). */
function requestEvent(pred: (e: RequestEvent) => boolean, from = 0): Promise<RequestEvent> {
  const seen = requests.slice(from).find(pred);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => waiters.push({ pred, resolve }));
}

beforeAll(async () => {
  up = await startUpstream();
  up.on(
    "POST",
    (p) => p.startsWith("/v1internal:streamGenerateContent"),
    () => sse([{ response: { candidates: [{ content: { role: "model", parts: [{ text: "hi" }] } }] } }]),
  );
  up.on(
    "POST",
    (p) => p.startsWith("/v1internal:"),
    () => json({ response: {} }),
  );
  up.on("POST", "/backend-api/codex/responses", () =>
    sse([{ type: "response.created" }, { type: "response.completed" }]),
  );
  up.on("GET", "/backend-api/wham/accounts/check", () =>
    json(JSON.parse(recordedAnswer()), { headers: { "content-encoding": "identity" } }),
  );
  up.on("POST", "/v1/messages", () => json({ id: "msg_1", type: "message", content: [] }));
  up.ws("/backend-api/codex/responses", {
    message(ws) {
      ws.send(JSON.stringify({ type: "response.completed" }));
    },
  });
  s = await startSluice({
    upstream: up.url,
    config: {
      custom_rules: [
        { name: "test_ticket", pattern: "SLT-[0-9]{6}-[A-Z]{4}", severity: "high", action: "redact" },
      ],
    },
  });
  s.runtime.bus.on("request", (e) => {
    requests.push(e);
    for (const w of waiters.splice(0))
      if (w.pred(e)) w.resolve(e);
      else waiters.push(w);
  });
  s.runtime.bus.on("finding", (e) => findings.push(e.finding));
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

function recordedAnswer(): string {
  return readFileSync(
    `${import.meta.dir}/../fixtures/logins/codex-chatgpt-accounts-check.answer.json`,
    "utf8",
  );
}

async function send(path: string, init: RequestInit): Promise<{ status: number; text: string }> {
  const res = await fetch(`${s.proxyUrl}${path}`, init);
  return { status: res.status, text: await res.text() };
}

describe("Gemini CLI signed in with Google (Code Assist)", () => {
  const calls = [
    "gemini-code-assist-load-code-assist",
    "gemini-code-assist-retrieve-user-quota",
    "gemini-code-assist-list-experiments",
    "gemini-code-assist-generate-content",
    "gemini-code-assist-stream-generate-content",
  ];

  test("every recorded call is code_assist, forwarded byte for byte, its session read, nothing unread", async () => {
    for (const name of calls) {
      const r = recorded(name);
      const before = up.requests.length;
      const mark = requests.length;
      const res = await send(r.path, {
        method: r.method,
        headers: r.headers("ya29.test-token"),
        body: r.body,
      });
      expect(res.status).toBe(200);
      const got = up.requests[before]!;
      expect(got.path).toBe(r.path);
      expect(got.sha256).toBe(sha(r.body));
      expect(got.headers.get("authorization")).toBe("Bearer ya29.test-token");
      const ev = await requestEvent((e) => e.path === r.path, mark);
      expect(ev).toMatchObject({
        provider: "code_assist",
        login: "google",
        client: "gemini-cli",
        unscanned: null,
      });
    }
    const stream = await requestEvent((e) => e.path.startsWith("/v1internal:streamGenerateContent"));
    expect(stream.model).toBe("gemini-3-flash");
    expect(stream.account_id).toBe("sluice-test-project");
    expect(stream.session_id).toBe("ef12950c-cbce-4fd5-a504-c88dcc0ba57e");
  });

  test("a secret in the wrapped request is redacted in place; the rest of the body is unchanged", async () => {
    const r = recorded("gemini-code-assist-stream-generate-content");
    const before = up.requests.length;
    const res = await send(r.path, {
      method: "POST",
      headers: r.headers(),
      body: r.withPrompt(`ticket ${TICKET}`),
    });
    expect(res.status).toBe(200);
    const got = new TextDecoder().decode(up.requests[before]!.body);
    expect(got).toBe(new TextDecoder().decode(r.withPrompt("ticket [REDACTED:test_ticket]")));
    const f = findings.find((x) => x.rule === "test_ticket" && x.path.startsWith("request."))!;
    expect(f.path).toBe(
      `request.contents[${(JSON.parse(got) as { request: { contents: unknown[] } }).request.contents.length - 1}].parts[1].text`,
    );
  });

  test("a blocked secret gets Google's error shape naming the wrapped path; upstream never sees it", async () => {
    const r = recorded("gemini-code-assist-generate-content");
    const before = up.requests.length;
    const res = await send(r.path, { method: "POST", headers: r.headers(), body: r.withPrompt(AWS_ID) });
    expect(res.status).toBe(403);
    const body = JSON.parse(res.text) as { error: { code: number; status: string; message: string } };
    expect(body.error.code).toBe(403);
    expect(body.error.status).toBe("PERMISSION_DENIED");
    expect(body.error.message).toContain("aws_access_key_id at request.contents[");
    expect(res.text).not.toContain(AWS_ID);
    expect(up.requests.length).toBe(before);
  });

  test(":countTokens wraps its request the same way and is read", async () => {
    const body = JSON.stringify({
      request: {
        model: "models/gemini-2.5-pro",
        contents: [{ role: "user", parts: [{ text: `n ${TICKET}` }] }],
      },
    });
    const before = up.requests.length;
    const res = await send("/v1internal:countTokens", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer ya29.x",
        "user-agent": "GeminiCLI/0.61.0",
      },
      body,
    });
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(up.requests[before]!.body)).toContain("n [REDACTED:test_ticket]");
    const ev = await requestEvent((e) => e.path === "/v1internal:countTokens");
    expect(ev).toMatchObject({ provider: "code_assist", model: "gemini-2.5-pro", unscanned: null });
  });
});

describe("Codex signed in with ChatGPT", () => {
  test("SSE: the zstd body is decoded and scanned, the client's bytes forwarded unchanged", async () => {
    const r = recorded("codex-chatgpt-responses");
    const wire = new Uint8Array(zstdCompressSync(r.body));
    const before = up.requests.length;
    const res = await send(r.path, {
      method: "POST",
      headers: r.headers("chatgpt-access-token"),
      body: wire,
    });
    expect(res.status).toBe(200);
    expect(res.text).toContain("response.completed");
    const got = up.requests[before]!;
    expect(got.path).toBe("/backend-api/codex/responses");
    expect(got.sha256).toBe(sha(wire));
    expect(got.headers.get("content-encoding")).toBe("zstd");
    const ev = await requestEvent((e) => e.path === r.path && e.method === "POST");
    expect(ev).toMatchObject({
      provider: "chatgpt",
      login: "chatgpt",
      client: "codex",
      model: "gpt-6.1-sol",
      account_id: "acct-fixture-0001",
      unscanned: null,
    });
  });

  test("SSE: a secret in the zstd body is redacted and the body compressed again", async () => {
    const r = recorded("codex-chatgpt-responses");
    const before = up.requests.length;
    const res = await send(r.path, {
      method: "POST",
      headers: r.headers(),
      body: new Uint8Array(zstdCompressSync(r.withPrompt(`ticket ${TICKET}`))),
    });
    expect(res.status).toBe(200);
    const got = up.requests[before]!;
    expect(got.headers.get("content-encoding")).toBe("zstd");
    expect(new TextDecoder().decode(zstdDecompressSync(got.body))).toBe(
      new TextDecoder().decode(r.withPrompt("ticket [REDACTED:test_ticket]")),
    );
  });

  test("SSE: a blocked secret gets the Responses error shape; upstream never sees it", async () => {
    const r = recorded("codex-chatgpt-responses");
    const before = up.requests.length;
    const res = await send(r.path, {
      method: "POST",
      headers: r.headers(),
      body: new Uint8Array(zstdCompressSync(r.withPrompt(AWS_ID))),
    });
    expect(res.status).toBe(400);
    const body = JSON.parse(res.text) as { error: { code: string; type: string; message: string } };
    expect(body.error).toMatchObject({ code: "blocked_by_sluice", type: "invalid_request_error" });
    expect(body.error.message).toMatch(/aws_access_key_id at input\[\d+\]\.content\[0\]\.text/);
    expect(up.requests.length).toBe(before);
  });

  test("WebSocket: the recorded frames pass unchanged; a secret is redacted in its frame; a block is answered with an error event", async () => {
    const upgrade = recorded("codex-chatgpt-ws-upgrade");
    const prewarm = recorded("codex-chatgpt-ws-frame-prewarm", "codex-chatgpt-ws-upgrade");
    const turn = recorded("codex-chatgpt-ws-frame-turn", "codex-chatgpt-ws-upgrade");
    const headers = upgrade.headers("chatgpt-access-token");
    for (const k of ["connection", "upgrade", "sec-websocket-version", "sec-websocket-extensions"])
      delete headers[k];
    const open = () =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`${s.proxyUrl.replace("http", "ws")}${upgrade.path}`, {
          headers,
        } as unknown as string[]);
        ws.onopen = () => resolve(ws);
        ws.onerror = () => reject(new Error("websocket failed to open"));
      });
    const next = (ws: WebSocket) =>
      new Promise<string>((r) => ws.addEventListener("message", (e) => r(String(e.data)), { once: true }));
    const dec = new TextDecoder();

    const ws = await open();
    for (const frame of [prewarm.body, turn.body, turn.withPrompt(`ticket ${TICKET}`)]) {
      const answer = next(ws);
      ws.send(dec.decode(frame));
      await answer;
    }
    const sent = up.wsMessages.slice(-3).map(String);
    expect(sent[0]).toBe(dec.decode(prewarm.body));
    expect(sent[1]).toBe(dec.decode(turn.body));
    expect(sent[2]).toBe(dec.decode(turn.withPrompt("ticket [REDACTED:test_ticket]")));
    const handshake = up.requests.findLast((q) => q.path === upgrade.path && q.method === "GET")!;
    expect(handshake.headers.get("chatgpt-account-id")).toBe("acct-fixture-0001");
    const frameEv = await requestEvent((e) => e.method === "WS" && e.path === upgrade.path);
    expect(frameEv).toMatchObject({
      provider: "chatgpt",
      login: "chatgpt",
      client: "codex",
      unscanned: null,
    });

    const before = up.wsMessages.length;
    const error = next(ws);
    ws.send(dec.decode(turn.withPrompt(AWS_ID)));
    const event = JSON.parse(await error) as { type: string; status_code: number; error: { code: string } };
    expect(event).toMatchObject({ type: "error", status_code: 400, error: { code: "blocked_by_sluice" } });
    expect(up.wsMessages.length).toBe(before);
    // The socket stays open for the next turn.
    const answer = next(ws);
    ws.send(dec.decode(turn.body));
    await answer;
    expect(String(up.wsMessages.at(-1))).toBe(dec.decode(turn.body));
  });

  test("the account check answer reaches the client with NO_CONSTRAINT for the origin it names, nothing else changed", async () => {
    const r = recorded("codex-chatgpt-accounts-check");
    const res = await send(r.path, { method: "GET", headers: r.headers() });
    expect(res.status).toBe(200);
    const sent = JSON.stringify(JSON.parse(recordedAnswer()));
    expect(res.text).toBe(
      sent.replace(/"workspace_backend_origin":"[^"]*"/, '"workspace_backend_origin":"NO_CONSTRAINT"'),
    );
    const ev = await requestEvent((e) => e.path === r.path);
    expect(ev).toMatchObject({ provider: "chatgpt", unscanned: null });
  });
});

describe("Claude Code on a subscription (OAuth)", () => {
  test("the recorded request is anthropic with login oauth, forwarded byte for byte; a block is Anthropic-shaped", async () => {
    const r = recorded("claude-oauth-messages");
    const before = up.requests.length;
    const ok = await send(r.path, { method: "POST", headers: r.headers(OAUTH), body: r.body });
    expect(ok.status).toBe(200);
    expect(up.requests[before]!.sha256).toBe(sha(r.body));
    expect(up.requests[before]!.headers.get("authorization")).toBe(`Bearer ${OAUTH}`);
    const ev = await requestEvent((e) => e.path === r.path && e.upstream_status === 200);
    expect(ev).toMatchObject({
      provider: "anthropic",
      login: "oauth",
      client: "claude-code",
      unscanned: null,
    });
    expect(ev.session_id).toBe("c4271a15-31e9-4b42-90ed-cce3268f243d");

    const blocked = await send(r.path, {
      method: "POST",
      headers: r.headers(OAUTH),
      body: r.withPrompt(AWS_ID),
    });
    expect(blocked.status).toBe(400);
    expect(JSON.parse(blocked.text)).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error" },
    });
    expect(up.requests.length).toBe(before + 1);
  });
});

describe("traffic sluice cannot read is never silent", () => {
  test("counted per tool and reason in /metrics and in the store", async () => {
    const gemini = { "user-agent": "GeminiCLI/0.61.0", authorization: "Bearer ya29.x" };
    // not JSON
    await send("/v1internal:generateContent", {
      method: "POST",
      headers: { ...gemini, "content-type": "application/x-protobuf" },
      body: new Uint8Array([8, 1, 18, 3, 104, 105, 33]),
    });
    // JSON, but not the wrapped request of a content method
    await send("/v1internal:streamGenerateContent?alt=sse", {
      method: "POST",
      headers: { ...gemini, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", payload: { turns: ["hi"] } }),
    });
    // a body that does not decode in its declared content coding (an unknown coding is refused
    // with 415: test/security/content-encoding.test.ts)
    await send("/backend-api/codex/responses", {
      method: "POST",
      headers: {
        "user-agent": "codex_exec/0.169.0",
        "content-encoding": "zstd",
        "content-type": "application/json",
      },
      body: new Uint8Array([31, 157, 144, 1, 2, 3]),
    });
    // no provider claims it
    const unknown = await send("/api/other/thing", {
      method: "POST",
      headers: { "user-agent": "GeminiCLI/0.61.0", "content-type": "application/json" },
      body: "{}",
    });
    expect(unknown.status).toBe(400);

    const metrics = await (await fetch(`${s.proxyUrl}/metrics`)).text();
    expect(metrics).toContain('sluice_unscanned_requests_total{client="gemini-cli",reason="non_json"} 1');
    expect(metrics).toContain(
      'sluice_unscanned_requests_total{client="gemini-cli",reason="unknown_shape"} 1',
    );
    expect(metrics).toContain(
      'sluice_unscanned_requests_total{client="gemini-cli",reason="unknown_provider"} 1',
    );
    expect(metrics).toContain('sluice_unscanned_requests_total{client="codex",reason="encoded"} 1');
    expect(metrics).toMatch(/sluice_client_requests_total\{client="gemini-cli",login="google"\} [1-9]/);
    expect(metrics).toMatch(/sluice_provider_requests_total\{provider="code_assist"\} [1-9]/);

    await requestEvent((e) => e.path === "/api/other/thing");
    await s.runtime.store.flush();
    const unscanned = s.runtime.store.clients.unscanned(1);
    const of = (client: string, reason: string) =>
      unscanned.find((u) => u.client === client && u.reason === reason);
    expect(of("gemini-cli", "non_json")).toMatchObject({
      count: 1,
      last_path: "/v1internal:generateContent",
    });
    expect(of("gemini-cli", "unknown_provider")).toMatchObject({ count: 1, last_path: "/api/other/thing" });
    expect(of("codex", "encoded")?.count).toBe(1);
    // The dashboard's stats say the same (the Overview's scan health).
    const stats = (await (await fetch(`${s.dashboardUrl}/api/v1/stats?days=1`)).json()) as {
      scan_health: {
        unscanned: { total: number; by_reason: Record<string, number>; by_client: Record<string, number> };
      };
    };
    const total = unscanned.reduce((n, u) => n + u.count, 0);
    expect(stats.scan_health.unscanned.total).toBe(total);
    expect(stats.scan_health.unscanned.by_reason).toMatchObject({
      non_json: 1,
      unknown_shape: 1,
      encoded: 1,
    });
    expect(stats.scan_health.unscanned.by_client["gemini-cli"]).toBeGreaterThanOrEqual(3);
    const traffic = s.runtime.store.clients.traffic();
    expect(traffic.find((t) => t.client === "gemini-cli" && t.login === "google")?.provider).toBe(
      "code_assist",
    );
    expect(traffic.find((t) => t.client === "claude-code" && t.login === "oauth")?.provider).toBe(
      "anthropic",
    );
  });
});

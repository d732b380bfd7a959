/**
 * Codex signed in with ChatGPT, told by its account check to send the conversation to a back end of
 * the account's own (`workspace_backend_origin`): through a real sluice to two HTTPS stand-ins, the
 * configured ChatGPT upstream (which answers the account check, recorded from Codex 0.169) and the
 * back end it names. The client receives the answer with NO_CONSTRAINT in place of the origin (every
 * other byte as sent, in its content coding); the conversation that follows, at the OpenAI path as
 * Codex sends it to `openai_base_url` or at the back-end path, over HTTP or WebSocket, reaches the
 * named back end through sluice, scanned (a planted key blocked); an answer sluice cannot rewrite is
 * relayed as it came and counted as a way around sluice.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { gzipSync, zstdCompressSync } from "node:zlib";
import type { RequestEvent } from "../../src/core/bus.ts";
import { recorded } from "../helpers/recorded.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { startUpstream, type Upstream } from "../helpers/upstream.ts";

const AWS_ID = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");
const ACCOUNT = "acct-fixture-0001";
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const sse = () =>
  new Response('data: {"type":"response.completed"}\n\n', {
    headers: { "content-type": "text/event-stream" },
  });

/** The recorded answer's text, naming `origin` for the account (the recorded spacing kept). */
const RECORDED = readFileSync(
  `${import.meta.dir}/../fixtures/logins/codex-chatgpt-accounts-check.answer.json`,
  "utf8",
).trim();
const answerNaming = (origin: string) => RECORDED.replace("https://127.0.0.1:18998", origin);

let up: Upstream; // providers.chatgpt.upstream: answers the account check
let origin: Upstream; // the account's own back end, named in the answer
let s: InProcessSluice;
/** What the stand-in upstream answers to the next account check: bytes and headers. */
let next: { body: Uint8Array<ArrayBuffer> | string; headers?: Record<string, string> };
const events: RequestEvent[] = [];

beforeAll(async () => {
  up = await startUpstream();
  origin = await startUpstream();
  for (const u of [up, origin]) {
    u.on("POST", "/backend-api/codex/responses", sse);
    u.ws("/backend-api/codex/responses", { message: (ws) => ws.send('{"type":"response.completed"}') });
  }
  up.on("GET", "/backend-api/wham/accounts/check", () => new Response(next.body, { headers: next.headers }));
  s = await startSluice({ upstream: up.url });
  s.runtime.bus.on("request", (e) => events.push(e));
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
  await origin?.stop();
});

/** Codex's account check through sluice: the answer as the client receives it (raw bytes). */
async function accountCheck(): Promise<{ res: Response; raw: Uint8Array }> {
  const r = recorded("codex-chatgpt-accounts-check");
  const res = await fetch(`${s.proxyUrl}${r.path}`, {
    headers: r.headers("chatgpt-token"),
    decompress: false,
  });
  return { res, raw: new Uint8Array(await res.arrayBuffer()) };
}

/** The recorded conversation (zstd, as Codex sends it) at `path`, with `prompt` in it. */
function conversation(path: string, prompt = "") {
  const r = recorded("codex-chatgpt-responses");
  const headers = r.headers("chatgpt-token");
  delete headers["x-openai-account-routing-override"]; // Codex sends none to openai_base_url
  const body = new Uint8Array(zstdCompressSync(prompt ? r.withPrompt(prompt) : r.body));
  return fetch(`${s.proxyUrl}${path}`, { method: "POST", headers, body }).then(async (res) => ({
    status: res.status,
    text: await res.text(),
    sent: body,
  }));
}

describe("an account check naming the account's back end", () => {
  test("the client receives NO_CONSTRAINT in place of the origin, every other byte as the back end sent it", async () => {
    next = { body: answerNaming(origin.url), headers: { "content-type": "application/json" } };
    const { res, raw } = await accountCheck();
    expect(res.status).toBe(200);
    const text = new TextDecoder().decode(raw);
    expect(text).toBe(answerNaming("NO_CONSTRAINT"));
    expect(res.headers.get("content-length")).toBe(String(raw.byteLength));
  });

  test("in its content coding: a gzip answer is rewritten and given gzip", async () => {
    next = {
      body: gzipSync(answerNaming(origin.url)),
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    };
    const { res, raw } = await accountCheck();
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(new TextDecoder().decode(Bun.gunzipSync(raw as Uint8Array<ArrayBuffer>))).toBe(
      answerNaming("NO_CONSTRAINT"),
    );
  });

  test("the conversation Codex sends to openai_base_url reaches that back end through sluice, byte for byte, with the account's routing", async () => {
    next = { body: answerNaming(origin.url) };
    await accountCheck();
    const before = { up: up.requests.length, origin: origin.requests.length };
    const mark = events.length;
    const r = await conversation("/v1/responses");
    expect(r.status).toBe(200);
    expect(up.requests.length).toBe(before.up);
    const got = origin.requests.at(-1)!;
    expect(got.path).toBe("/backend-api/codex/responses");
    expect(got.sha256).toBe(sha(r.sent));
    expect(got.headers.get("chatgpt-account-id")).toBe(ACCOUNT);
    expect(got.headers.get("x-openai-account-routing-override")).toBe("us");
    expect(got.headers.get("content-encoding")).toBe("zstd");
    const ev = events.slice(mark).find((e) => e.path === "/backend-api/codex/responses")!;
    expect(ev).toMatchObject({ provider: "chatgpt", login: "chatgpt", client: "codex", unscanned: null });
    // At the back-end path too (a `chatgpt_base_url`-relative provider URL).
    expect((await conversation("/backend-api/codex/responses")).status).toBe(200);
    expect(origin.requests.length).toBe(before.origin + 2);
  });

  test("a planted key in that conversation is blocked and reaches neither back end", async () => {
    next = { body: answerNaming(origin.url) };
    await accountCheck();
    const before = up.requests.length + origin.requests.length;
    const r = await conversation("/v1/responses", AWS_ID);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatchObject({ code: "blocked_by_sluice" });
    expect(JSON.parse(r.text).error.message).toMatch(/aws_access_key_id at input\[\d+\]\.content\[0\]\.text/);
    expect(up.requests.length + origin.requests.length).toBe(before);
  });

  test("over the WebSocket transport, the turn goes to that back end through sluice and a planted key is blocked", async () => {
    next = { body: answerNaming(origin.url) };
    await accountCheck();
    const upgrade = recorded("codex-chatgpt-ws-upgrade");
    const turn = recorded("codex-chatgpt-ws-frame-turn", "codex-chatgpt-ws-upgrade");
    const headers = upgrade.headers("chatgpt-token");
    for (const k of ["connection", "upgrade", "sec-websocket-version", "sec-websocket-extensions"])
      delete headers[k];
    const ws = await new Promise<WebSocket>((resolve, reject) => {
      const w = new WebSocket(`${s.proxyUrl.replace("http", "ws")}/v1/responses`, {
        headers,
      } as unknown as string[]);
      w.onopen = () => resolve(w);
      w.onerror = () => reject(new Error("websocket failed to open"));
    });
    const answer = () =>
      new Promise<string>((r) => ws.addEventListener("message", (e) => r(String(e.data)), { once: true }));
    const dec = new TextDecoder();
    const handshake = origin.requests.findLast((q) => q.method === "GET" && q.path === upgrade.path)!;
    expect(handshake.headers.get("x-openai-account-routing-override")).toBe("us");
    const before = origin.wsMessages.length;
    let reply = answer();
    ws.send(dec.decode(turn.body));
    await reply;
    expect(String(origin.wsMessages.at(-1))).toBe(dec.decode(turn.body));
    reply = answer();
    ws.send(dec.decode(turn.withPrompt(AWS_ID)));
    expect(JSON.parse(await reply)).toMatchObject({ type: "error", error: { code: "blocked_by_sluice" } });
    expect(origin.wsMessages.length).toBe(before + 1);
    ws.close();
  });

  test("another account's conversation, and every other back-end call, go to the configured upstream", async () => {
    next = { body: answerNaming(origin.url) };
    await accountCheck();
    const before = origin.requests.length;
    const r = recorded("codex-chatgpt-responses");
    const headers = { ...r.headers("chatgpt-token"), "chatgpt-account-id": "acct-someone-else" };
    const res = await fetch(`${s.proxyUrl}/v1/responses`, {
      method: "POST",
      headers,
      body: zstdCompressSync(r.body),
    });
    expect(res.status).toBe(200);
    expect(up.requests.at(-1)!.path).toBe("/backend-api/codex/responses");
    await accountCheck(); // the account check itself
    expect(up.requests.at(-1)!.path).toBe("/backend-api/wham/accounts/check");
    expect(origin.requests.length).toBe(before);
  });
});

describe("an answer sluice cannot rewrite is relayed as it came, and said so", () => {
  test("an origin under an escaped key: the answer byte for byte, the account check counted as bypass", async () => {
    const escaped = answerNaming(origin.url).replace(
      "workspace_backend_origin",
      "workspace\\u005fbackend_origin",
    );
    next = { body: escaped };
    const mark = events.length;
    const { res, raw } = await accountCheck();
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(raw)).toBe(escaped);
    const r = recorded("codex-chatgpt-accounts-check");
    expect(await nextEvent(r.path, mark)).toMatchObject({ provider: "chatgpt", unscanned: "bypass" });
    const metrics = await (await fetch(`${s.proxyUrl}/metrics`)).text();
    expect(metrics).toMatch(/sluice_unscanned_requests_total\{client="codex",reason="bypass"\} [1-9]/);
  });

  test("an answer that does not decode in its coding is relayed as it came", async () => {
    const garbage = new Uint8Array([31, 139, 8, 0, 1, 2, 3, 4]);
    next = { body: garbage, headers: { "content-encoding": "gzip" } };
    const { res, raw } = await accountCheck();
    expect(res.status).toBe(200);
    expect([...raw]).toEqual([...garbage]);
  });
});

/** The first request event for `path` from index `from` on, waiting for it when it is still to come. */
function nextEvent(path: string, from: number): Promise<RequestEvent> {
  return new Promise((resolve) => {
    const seen = events.slice(from).find((e) => e.path === path);
    if (seen) return resolve(seen);
    const off = s.runtime.bus.on("request", (e) => {
      if (e.path !== path) return;
      off?.();
      resolve(e);
    });
  });
}

/** Provider detection, header hygiene and client identification, table-driven. */
import { expect, test } from "bun:test";
import { Logger } from "../../src/core/log.ts";
import { clientResponseHeaders, upstreamRequestHeaders } from "../../src/proxy/headers.ts";
import { HostPool } from "../../src/proxy/pool.ts";
import { detectProvider, isStreamingRequest } from "../../src/proxy/provider.ts";
import { identifyClient } from "../../src/proxy/session.ts";

const H = (h: Record<string, string> = {}) => new Headers(h);

test.each([
  ["/v1/messages", {}, "anthropic"],
  ["/v1/messages/count_tokens", {}, "anthropic"],
  ["/v1/complete", {}, "anthropic"],
  ["/v1/chat/completions", {}, "openai"],
  ["/v1/completions", {}, "openai"],
  ["/v1/embeddings", {}, "openai"],
  ["/v1/responses", {}, "openai"],
  ["/v1beta/models/gemini-2.5-pro:generateContent", {}, "gemini"],
  ["/v1/models/gemini-2.5-pro:streamGenerateContent", {}, "gemini"],
  ["/v1beta/models/x:countTokens", {}, "gemini"],
  ["/v1/models", { "x-api-key": "k" }, "anthropic"],
  ["/v1/models", { "anthropic-version": "2023-06-01" }, "anthropic"],
  ["/v1/models", { authorization: "Bearer sk-ant-abc" }, "anthropic"],
  ["/v1/models", { "x-goog-api-key": "AIza" }, "gemini"],
  ["/v1/models", { authorization: "Bearer sk-proj-1" }, "openai"],
  ["/v1/models", { authorization: "Bearer eyJhbGciOi" }, "openai"],
  ["/v1/models", {}, "unknown"],
  ["/other", {}, "unknown"],
] as [string, Record<string, string>, string][])("%s %j → %s", (path, headers, expected) => {
  expect(detectProvider(path, H(headers))).toBe(expected as never);
});

test("streaming requests are recognised", () => {
  expect(isStreamingRequest("/v1/messages", "", { stream: true })).toBe(true);
  expect(isStreamingRequest("/v1/messages", "", { stream: false })).toBe(false);
  expect(isStreamingRequest("/v1beta/models/m:streamGenerateContent", "?alt=sse", undefined)).toBe(true);
});

test("upstream request headers: hop-by-hop, Connection tokens, Host and Content-Length removed", () => {
  const out = upstreamRequestHeaders(
    H({
      connection: "close, X-Foo",
      "x-foo": "1",
      "keep-alive": "timeout=5",
      host: "127.0.0.1:8080",
      "content-length": "10",
      "transfer-encoding": "chunked",
      upgrade: "h2c",
      "accept-encoding": "gzip",
      "x-api-key": "k",
    }),
  );
  expect([...out.keys()].sort()).toEqual(["accept-encoding", "x-api-key"]);
});

test("client response headers keep encoding and cookies, drop hop-by-hop", () => {
  const h = new Headers({
    "content-encoding": "br",
    "transfer-encoding": "chunked",
    connection: "keep-alive",
  });
  h.append("set-cookie", "a=1");
  h.append("set-cookie", "b=2");
  const out = clientResponseHeaders(h);
  expect(out.get("content-encoding")).toBe("br");
  expect(out.get("transfer-encoding")).toBeNull();
  expect(out.getSetCookie()).toEqual(["a=1", "b=2"]);
});

test.each([
  [{ "user-agent": "claude-cli/2.1.328 (external, sdk-cli)" }, "claude-code"],
  [{ "user-agent": "codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm" }, "codex"],
  [{ "user-agent": "codex_cli_rs/0.169.0" }, "codex"],
  [{ "user-agent": "GeminiCLI-tui/0.61.0/gemini-2.5-pro (linux; x64; terminal)" }, "gemini-cli"],
  [{ "user-agent": "Anthropic/JS 1.12.0" }, "anthropic-sdk"],
  [{ "user-agent": "OpenAI/JS 7.57.0" }, "openai-sdk"],
  [{ "x-title": "Cline" }, "cline"],
  [{ "x-title": "Roo Code" }, "roo-code"],
  [{}, "unknown"],
] as [Record<string, string>, string][])("client of %j is %s", (headers, id) => {
  expect(identifyClient(H(headers)).id).toBe(id);
});

test("pool: at most max_connections per host run at once; the rest queue with one warning", async () => {
  const log = new Logger({ stderr: false, level: "warning" });
  const lines: string[] = [];
  log.follow((l) => lines.push(l));
  const pool = new HostPool(2, 1000, log);
  const r1 = await pool.acquire("h");
  const r2 = await pool.acquire("h");
  let third = false;
  const p3 = pool.acquire("h").then((r) => {
    third = true;
    return r;
  });
  const p4 = pool.acquire("h");
  await Promise.resolve();
  expect(third).toBe(false);
  expect(pool.stats().h).toEqual({ busy: 2, queued: 2 });
  expect(lines.filter((l) => l.includes("are busy")).length).toBe(1);
  r1();
  (await p3)();
  r2();
  (await p4)();
  expect(pool.stats().h).toEqual({ busy: 0, queued: 0 });
  expect(pool.hasWarmConnection("h")).toBe(true);
  expect(pool.idleExpired("h")).toBe(false);
  expect(pool.idleExpired("h", Date.now() + 1500)).toBe(true);
  expect(pool.hasWarmConnection("h", Date.now() + 1500)).toBe(false);
  expect(pool.evictIdle(Date.now() + 5000)).toBe(0);
  expect(pool.evictIdle(Date.now() + 20_000)).toBe(1);
  expect(pool.stats().h).toBeUndefined();
});

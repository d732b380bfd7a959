/**
 * Attack: a key written twice in one object. `{"messages":[…secret…],"messages":[…hello…]}` — JSON.parse
 * keeps the last value, so sluice scanned "hello", while a parser that keeps the first sends the
 * secret. Such a payload is ambiguous: by default it is blocked, wherever the repeat is and however
 * the key is spelled; with `proxy.allow_duplicate_keys` every value is scanned.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { findDuplicateKey } from "../../src/payload/duplicate-keys.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";
import { fixture, RawSession, tempHome } from "../mcp/helpers.ts";

const GH = ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"].join("");

let up: Upstream;
let strict: InProcessSluice;
let allowing: InProcessSluice;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg" }));
  strict = await startSluice({ upstream: up.url, dashboard: false });
  allowing = await startSluice({
    upstream: up.url,
    dashboard: false,
    config: { proxy: { allow_duplicate_keys: true } },
  });
});
afterAll(async () => {
  await strict?.stop();
  await allowing?.stop();
  await up?.stop();
});

const post = (via: InProcessSluice, body: string) =>
  fetch(`${via.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k" },
    body,
  });
const reached = (needle: string) =>
  up.requests.some((r) => new TextDecoder().decode(r.body).includes(needle));
const msg = (text: string) => JSON.stringify([{ role: "user", content: text }]);

/** A repeated key at each level of an Anthropic body: the first value holds the token, the last is clean. */
const AT_EVERY_LEVEL: [string, string, string][] = [
  ["root", `{"model":"m","max_tokens":1,"messages":${msg(GH)},"messages":${msg("hello")}}`, "$"],
  [
    "a message",
    `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"${GH}","content":"hello"}]}`,
    "messages[0]",
  ],
  [
    "a content block",
    `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"${GH}","text":"hi"}]}]}`,
    "messages[0].content[0]",
  ],
  [
    "a tool input",
    `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"echo ${GH}","command":"ls"}}]}]}`,
    "messages[0].content[0].input",
  ],
  [
    "the key spelled with escapes",
    `{"model":"m","max_tokens":1,"\\u006d\\u0065ssages":${msg(GH)},"messages":${msg("hello")}}`,
    "$",
  ],
  [
    "metadata 2,000 levels deep",
    `{"model":"m","max_tokens":1,"messages":${msg("hello")},"metadata":${'{"a":'.repeat(2000)}{"k":"${GH}","k":1}${"}".repeat(2000)}}`,
    `metadata${".a".repeat(2000)}`,
  ],
];

describe("blocked as ambiguous by default", () => {
  for (const [where, body, path] of AT_EVERY_LEVEL)
    test(`a key repeated in ${where}`, async () => {
      expect(findDuplicateKey(body)?.path).toBe(path);
      const res = await post(strict, body);
      expect(res.status).toBe(400);
      const message = ((await res.json()) as { error: { message: string } }).error.message;
      expect(message).toContain("ambiguous_json");
      expect(message).toContain("twice in one object");
      expect(message).not.toContain(GH);
      expect(reached(GH)).toBe(false);
    });

  test("a clean body with a repeated key is blocked too: its meaning depends on the parser", async () => {
    const before = up.requests.length;
    const res = await post(
      strict,
      `{"model":"m","max_tokens":1,"messages":${msg("a")},"messages":${msg("b")}}`,
    );
    expect(res.status).toBe(400);
    expect(up.requests.length).toBe(before);
  });

  test("the same key in different objects, and repeats inside a string, are not duplicates", async () => {
    const body = JSON.stringify({
      model: "m",
      max_tokens: 1,
      messages: [
        { role: "user", content: '{"a":1,"a":2} is invalid in strict parsers' },
        { role: "assistant", content: [{ type: "text", text: "ok" }] },
      ],
    });
    expect(findDuplicateKey(body)).toBeNull();
    expect((await post(strict, body)).status).toBe(200);
  });
});

describe("proxy.allow_duplicate_keys: every value is scanned", () => {
  test("a token in the value JSON.parse drops is still found and blocked", async () => {
    for (const [, body] of AT_EVERY_LEVEL.slice(0, 5)) {
      const res = await post(allowing, body);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("github_pat");
    }
    expect(reached(GH)).toBe(false);
  });

  test("a clean body with a repeated key is forwarded as it was sent", async () => {
    const body = `{"model":"m","max_tokens":1,"messages":${msg("first")},"messages":${msg("second")}}`;
    expect((await post(allowing, body)).status).toBe(200);
    expect(new TextDecoder().decode(up.requests.at(-1)!.body)).toBe(body);
  });
});

test("MCP: a tools/call whose arguments repeat a key is refused, and the server never sees it", async () => {
  await using raw = new RawSession(["--", "bun", fixture("echo-server.ts")], { home: tempHome() });
  await raw.initialize();
  raw.send(
    `{"jsonrpc":"2.0","id":"dup-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"${GH}","message":"hi"}}}`,
  );
  const answer = await raw.waitFor((m) => m.id === "dup-1");
  expect(JSON.stringify(answer.error)).toContain("ambiguous_json");
  expect(answer.result).toBeUndefined();
});

/**
 * Request bodies in UTF-16, UTF-32 or another charset: declared in Content-Type, marked by a byte
 * order mark, or only shown by the zero bytes of the JSON's first character. An upstream that honours
 * the charset reads the conversation, so sluice must read it too: each is scanned, a redacted one is
 * written back in its own charset, and a charset sluice cannot read is refused with 415.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import iconv from "iconv-lite";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

const AWS_ID = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");
const GITHUB = ["ghp_", "R8xV2mQ9tL4kW7nB3cF6hJ1pS5dG0aZ2yE8u"].join("");

let up: Upstream;
let s: InProcessSluice;
let redacting: InProcessSluice;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/chat/completions", () => json({ id: "c1", choices: [] }));
  s = await startSluice({ upstream: up.url, dashboard: false });
  redacting = await startSluice({
    upstream: up.url,
    dashboard: false,
    config: { detectors: { secrets: { action: "redact" } }, custom_rules: [] },
  });
});
afterAll(async () => {
  await s?.stop();
  await redacting?.stop();
  await up?.stop();
});

const chat = (text: string) =>
  JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content: text }] });
const BOMS: Record<string, number[]> = {
  "utf-16le": [0xff, 0xfe],
  "utf-16be": [0xfe, 0xff],
  "utf-32le": [0xff, 0xfe, 0, 0],
  "utf-32be": [0, 0, 0xfe, 0xff],
};
const encode = (text: string, charset: string, bom = false) =>
  new Uint8Array([...(bom ? BOMS[charset]! : []), ...iconv.encode(text, charset, { addBOM: false })]);
const post = (
  via: InProcessSluice,
  body: Uint8Array<ArrayBuffer>,
  contentType: string,
  contentEncoding?: string,
) =>
  fetch(`${via.proxyUrl}/v1/chat/completions`, {
    method: "POST",
    headers: {
      authorization: "Bearer sk-test",
      "content-type": contentType,
      ...(contentEncoding ? { "content-encoding": contentEncoding } : {}),
    },
    body,
  });

const CASES: { name: string; charset: string; bom: boolean; contentType: string }[] = [
  {
    name: "UTF-16LE declared",
    charset: "utf-16le",
    bom: false,
    contentType: "application/json; charset=utf-16le",
  },
  {
    name: "UTF-16BE declared",
    charset: "utf-16be",
    bom: false,
    contentType: "application/json; charset=UTF-16BE",
  },
  {
    name: "UTF-16 with a mark",
    charset: "utf-16be",
    bom: true,
    contentType: "application/json; charset=utf-16",
  },
  {
    name: "UTF-32LE declared",
    charset: "utf-32le",
    bom: false,
    contentType: 'application/json; charset="utf-32le"',
  },
  { name: "UTF-32BE with a mark only", charset: "utf-32be", bom: true, contentType: "application/json" },
  { name: "UTF-32LE with a mark only", charset: "utf-32le", bom: true, contentType: "application/json" },
  { name: "UTF-16LE undeclared, no mark", charset: "utf-16le", bom: false, contentType: "application/json" },
  { name: "UTF-32BE undeclared, no mark", charset: "utf-32be", bom: false, contentType: "application/json" },
  {
    name: "windows-1252 declared",
    charset: "windows-1252",
    bom: false,
    contentType: "application/json; charset=windows-1252",
  },
];

for (const c of CASES) {
  test(`${c.name}: a secret is found and blocked`, async () => {
    const before = up.requests.length;
    const res = await post(s, encode(chat(`deploy with ${AWS_ID} café`), c.charset, c.bom), c.contentType);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("aws_access_key_id at messages[0].content");
    expect(up.requests.length).toBe(before);
  });
}

test("a clean body in UTF-32 is forwarded byte for byte", async () => {
  const body = encode(chat("hello, naïve café ✓"), "utf-32le", true);
  const res = await post(s, body, "application/json");
  expect(res.status).toBe(200);
  expect(up.requests.at(-1)!.body).toEqual(body);
});

test("redacted bodies are written back in their own charset and mark", async () => {
  for (const c of [CASES[0]!, CASES[4]!, CASES[8]!]) {
    const res = await post(redacting, encode(chat(`token ${GITHUB} café`), c.charset, c.bom), c.contentType);
    expect(res.status).toBe(200);
    const sent = up.requests.at(-1)!.body;
    if (c.bom) expect([...sent.subarray(0, BOMS[c.charset]!.length)]).toEqual(BOMS[c.charset]!);
    const text = iconv.decode(Buffer.from(sent), c.charset);
    const content = JSON.parse(text).messages[0].content as string;
    expect(content).not.toContain(GITHUB);
    expect(content).toMatch(/^token \[REDACTED[^\]]*\] café$/);
  }
});

test("a charset sluice cannot read is refused with 415 and not forwarded", async () => {
  const before = up.requests.length;
  const res = await post(
    s,
    new TextEncoder().encode(chat(`key ${AWS_ID}`)),
    "application/json; charset=x-made-up",
  );
  expect(res.status).toBe(415);
  expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
    "unsupported charset x-made-up",
  );
  expect(up.requests.length).toBe(before);
});

test("a body that does not decode in its declared coding is still read in its declared charset (found by bun run fuzz)", async () => {
  const before = up.requests.length;
  const res = await post(
    s,
    encode(chat(`key ${AWS_ID}`), "utf-16be"),
    "application/json; charset=utf-16be",
    "deflate",
  );
  expect(res.status).toBe(400);
  expect(up.requests.length).toBe(before);
});

/**
 * Request bodies with a Content-Encoding: compressing a body must not carry a secret past sluice
 * (Codex signed in with ChatGPT compresses every body with zstd), a small compressed body must not
 * expand without bound inside sluice, and a body that lies about its coding is still scanned.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

const AWS_ID = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");

let up: Upstream;
let s: InProcessSluice;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/chat/completions", () => json({ id: "c1", choices: [] }));
  s = await startSluice({ upstream: up.url, config: { proxy: { max_body_size: 1024 * 1024 } } });
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

const chat = (text: string) =>
  new TextEncoder().encode(JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content: text }] }));
const post = (body: Uint8Array<ArrayBuffer>, encoding: string) =>
  fetch(`${s.proxyUrl}/v1/chat/completions`, {
    method: "POST",
    headers: {
      authorization: "Bearer sk-test",
      "content-type": "application/json",
      "content-encoding": encoding,
    },
    body,
  });

test("a secret inside a gzip, zstd or stacked body is found and blocked", async () => {
  const before = up.requests.length;
  for (const [body, enc] of [
    [gzipSync(chat(`key ${AWS_ID}`)), "gzip"],
    [zstdCompressSync(chat(`key ${AWS_ID}`)), "zstd"],
    [zstdCompressSync(gzipSync(chat(`key ${AWS_ID}`))), "gzip, zstd"],
  ] as const) {
    const res = await post(new Uint8Array(body), enc);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("aws_access_key_id at messages[0].content");
  }
  expect(up.requests.length).toBe(before);
});

test("a zstd bomb stops at proxy.max_body_size: refused with 413, not forwarded, sluice unharmed", async () => {
  const bomb = new Uint8Array(zstdCompressSync(new Uint8Array(512 * 1024 * 1024)));
  expect(bomb.byteLength).toBeLessThan(64 * 1024);
  const before = up.requests.length;
  const rss = process.memoryUsage().rss;
  const res = await post(bomb, "zstd");
  expect(res.status).toBe(413);
  expect(await res.text()).toContain("decodes to more than proxy.max_body_size");
  expect(up.requests.length).toBe(before);
  expect(process.memoryUsage().rss - rss).toBeLessThan(256 * 1024 * 1024);
});

test("a plain body that claims a coding it does not have is still scanned as text and blocked", async () => {
  const before = up.requests.length;
  const res = await post(chat(`key ${AWS_ID}`), "zstd");
  expect(res.status).toBe(400);
  expect(up.requests.length).toBe(before);
  const metrics = await (await fetch(`${s.proxyUrl}/metrics`)).text();
  expect(metrics).toMatch(/reason="encoded"\} 1/);
});

test("an unknown Content-Encoding is refused with 415 and a reason, and not forwarded", async () => {
  const before = up.requests.length;
  for (const enc of ["compress", "x-sluice-test", "gzip, snappy"]) {
    const res = await post(chat(`key ${AWS_ID}`), enc);
    expect(res.status).toBe(415);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toContain(`unsupported Content-Encoding ${enc.split(", ").pop()}`);
    expect(body.error.message).toContain("proxy.allow_unknown_encoding");
  }
  expect(up.requests.length).toBe(before);
});

test("with proxy.allow_unknown_encoding an unknown coding is forwarded with its bytes scanned as text", async () => {
  const allowing = await startSluice({
    upstream: up.url,
    config: { proxy: { allow_unknown_encoding: true } },
  });
  try {
    const send = (text: string) =>
      fetch(`${allowing.proxyUrl}/v1/chat/completions`, {
        method: "POST",
        headers: {
          authorization: "Bearer sk-test",
          "content-type": "application/json",
          "content-encoding": "x-custom",
        },
        body: chat(text),
      });
    const before = up.requests.length;
    expect((await send(`key ${AWS_ID}`)).status).toBe(400);
    expect(up.requests.length).toBe(before);
    expect((await send("hello")).status).toBe(200);
    expect(up.requests.length).toBe(before + 1);
  } finally {
    await allowing.stop();
  }
});

/**
 * Two HTTP/1.1 requests pipelined on one connection. `Bun.serve` (uWS) closes the connection when
 * a request head arrives while the response ahead of it is still pending in an async handler: no
 * answer for either request (oven-sh/bun#38128, open; still so in Bun 1.4.5). No AI tool pipelines
 * (every SDK and fetch waits for a response or opens another connection), so sluice documents this
 * as a known limitation in docs/security.md. What must hold meanwhile, and is asserted here: the
 * client is never left hanging, and no request is forwarded without its scan. When a Bun release
 * fixes the bug this test fails on the "no answer" assertions: then update docs/security.md and turn
 * them into "both answered, in order".
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

let up: Upstream;
let s: InProcessSluice;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg_pipelined" }));
  s = await startSluice({ upstream: up.url, dashboard: false });
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

const message = (text: string) => {
  const body = JSON.stringify({ model: "m", max_tokens: 1, messages: [{ role: "user", content: text }] });
  return `POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: k\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

/** Open a connection, send `first`, then `second` when `before()` resolves; collect until the close. */
function exchange(first: string, second: string, before: () => Promise<void>): Promise<string> {
  const u = new URL(s.proxyUrl);
  return new Promise((resolve, reject) => {
    const c = connect(Number(u.port), u.hostname, () => {
      c.write(first);
      void before().then(() => c.write(second));
    });
    let buf = "";
    c.on("data", (d) => (buf += d));
    c.on("error", reject);
    c.on("close", () => resolve(buf));
  });
}

test("two requests in one write: the connection closes with no answer, nothing reaches upstream", async () => {
  const before = up.requests.length;
  const got = await exchange(message("first") + message("second"), "", async () => {});
  expect(got.match(/^HTTP\/1\.1 \d+/gm) ?? []).toEqual([]); // known limitation (oven-sh/bun#38128)
  expect(up.requests.length).toBe(before);
  // The listener is unharmed.
  expect((await fetch(`${s.proxyUrl}/health`)).status).toBe(200);
});

test("a request pipelined behind one already upstream: the close drops the answer, the second is never sent", async () => {
  const before = up.requests.length;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  up.on("POST", "/v1/messages", async () => {
    await held;
    return json({ id: "msg_held" });
  });
  const got = await exchange(message("first"), message("second"), async () => {
    await up.nextRequest();
  });
  release();
  expect(got.match(/^HTTP\/1\.1 \d+/gm) ?? []).toEqual([]); // known limitation (oven-sh/bun#38128)
  expect(
    up.requests.slice(before).map((r) => JSON.parse(new TextDecoder().decode(r.body)).messages[0].content),
  ).toEqual(["first"]);
});

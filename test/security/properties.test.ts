/**
 * Property tests of the request path: a planted secret never reaches the stand-in upstream, whatever
 * JSON shape holds it, however deep, however the body is compressed and in whatever charset it is
 * written, and wherever it is cut in two across neighbouring text blocks. Default policy: every
 * shipped secret rule here blocks. Each run is a real HTTP request through sluice.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from "node:zlib";
import fc from "fast-check";
import iconv from "iconv-lite";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

/** Self-identifying tokens of shipped block rules (built from parts so the repository holds none whole). */
const TOKENS = [
  ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"],
  ["AKIA", "IOSFODNN7", "EXAMPLQ"],
  ["glpat-", "j5ZGtggDPKbMYoKp_n-W"],
  ["sk_", "live_", "rrg8anJg7nW9YPuaXqdzD79lEmlCaGsLw9wbmMor"],
].map((p) => p.join(""));

let up: Upstream;
let s: InProcessSluice;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg" }));
  s = await startSluice({ upstream: up.url, dashboard: false });
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

type Step = string | number;
/** `leaf` at the end of `steps` (object keys and array positions) inside random `filler`. */
function nest(steps: Step[], leaf: unknown, filler: unknown): unknown {
  let v = leaf;
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i]!;
    if (typeof step === "number") {
      const arr: unknown[] = Array.from({ length: step }, () => filler);
      arr.push(v);
      v = arr;
    } else v = { [step]: v, extra: filler };
  }
  return v;
}

const CODINGS: Record<string, (b: Uint8Array) => Uint8Array> = {
  gzip: (b) => gzipSync(b),
  deflate: (b) => deflateSync(b),
  br: (b) => brotliCompressSync(b),
  zstd: (b) => zstdCompressSync(b),
};
const CHARSETS = ["utf-8", "utf-16le", "utf-16be", "utf-32le"] as const;

function encode(
  text: string,
  charset: string,
  codings: string[],
): { body: Uint8Array; headers: Record<string, string> } {
  let body: Uint8Array =
    charset === "utf-8" ? new TextEncoder().encode(text) : new Uint8Array(iconv.encode(text, charset));
  for (const c of codings) body = new Uint8Array(CODINGS[c]!(body));
  const headers: Record<string, string> = {
    "content-type": `application/json; charset=${charset}`,
    "x-api-key": "k",
  };
  if (codings.length > 0) headers["content-encoding"] = codings.join(", ");
  return { body, headers };
}

const word = fc.string({ unit: fc.constantFrom(..."abcdefgh ,.:;-_=/\n"), maxLength: 40 });
const key = fc.string({ unit: fc.constantFrom(..."abcdefghijklmnop_"), minLength: 1, maxLength: 12 });
const shape = fc.array(fc.oneof(key, fc.nat({ max: 3 })), { maxLength: 12 });
const filler = fc.jsonValue({ maxDepth: 2 });
const codings = fc.constantFrom<string[]>(
  [],
  ["gzip"],
  ["deflate"],
  ["br"],
  ["zstd"],
  ["gzip", "zstd"],
  ["br", "gzip"],
);
const charset = fc.constantFrom(...CHARSETS);

/** Where in an Anthropic body the planted value goes. */
const PLACES = ["message", "tool input", "metadata", "system", "tool schema"] as const;

function body(place: (typeof PLACES)[number], leaf: unknown): Record<string, unknown> {
  const base: Record<string, unknown> = {
    model: "claude-sonnet-4-5",
    max_tokens: 64,
    messages: [{ role: "user", content: "hello" }],
  };
  switch (place) {
    case "message":
      base.messages = [
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "text", text: leaf },
          ],
        },
      ];
      break;
    case "tool input":
      base.messages = [
        { role: "user", content: "run it" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_01", name: "Bash", input: leaf }] },
      ];
      break;
    case "metadata":
      base.metadata = leaf;
      break;
    case "system":
      base.system = [{ type: "text", text: leaf }];
      break;
    case "tool schema":
      base.tools = [{ name: "t", description: "d", input_schema: { type: "object", properties: leaf } }];
      break;
  }
  return base;
}

async function refused(payload: { body: Uint8Array; headers: Record<string, string> }): Promise<boolean> {
  const before = up.requests.length;
  const res = await fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: payload.headers,
    body: payload.body as Uint8Array<ArrayBuffer>,
  });
  const text = await res.text();
  expect(res.status).toBeLessThan(500);
  return res.status === 400 && text.includes("sluice blocked") && up.requests.length === before;
}

test("a planted secret in any JSON shape, encoding and charset never reaches upstream", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...TOKENS),
      fc.constantFrom(...PLACES),
      shape,
      filler,
      word,
      word,
      codings,
      charset,
      async (token, place, steps, fill, pre, post, cods, cs) => {
        const leafText = `${pre} ${token} ${post}`;
        const leaf = place === "message" || place === "system" ? leafText : nest(steps, leafText, fill);
        const text = JSON.stringify(body(place, leaf));
        expect(await refused(encode(text, cs, cods))).toBe(true);
      },
    ),
    { numRuns: 150 },
  );
});

test("a secret cut anywhere across two neighbouring text blocks never reaches upstream", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...TOKENS),
      fc.double({ min: 0.01, max: 0.99, noNaN: true }),
      word,
      word,
      codings,
      async (token, at, pre, post, cods) => {
        const cut = Math.max(1, Math.min(token.length - 1, Math.round(token.length * at)));
        const text = JSON.stringify({
          model: "claude-sonnet-4-5",
          max_tokens: 64,
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: `${pre} ${token.slice(0, cut)}` },
                { type: "text", text: `${token.slice(cut)} ${post}` },
              ],
            },
          ],
        });
        expect(await refused(encode(text, "utf-8", cods))).toBe(true);
      },
    ),
    { numRuns: 150 },
  );
});

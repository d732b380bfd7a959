/**
 * Fuzzing the request path: random requests through the real proxy to the stand-in upstream for a
 * fixed budget — random bytes, random JSON at random depth, random provider paths, random and lying
 * headers (Content-Type, charset, Content-Encoding stacks that do or do not match the bytes) — half
 * of them with a token of a shipped block rule planted between line breaks. What must hold for
 * every one: no 5xx from sluice (the upstream always answers), and no body that holds the token
 * reaches the upstream, read as the upstream could read it (its bytes as UTF-8, or decoded by the
 * headers it was sent with). sluice must answer /health at the end.
 *
 * `bun run fuzz [seconds] [seed]` prints the figures; test/security/fuzz.test.ts runs a short budget.
 */
import { MIMEType } from "node:util";
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from "node:zlib";
import fc from "fast-check";
import iconv from "iconv-lite";
import { decodeBody } from "../../src/proxy/encoding.ts";
import { startSluice } from "../helpers/sluice.ts";
import { json, startUpstream } from "../helpers/upstream.ts";

const TOKENS = [
  ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"],
  ["AKIA", "IOSFODNN7", "EXAMPLQ"],
  ["glpat-", "j5ZGtggDPKbMYoKp_n-W"],
].map((p) => p.join(""));

const PATHS = [
  "/v1/messages",
  "/v1/chat/completions",
  "/v1/responses",
  "/v1beta/models/gemini-2.5-pro:generateContent",
  "/v1internal:generateContent",
  "/backend-api/codex/responses",
];
const CODINGS: Record<string, (b: Uint8Array) => Uint8Array> = {
  gzip: (b) => gzipSync(b),
  deflate: (b) => deflateSync(b),
  br: (b) => brotliCompressSync(b),
  zstd: (b) => zstdCompressSync(b),
};

interface Case {
  path: string;
  kind: "bytes" | "json" | "deep";
  bytes: Uint8Array;
  json: unknown;
  depth: number;
  token: string | null;
  contentType: string | null;
  charset: string | null;
  /** Codings applied to the body. */
  applied: string[];
  /** The Content-Encoding header sent (may lie). */
  declared: string | null;
  extra: [string, string][];
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  path: fc.constantFrom(...PATHS),
  kind: fc.constantFrom("bytes", "json", "json", "deep"),
  bytes: fc.uint8Array({ maxLength: 2048 }),
  json: fc.jsonValue({ maxDepth: 5 }),
  depth: fc.integer({ min: 1, max: 20_000 }),
  token: fc.option(fc.constantFrom(...TOKENS), { freq: 2 }),
  contentType: fc.option(
    fc.constantFrom("application/json", "text/plain", "application/x-protobuf", "garbage/;;"),
    {
      freq: 4,
    },
  ),
  charset: fc.option(fc.constantFrom("utf-8", "utf-16le", "utf-16be", "utf-32le", "latin1", "x-bogus"), {
    freq: 2,
  }),
  applied: fc.constantFrom<string[]>([], [], ["gzip"], ["zstd"], ["br"], ["deflate"], ["gzip", "br"]),
  declared: fc.oneof(
    { arbitrary: fc.constant(null), weight: 3 },
    {
      arbitrary: fc.constantFrom("gzip", "zstd", "br", "deflate", "identity", "x-bogus", "gzip, gzip"),
      weight: 1,
    },
  ),
  extra: fc.array(
    fc.tuple(
      fc.constantFrom("x-stainless-lang", "user-agent", "anthropic-version", "x-goog-api-client", "accept"),
      fc.string({ maxLength: 40 }).map((v) => v.replace(/[^\x20-\x7e]/g, "")),
    ),
    { maxLength: 3 },
  ),
});

/** The text of a case before charset and coding: the token, when planted, between line breaks. */
function textOf(c: Case): string {
  const planted = c.token ? `\n${c.token}\n` : "";
  if (c.kind === "deep") {
    const inner = JSON.stringify(`payload ${planted}`);
    return `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}],"metadata":${"[".repeat(c.depth)}${inner}${"]".repeat(c.depth)}}`;
  }
  if (c.kind === "json")
    return JSON.stringify({
      model: "m",
      messages: [{ role: "user", content: [{ type: "text", text: `look ${planted}` }] }],
      contents: [{ role: "user", parts: [{ text: "x" }] }],
      extra: c.json,
    });
  return new TextDecoder().decode(c.bytes) + planted;
}

function request(c: Case): { body: Uint8Array; headers: Record<string, string> } {
  const text = textOf(c);
  const cs = c.charset && c.charset !== "x-bogus" ? c.charset : "utf-8";
  let body: Uint8Array =
    cs === "utf-8" ? new TextEncoder().encode(text) : new Uint8Array(iconv.encode(text, cs));
  for (const a of c.applied) body = new Uint8Array(CODINGS[a]!(body));
  const headers: Record<string, string> = { "x-api-key": "k", authorization: "Bearer k" };
  if (c.contentType)
    headers["content-type"] = c.charset ? `${c.contentType}; charset=${c.charset}` : c.contentType;
  const encoding = c.declared ?? (c.applied.length > 0 ? c.applied.join(", ") : null);
  if (encoding) headers["content-encoding"] = encoding;
  for (const [k, v] of c.extra) headers[k] = v;
  return { body, headers };
}

/** The charset a Content-Type declares, when it parses as a MIME type. */
function declared(contentType: string | null): string | null {
  try {
    return contentType ? (new MIMEType(contentType).params.get("charset") ?? null) : null;
  } catch {
    return null;
  }
}

/**
 * Whether a body the upstream received holds `token`, read in every way an upstream could: its
 * bytes (or its content-decoded bytes) as UTF-8, in the charset its Content-Type declares, and as
 * UTF-16 or UTF-32 when a byte order mark starts it.
 */
function holds(body: Uint8Array, headers: Headers, token: string): boolean {
  const readings: Uint8Array[] = [body];
  const decoded = decodeBody(body, headers.get("content-encoding"), 64 << 20);
  if (decoded.ok) readings.push(decoded.bytes);
  const charset = declared(headers.get("content-type"));
  for (const r of readings) {
    const b = Buffer.from(r);
    if (b.includes(token)) return true;
    if (charset && iconv.encodingExists(charset) && iconv.decode(b, charset).includes(token)) return true;
    const bom =
      b[0] === 0xff && b[1] === 0xfe ? "utf-16le" : b[0] === 0xfe && b[1] === 0xff ? "utf-16be" : null;
    if (bom && (iconv.decode(b, bom).includes(token) || iconv.decode(b, "utf-32le").includes(token)))
      return true;
  }
  return false;
}

export interface FuzzResult {
  requests: number;
  planted: number;
  blocked: number;
  refused: number;
  forwarded: number;
  faults: { status: number; case: string }[];
  leaks: { case: string }[];
  perSecond: number;
  healthy: boolean;
}

/** Send random requests for `seconds`; the same seed gives the same requests. */
export async function fuzzRequestPath(seconds: number, seed = 1): Promise<FuzzResult> {
  const up = await startUpstream();
  up.on("POST", /.*/, () => json({ id: "ok" }));
  const s = await startSluice({
    upstream: up.url,
    dashboard: false,
    config: { proxy: { max_body_size: 1 << 20 } },
  });
  const r: FuzzResult = {
    requests: 0,
    planted: 0,
    blocked: 0,
    refused: 0,
    forwarded: 0,
    faults: [],
    leaks: [],
    perSecond: 0,
    healthy: false,
  };
  const started = performance.now();
  let batch = 0;
  try {
    while (performance.now() - started < seconds * 1000) {
      const cases = fc.sample(caseArb, { seed: seed + batch++, numRuns: 50 });
      for (const c of cases) {
        const { body, headers } = request(c);
        const before = up.requests.length;
        const res = await fetch(`${s.proxyUrl}${c.path}`, {
          method: "POST",
          headers,
          body: body as Uint8Array<ArrayBuffer>,
        });
        const text = await res.text();
        r.requests++;
        if (c.token) r.planted++;
        const shown = () => JSON.stringify({ ...c, bytes: c.bytes.length, json: undefined });
        if (res.status >= 500)
          r.faults.push({ status: res.status, case: `${shown()} ${text.slice(0, 200)}` });
        if (up.requests.length > before) {
          r.forwarded++;
          const got = up.requests[up.requests.length - 1]!;
          if (c.token && holds(got.body, got.headers, c.token)) r.leaks.push({ case: shown() });
        } else if (text.includes("sluice blocked")) r.blocked++;
        else r.refused++;
        if (performance.now() - started >= seconds * 1000) break;
      }
    }
    r.healthy = (await fetch(`${s.proxyUrl}/health`)).status === 200;
  } finally {
    r.perSecond = Math.round(r.requests / ((performance.now() - started) / 1000));
    await s.stop();
    await up.stop();
  }
  return r;
}

/**
 * Request bodies sent with a `Content-Encoding`: decoded to be scanned, encoded again when redacted.
 * Codex signed in with ChatGPT sends every request body zstd-compressed, so without this its whole
 * conversation would pass unread. gzip, deflate (zlib), br and zstd, also stacked (`gzip, br`: applied
 * in that order, undone in reverse), with node:zlib; the decoded size is bounded so that a small
 * compressed body cannot expand past the scan limit.
 */
import {
  brotliCompressSync,
  brotliDecompressSync,
  deflateSync,
  gunzipSync,
  gzipSync,
  inflateSync,
  zstdCompressSync,
  zstdDecompressSync,
} from "node:zlib";

type Codec = { decode(b: Uint8Array, max: number): Uint8Array; encode(b: Uint8Array): Uint8Array };

const CODECS: Record<string, Codec> = {
  gzip: { decode: (b, max) => gunzipSync(b, { maxOutputLength: max }), encode: (b) => gzipSync(b) },
  "x-gzip": { decode: (b, max) => gunzipSync(b, { maxOutputLength: max }), encode: (b) => gzipSync(b) },
  deflate: { decode: (b, max) => inflateSync(b, { maxOutputLength: max }), encode: (b) => deflateSync(b) },
  br: {
    decode: (b, max) => brotliDecompressSync(b, { maxOutputLength: max }),
    encode: (b) => brotliCompressSync(b),
  },
  zstd: {
    decode: (b, max) => zstdDecompressSync(b, { maxOutputLength: max }),
    encode: (b) => zstdCompressSync(b),
  },
};

export type Decoded =
  | { ok: true; bytes: Uint8Array; codings: string[] }
  | { ok: false; reason: "unknown" | "encoded" | "too_large"; error: string };

/** The codings of a `Content-Encoding` header, in the order they were applied (identity left out). */
export function contentCodings(header: string | null): string[] {
  if (!header) return [];
  return header
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
}

/**
 * Undo a body's content codings. Fails with `unknown` for a coding sluice cannot undo, `encoded` for a
 * body that does not decode, and `too_large` when the decoded body would pass `maxBytes`.
 * @example decodeBody(zstdBytes, "zstd", 50 << 20) // { ok: true, bytes: <the JSON>, codings: ["zstd"] }
 */
export function decodeBody(bytes: Uint8Array, header: string | null, maxBytes: number): Decoded {
  const codings = contentCodings(header);
  let out = bytes;
  for (let i = codings.length - 1; i >= 0; i--) {
    const codec = CODECS[codings[i]!];
    if (!codec) return { ok: false, reason: "unknown", error: `unsupported Content-Encoding ${codings[i]}` };
    try {
      out = new Uint8Array(codec.decode(out, maxBytes));
    } catch (e) {
      if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE")
        return {
          ok: false,
          reason: "too_large",
          error: `${codings[i]} body decodes to more than proxy.max_body_size (${maxBytes})`,
        };
      return {
        ok: false,
        reason: "encoded",
        error: `${codings[i]} body does not decode: ${(e as Error).message}`,
      };
    }
  }
  return { ok: true, bytes: out, codings };
}

/** Apply `codings` (as returned by decodeBody) to a body again. */
export function encodeBody(bytes: Uint8Array, codings: string[]): Uint8Array {
  let out = bytes;
  for (const c of codings) out = new Uint8Array(CODECS[c]!.encode(out));
  return out;
}

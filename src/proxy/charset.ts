/**
 * Request bodies in a character set other than UTF-8: turned into UTF-8 to be scanned, and back
 * when redacted. A JSON body sent as UTF-16 or UTF-32 (declared in `Content-Type: …; charset=`, or
 * marked by a byte order mark) reads as noise to a UTF-8 scanner, while an upstream that honours
 * the charset reads the conversation in it.
 *
 * The charset comes from, in this order: a byte order mark (UTF-8, UTF-16 or UTF-32, either byte
 * order), the `charset` parameter, and for a JSON body the zero bytes around its first characters
 * (JSON text starts with an ASCII character, so `00 00 00 7B` can only be UTF-32BE). Conversions
 * use iconv-lite: TextDecoder has no UTF-32 and TextEncoder writes UTF-8 only.
 */
import { MIMEType } from "node:util";
import iconv from "iconv-lite";

/** How a body was written, to write a redacted one the same way. */
export interface Charset {
  /** The iconv-lite name: `utf-16le`, `utf-32be`, `windows-1252`. */
  name: string;
  /** Whether the body started with a byte order mark. */
  bom: boolean;
}

export type Recoded = { ok: true; bytes: Uint8Array; charset: Charset | null } | { ok: false; error: string };

/** Names of UTF-8 (and its subset ASCII): bodies in them are scanned as they are. */
const UTF8 = new Set(["utf-8", "utf8", "unicode-1-1-utf-8", "us-ascii", "ascii"]);

/** Whether a declared charset (null: none declared) is read as UTF-8. */
export function isUtf8Charset(declared: string | null): boolean {
  return declared === null || UTF8.has(declared);
}

/** The charset a byte order mark at the start of `b` stands for, with the mark's length. */
function byBom(b: Uint8Array): { name: string; length: number } | null {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return { name: "utf-8", length: 3 };
  if (b[0] === 0x00 && b[1] === 0x00 && b[2] === 0xfe && b[3] === 0xff)
    return { name: "utf-32be", length: 4 };
  if (b[0] === 0xff && b[1] === 0xfe && b[2] === 0x00 && b[3] === 0x00)
    return { name: "utf-32le", length: 4 };
  if (b[0] === 0xfe && b[1] === 0xff) return { name: "utf-16be", length: 2 };
  if (b[0] === 0xff && b[1] === 0xfe) return { name: "utf-16le", length: 2 };
  return null;
}

/** For a body without a mark or a declared charset: the UTF-16/32 that the zero bytes of its first character show. */
function byZeros(b: Uint8Array): string | null {
  if (b.length < 4) return null;
  const z = (i: number) => b[i] === 0;
  if (z(0) && z(1) && z(2) && !z(3)) return "utf-32be";
  if (!z(0) && z(1) && z(2) && z(3)) return "utf-32le";
  if (z(0) && !z(1) && z(2) && !z(3)) return "utf-16be";
  if (!z(0) && z(1) && !z(2) && z(3)) return "utf-16le";
  return null;
}

/**
 * The last Content-Type read and its charset: a tool sends the same one with every request, and
 * parsing it costs far more than comparing it.
 */
let lastType: string | null = null;
let lastCharset: string | null = null;

/** The `charset` parameter of a Content-Type, lower-cased; null when there is none (or no valid type). */
export function declaredCharset(contentType: string | null): string | null {
  if (!contentType) return null;
  if (contentType !== lastType) {
    lastCharset = parseCharset(contentType);
    lastType = contentType;
  }
  return lastCharset;
}

function parseCharset(contentType: string): string | null {
  try {
    return new MIMEType(contentType).params.get("charset")?.trim().toLowerCase() || null;
  } catch {
    // A Content-Type that is not a MIME type declares no charset; the body is read by its bytes.
    return null;
  }
}

/**
 * `bytes` as UTF-8 (without a byte order mark), and the charset to write a redacted body in.
 * Fails for a charset sluice cannot read.
 * @example toUtf8(utf16leBytes, "application/json; charset=utf-16le") // { ok: true, bytes: <UTF-8>, charset: { name: "utf-16le", bom: false } }
 */
export function toUtf8(bytes: Uint8Array, contentType: string | null): Recoded {
  const bom = byBom(bytes);
  if (bom?.name === "utf-8") return { ok: true, bytes, charset: null };
  const declared = declaredCharset(contentType);
  const name =
    bom?.name ?? (declared && !UTF8.has(declared) ? declared : null) ?? (declared ? null : byZeros(bytes));
  if (!name) return { ok: true, bytes, charset: null };
  if (!iconv.encodingExists(name)) return { ok: false, error: `unsupported charset ${name}` };
  const text = iconv.decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), name, {
    stripBOM: true,
  });
  return { ok: true, bytes: new TextEncoder().encode(text), charset: { name, bom: bom !== null } };
}

/** A UTF-8 body (a redacted one) written back in `charset`. */
export function fromUtf8(bytes: Uint8Array, charset: Charset): Uint8Array {
  const text = new TextDecoder().decode(bytes);
  return new Uint8Array(iconv.encode(text, charset.name, { addBOM: charset.bom }));
}

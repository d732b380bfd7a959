/**
 * The text to give JSON.parse for a request body, with every non-ASCII character written as a
 * `\uXXXX` escape, so that the text is pure ASCII.
 *
 * Why: a body of a megabyte with a single "’" decodes to a UTF-16 string, and JSON.parse of a UTF-16
 * text makes every string of the result UTF-16 too: twice the memory for each segment the scanner
 * hashes and scans (~1.3 ms of a 10 ms cold scan of a 1 MB Claude Code body). With the escapes the
 * source is Latin-1 and only the strings that hold such characters are UTF-16. JSON.parse gives the
 * same value for an escape as for the character.
 *
 * Returns null (the caller decodes as usual) when this would not pay or could change the meaning:
 * more than 1/32 of the body outside ASCII, a byte order mark at the start (TextDecoder drops it), or
 * a non-ASCII character right after a backslash (`"\é"` is invalid JSON; `"\\u00e9"` would not be).
 */
import { isAscii } from "node:buffer";

const utf8 = new TextDecoder("utf-8", { fatal: false });
/** For runs inside the body: a U+FEFF there is a character, not a byte order mark to drop. */
const utf8Keep = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
/** Bodies are split down to chunks of this size to find their non-ASCII bytes. */
const CHUNK = 64;

export function asciiJsonSource(bytes: Uint8Array): string | null {
  const n = bytes.length;
  if (isAscii(bytes)) return utf8.decode(bytes);
  if (n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return null;
  // Chunks holding non-ASCII bytes, found by halving (isAscii is vectorised): few look-ups for a
  // body with a few such characters; give up past the budget.
  const dirty: number[] = [];
  const budget = n >> 5;
  let dirtyBytes = 0;
  const find = (lo: number, hi: number): boolean => {
    if (isAscii(bytes.subarray(lo, hi))) return true;
    if (hi - lo <= CHUNK) {
      dirty.push(lo, hi);
      dirtyBytes += hi - lo;
      return dirtyBytes <= budget;
    }
    const mid = (lo + hi) >> 1;
    return find(lo, mid) && find(mid, hi);
  };
  if (!find(0, n)) return null;
  const parts: string[] = [];
  let cursor = 0;
  for (let d = 0; d < dirty.length; d += 2) {
    const hi = dirty[d + 1]!;
    for (let i = Math.max(dirty[d]!, cursor); i < hi; i++) {
      if (bytes[i]! < 0x80) continue;
      if (i > 0 && bytes[i - 1] === 0x5c) return null;
      // A run of non-ASCII bytes holds whole UTF-8 sequences (their bytes are all >= 0x80), and may
      // run past the chunk.
      let j = i + 1;
      while (j < n && bytes[j]! >= 0x80) j++;
      if (i > cursor) parts.push(utf8.decode(bytes.subarray(cursor, i)));
      const run = utf8Keep.decode(bytes.subarray(i, j));
      let esc = "";
      for (let k = 0; k < run.length; k++) esc += `\\u${run.charCodeAt(k).toString(16).padStart(4, "0")}`;
      parts.push(esc);
      cursor = j;
      i = j - 1;
    }
  }
  if (cursor < n) parts.push(utf8.decode(bytes.subarray(cursor, n)));
  return parts.join("");
}

/**
 * A request body parsed as JSON with the text it was parsed from, or undefined when it is not JSON.
 * Parses the ASCII source when that pays (see above); `decoded` supplies (and may cache) the plain
 * decoded text otherwise.
 */
export function parseJsonSource(
  bytes: Uint8Array,
  decoded: () => string = () => utf8.decode(bytes),
): { json: unknown; source: string } | undefined {
  const source = asciiJsonSource(bytes) ?? decoded();
  let i = 0;
  while (
    i < source.length &&
    (source[i] === " " || source[i] === "\n" || source[i] === "\r" || source[i] === "\t")
  )
    i++;
  const first = source[i];
  if (first !== "{" && first !== "[" && first !== '"') return undefined;
  try {
    return { json: JSON.parse(source), source };
  } catch {
    return undefined;
  }
}

/**
 * A request body's JSON value and the text it was parsed from, when it is JSON: a body that is
 * declared JSON or starts like an object or array. Undefined for an empty body, another type, or
 * one that does not parse.
 */
export function parseJsonBody(
  body: Uint8Array,
  contentType: string | null,
): { json: unknown; source: string } | undefined {
  if (body.byteLength === 0) return undefined;
  const first = body[0];
  if (!(contentType?.includes("json") || first === 0x7b || first === 0x5b)) return undefined;
  return parseJsonSource(body);
}

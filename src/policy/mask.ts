/**
 * What of a matched value may leave the scanner: a masked preview and hashes (SPEC §1 "raw matched
 * value is never written"; NAMES.md). The raw value itself stays in memory inside the scanner.
 */
const MAX_STARS = 32;

/**
 * A copy of `s` that shares no memory with the string it was cut from. In JavaScriptCore (and V8) a
 * slice is a view of its base string and a concatenation a rope over its parts, so a preview built
 * from `value.slice(0, 4)` would keep the whole scanned text alive (a 1 GB scan grew to 1.9 GB).
 * `String.fromCharCode` builds a new string from the code units, so the copy is exact (lone
 * surrogates included) and owns its storage.
 */
export function copyString(s: string): string {
  const n = s.length;
  if (n === 0) return "";
  const CHUNK = 4096;
  if (n <= CHUNK) {
    const codes = new Array<number>(n);
    for (let k = 0; k < n; k++) codes[k] = s.charCodeAt(k);
    return String.fromCharCode.apply(null, codes);
  }
  const parts: string[] = [];
  for (let i = 0; i < n; i += CHUNK) parts.push(copyString(s.slice(i, Math.min(n, i + CHUNK))));
  return parts.join("");
}

/** One character of a kept end: whitespace is shown as a star. */
const keptChar = (c: number) =>
  c === 32 ||
  (c >= 9 && c <= 13) ||
  c === 0xa0 ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0xfeff ||
  c === 0x3000 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x1680 ||
  c === 0x202f ||
  c === 0x205f
    ? 42
    : c;

/**
 * `AKIA************MPLE`: the first and last four characters with stars between for values of 12+
 * characters; two and two for 8 to 11; one leading character for shorter ones. Long values are
 * capped at 32 stars. Whitespace inside the kept ends is shown as stars too. The preview is a new
 * string built from character codes: it never references the scanned text (see copyString).
 * @example maskValue("AKIAIOSFODNN7EXAMPLE") // "AKIA************MPLE"
 */
export function maskValue(value: string): string {
  const n = value.length;
  const keep = n >= 12 ? 4 : n >= 8 ? 2 : n >= 4 ? 1 : 0;
  const codes: number[] = [];
  if (keep === 0) {
    for (let k = Math.min(MAX_STARS, Math.max(1, n)); k > 0; k--) codes.push(42);
  } else if (n < 8) {
    codes.push(keptChar(value.charCodeAt(0)));
    for (let k = 1; k < n; k++) codes.push(42);
  } else {
    for (let k = 0; k < keep; k++) codes.push(keptChar(value.charCodeAt(k)));
    for (let k = Math.min(MAX_STARS, Math.max(1, n - 2 * keep)); k > 0; k--) codes.push(42);
    for (let k = n - keep; k < n; k++) codes.push(keptChar(value.charCodeAt(k)));
  }
  return String.fromCharCode.apply(null, codes);
}

/**
 * sha256 hex of a value (UTF-8, lone surrogates as U+FFFD, as node:crypto hashes a string): the dedup
 * key of a finding. Bun's native hasher: a scan hashes every finding, and node:crypto's createHash
 * cost ~10 µs a call (a few ms for a repository full of test secrets) against under 1 µs here.
 * @example contentHash("abc") // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 */
export function contentHash(value: string): string {
  return Bun.SHA256.hash(value, "hex");
}

/** HMAC-SHA-256 hex of a value with the installation key (the same bytes as node:crypto's createHmac). */
export function valueHash(value: string, key: Uint8Array): string {
  return new Bun.CryptoHasher("sha256", key).update(value).digest("hex");
}

/**
 * What of a matched value may leave the scanner: a masked preview and hashes, since a raw matched
 * value is never written anywhere. The raw value itself stays in memory inside the scanner.
 */
const MAX_STARS = 32;

/**
 * A copy of `s` that shares no memory with the string it was cut from. In JavaScriptCore (and V8) a
 * slice is a view of its base string and a concatenation a rope over its parts, and a slice of a
 * rope can still be a view of one of its parts, so a preview built from `value.slice(0, 4)` would
 * keep the whole scanned text alive (a 1 GB scan grew to 1.9 GB). A JSON round trip builds a new
 * string from the characters: exact for every string (lone surrogates are written as `\udXXX` and
 * read back), and 3-4 times quicker than String.fromCharCode over an array of the codes.
 */
export function copyString(s: string): string {
  return s.length === 0 ? "" : (JSON.parse(JSON.stringify(s)) as string);
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

/** Runs of stars, by length (0 to MAX_STARS). */
const STARS: string[] = Array.from({ length: MAX_STARS + 1 }, (_, k) => "*".repeat(k));

/**
 * `AKIA************MPLE`: the first and last four characters with stars between for values of 12+
 * characters; two and two for 8 to 11; one leading character for shorter ones. Long values are
 * capped at 32 stars. Whitespace inside the kept ends is shown as stars too. The kept ends are new
 * strings built from character codes: the preview never references the scanned text (see
 * copyString).
 * @example maskValue("AKIAIOSFODNN7EXAMPLE") // "AKIA************MPLE"
 */
export function maskValue(value: string): string {
  const n = value.length;
  const at = (k: number) => keptChar(value.charCodeAt(k));
  if (n < 4) return STARS[Math.max(1, n)]!;
  if (n < 8) return String.fromCharCode(at(0)) + STARS[n - 1];
  if (n < 12)
    return String.fromCharCode(at(0), at(1)) + STARS[n - 4] + String.fromCharCode(at(n - 2), at(n - 1));
  return (
    String.fromCharCode(at(0), at(1), at(2), at(3)) +
    STARS[Math.min(MAX_STARS, n - 8)] +
    String.fromCharCode(at(n - 4), at(n - 3), at(n - 2), at(n - 1))
  );
}

/**
 * The stored dedup key of a finding: HMAC-SHA-256 (installation key) over the hex SHA-256 of the
 * value (UTF-8, lone surrogates as U+FFFD, as node:crypto hashes a string). Keyed, so that a stored
 * hash of a short value (an SSN, a card number, an email address) cannot be reversed by hashing
 * guesses; over the digest rather than the value, so that a database written before hashes were
 * keyed is brought over by `keyDigest(old, key)` and deduplicates with new rows (see the store's
 * migrations). Without a key (`sluice scan`, which stores nothing) it is the plain digest, kept in
 * memory only. Bun's native hashers: a scan hashes every finding, and node:crypto cost ~10 µs a call.
 * @example contentHash("abc", null) // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 */
export function contentHash(value: string, key: Uint8Array | null): string {
  const digest = Bun.SHA256.hash(value, "hex");
  return key ? keyDigest(digest, key) : digest;
}

/** HMAC-SHA-256 hex of a value with the installation key (the same bytes as node:crypto's createHmac). */
export function valueHash(value: string, key: Uint8Array): string {
  return keyedHasher(key).copy().update(value).digest("hex");
}

/**
 * An HMAC hasher that has taken in `key` and nothing else, made once per key: a copy of it costs
 * less than setting up the key again, and every finding is hashed twice. The installation key is
 * never changed in place (a new key is a new array).
 */
function keyedHasher(key: Uint8Array): Bun.CryptoHasher {
  let h = KEYED.get(key);
  if (!h) KEYED.set(key, (h = new Bun.CryptoHasher("sha256", key)));
  return h;
}
const KEYED = new WeakMap<Uint8Array, Bun.CryptoHasher>();

/** A plain hex digest keyed with the installation key: `contentHash(v, key) === keyDigest(sha256(v), key)`. */
export function keyDigest(digest: string, key: Uint8Array): string {
  return valueHash(digest, key);
}

/**
 * The stored hash of a credential (`api_key_hash`): 16 hex characters, keyed like `contentHash` over
 * the plain 16-character digest that was stored before hashes were keyed (`shortDigest`).
 */
export function credentialHash(credential: string, key: Uint8Array | null): string {
  const short = shortDigest(credential);
  return key ? keyDigest(short, key).slice(0, 16) : short;
}

/** The first 16 hex characters of a SHA-256: a grouping key that is not itself stored. */
export function shortDigest(text: string): string {
  return Bun.SHA256.hash(text, "hex").slice(0, 16);
}

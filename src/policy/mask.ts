/**
 * What of a matched value may leave the scanner: a masked preview and hashes (SPEC §1 "raw matched
 * value is never written"; NAMES.md). The raw value itself stays in memory inside the scanner.
 */
import { createHash, createHmac } from "node:crypto";

const MAX_STARS = 32;

/**
 * `AKIA************MPLE`: the first and last four characters with stars between for values of 12+
 * characters; two and two for 8 to 11; one leading character for shorter ones. Long values are
 * capped at 32 stars. Whitespace inside the kept ends is shown as stars too.
 * @example maskValue("AKIAIOSFODNN7EXAMPLE") // "AKIA************MPLE"
 */
export function maskValue(value: string): string {
  const n = value.length;
  const keep = n >= 12 ? 4 : n >= 8 ? 2 : n >= 4 ? 1 : 0;
  const stars = "*".repeat(Math.min(MAX_STARS, Math.max(1, n - 2 * keep)));
  const clean = (s: string) => s.replace(/\s/g, "*");
  if (keep === 0) return stars;
  if (n < 8) return clean(value.slice(0, 1)) + "*".repeat(n - 1);
  return clean(value.slice(0, keep)) + stars + clean(value.slice(n - keep));
}

/** sha256 hex of a value: the dedup key of a finding. */
export function contentHash(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** HMAC-SHA-256 hex of a value with the installation key. */
export function valueHash(value: string, key: Uint8Array): string {
  return createHmac("sha256", key).update(value).digest("hex");
}

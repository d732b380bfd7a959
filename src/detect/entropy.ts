/**
 * What a candidate value must look like to be reported: random enough (Shannon entropy, for rules
 * with an `entropy` threshold) and not an obvious placeholder.
 */

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const n = s.length;
  let ascii = true;
  for (let i = 0; i < n && ascii; i++) ascii = s.charCodeAt(i) < 128;
  if (ascii) {
    // Almost every value: counts in a table, summed in the order characters first appear, as the
    // Map below does (the same result to the last bit).
    let distinct = 0;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (ENTROPY_COUNTS[c]!++ === 0) ENTROPY_ORDER[distinct++] = c;
    }
    let h = 0;
    for (let k = 0; k < distinct; k++) {
      const c = ENTROPY_ORDER[k]!;
      const p = ENTROPY_COUNTS[c]! / n;
      h -= p * Math.log2(p);
      ENTROPY_COUNTS[c] = 0;
    }
    return h;
  }
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / n;
    h -= p * Math.log2(p);
  }
  return h;
}

const ENTROPY_COUNTS = new Int32Array(128);
const ENTROPY_ORDER = new Int32Array(128);

/** Values that are obviously placeholders (`xxxxxxxx`, `********`, `<your-key>`). */
export function isPlaceholder(value: string): boolean {
  if (value.length > 200) return false;
  return /(.)\1{5,}/.test(value) || /^[<{$]|your[_-]?(?:api[_-]?)?(?:key|token|secret)|\.{3}/i.test(value);
}

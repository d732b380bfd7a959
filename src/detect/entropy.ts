/**
 * What a candidate value must look like to be reported: random enough (Shannon entropy, for rules
 * with an `entropy` threshold; `looksRandom` for values assigned to secret-like names, at any
 * length) and not a placeholder or documentation value.
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

/**
 * Values that are placeholders or documentation values, not anyone's credential: `xxxxxxxx`,
 * `********`, `<your-key>`, `${TOKEN}`, `%NPM_TOKEN%`, `your-key-here`, `changeme`, published
 * examples in the AWS style (`AKIAIOSFODNN7EXAMPLE`, `…EXAMPLEKEY`), and reads of the environment
 * (`process.env.X`, `os.environ["X"]`).
 */
export function isPlaceholder(value: string): boolean {
  if (value.length > 200) return false;
  return (
    /(.)\1{5,}|x{4,}|X{4,}|\*{3}|\.{3}|\u2026/.test(value) ||
    /^[<{$]|^%[\w.-]+%$|EXAMPLE(?:KEY)?$|(?:^|[_.:-])(?:example|sample|placeholder|changeme|change[_-]?me|replace[_-]?me|here|redacted|dummy)(?:[_.:-]|$)/.test(
      value,
    ) ||
    /your[_-]?[a-z]*[_-]?(?:key|token|secret|password|pass|pwd|id)|^(?:process\.env|import\.meta\.env|os\.environ|os\.getenv|System\.getenv|ENV\[|env\(|getenv)|^(?:changeme|password|passw0rd|secret|example|sample|test|testing|dummy|placeholder|redacted|none|null|undefined|todo|tbd|admin|root)$/i.test(
      value,
    )
  );
}

/**
 * Whether a value assigned to a secret-like name looks random enough to be a secret, at any length
 * from 12 characters. A fixed bits-per-character threshold cannot serve short values: a string of
 * n characters holds at most log2(n) bits per character (3.6 at 12), so the threshold follows the
 * length (0.83 of that bound, at most 4.3). Identifiers and phrases reach it too
 * (`MyDatabasePassword1`), so the character classes must also change often, as they do in random
 * strings and rarely in words. Lower-case hex is left to the rules of the kinds that use it.
 */
export function looksRandom(value: string): boolean {
  const n = value.length;
  if (n < 12) return false;
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let hex = 0;
  let changes = 0;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    const k = c >= 97 && c <= 122 ? 0 : c >= 65 && c <= 90 ? 1 : c >= 48 && c <= 57 ? 2 : 3;
    if (k === 0) lower++;
    else if (k === 1) upper++;
    else if (k === 2) digit++;
    if ((c >= 48 && c <= 57) || (c >= 97 && c <= 102)) hex++;
    if (prev >= 0 && k !== prev) changes++;
    prev = k;
  }
  const h = shannonEntropy(value);
  if (hex === n) return false; // lower-case hex next to a secret-like name is mostly a digest or an id
  if (NOT_A_VALUE.test(value)) return false;
  if (digit === 0 && n < 24 && lower + upper + digit === n) return false; // letters only: a word
  return h >= Math.min(0.83 * Math.log2(n), 4.3) && changes / (n - 1) >= 0.35;
}

/** Member chains (`this.options.token`), paths and URLs, whatever their randomness. */
const NOT_A_VALUE = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$|^[\w-]+(?:\.[\w-]+)+\/|^(?:\.{0,2}|~)\/|:\/\//;

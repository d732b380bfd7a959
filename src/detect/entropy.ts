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
/**
 * Example credentials that providers publish in their documentation and that libraries copy into
 * their tests and docs: jwt.io's sample token (its signature) and 1Password's sample Secret Key.
 */
const PUBLISHED = ["SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "A3-C4ZJMN-PQTZTL-HGL84-G64M7-KVZRN-4ZVP6"];

export function isPlaceholder(value: string): boolean {
  if (value.length > 200) return false;
  for (const p of PUBLISHED) if (value.includes(p)) return true;
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
 * length (0.83 of that bound, at most 4.3). Identifiers and phrases reach it too, so the character
 * classes must also change often, as they do in random strings; a mixed-case value must not be
 * mostly words (`CachedX509Token`, `OAuth2ClientOptions`); a lower-case one needs digits spread
 * through it. Lower-case hex is left to the rules of the kinds that use it (next to a secret-like
 * name it is mostly a digest).
 */
export function looksRandom(value: string): boolean {
  const n = value.length;
  if (n < 12 || NOT_A_VALUE.test(value)) return false;
  let upper = 0;
  let digit = 0;
  let hex = 0;
  let changes = 0;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    const k = c >= 97 && c <= 122 ? 0 : c >= 65 && c <= 90 ? 1 : c >= 48 && c <= 57 ? 2 : 3;
    if (k === 1) upper++;
    else if (k === 2) digit++;
    if ((c >= 48 && c <= 57) || (c >= 97 && c <= 102)) hex++;
    if (prev >= 0 && k !== prev) changes++;
    prev = k;
  }
  if (hex === n) return false;
  if (changes / (n - 1) < 0.35) return false;
  if (shannonEntropy(value) < Math.min(0.83 * Math.log2(n), 4.3)) return false;
  if (upper === 0) return digit >= Math.max(2, n / 8);
  if (digit === 0 && n < 24 && /^[A-Za-z]+$/.test(value)) return false; // letters only: words
  let words = 0;
  for (const m of value.matchAll(WORD)) words += m[0].length;
  return words / n < 0.7;
}

/** A word inside an identifier: `Token`, `cached`, `HTTP`. */
const WORD = /[A-Z][a-z]{2,}|[a-z]{3,}|[A-Z]{4,}/g;

/** Member chains and member access (`this.options.token`, `t.tokenize`), paths, URLs, Windows paths. */
const NOT_A_VALUE =
  /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$|[A-Za-z_$]\.[A-Za-z_$]{2,}|^[\w-]+(?:\.[\w-]+)+\/|^(?:\.{0,2}|~)\/|^[A-Za-z]:\\|#[a-z]{4,}|:\/\//;

/**
 * The digit-cluster prefilter: rules whose matches start with a digit (cards, SSNs, phone numbers,
 * IP addresses) run only on clusters of digits and separators that hold the fewest of each character
 * their pattern needs. Per cluster the characters are counted once, whatever the number of rules.
 */
import { HEX_CLASS } from "./chars.ts";
import { COUNTED } from "./regex-ast.ts";
import { runWindow, type ScanState } from "./windows.ts";

const COUNTED_INDEX = new Int8Array(65536).fill(-1);
for (let c = 48; c <= 57; c++) COUNTED_INDEX[c] = 0;
for (let k = 1; k < COUNTED.length - 1; k++) COUNTED_INDEX[COUNTED.charCodeAt(k)] = k;
const NCOUNTED = COUNTED.length;
/** Index of '~' (any separator) in COUNTED. */
const ANY_SEP = COUNTED.length - 1;

/** Counts of COUNTED characters in text[lo, hi): in total, and in the best letter-free stretch. */
function countCluster(text: string, lo: number, hi: number, counts: Int32Array, best: Int32Array): void {
  // A loop, not fill(): a native call per cluster costs more than ten stores (a log has two clusters
  // per line).
  for (let q = 0; q < NCOUNTED; q++) {
    counts[q] = 0;
    best[q] = 0;
  }
  const stretch = STRETCH;
  let touchedN = 0;
  // `stretch` holds the counts of the current letter-free stretch; only the entries it touched are
  // folded into `best` and cleared when a letter (or other character) ends it.
  for (let k = lo; k <= hi; k++) {
    const idx = k < hi ? COUNTED_INDEX[text.charCodeAt(k)]! : -1;
    if (idx >= 0) {
      counts[idx]!++;
      if (stretch[idx]!++ === 0) TOUCHED[touchedN++] = idx;
      if (idx > 0) {
        counts[ANY_SEP]!++;
        if (stretch[ANY_SEP]!++ === 0) TOUCHED[touchedN++] = ANY_SEP;
      }
    } else if (touchedN > 0) {
      for (let t = 0; t < touchedN; t++) {
        const q = TOUCHED[t]!;
        if (stretch[q]! > best[q]!) best[q] = stretch[q]!;
        stretch[q] = 0;
      }
      touchedN = 0;
    }
  }
}
const STRETCH = new Int32Array(NCOUNTED);
const TOUCHED = new Int32Array(NCOUNTED * 2);

function fitsNeeds(needs: Int32Array, have: Int32Array): boolean {
  for (let k = 0; k < needs.length; k++) if (have[k]! < needs[k]!) return false;
  return true;
}

/**
 * Rules whose matches start with a digit and hold no letters (cards, SSNs, phones, IPv4): run where
 * a cluster of digits and separators holds what they need (an SSN nine digits and two '-', a card
 * fifteen digits). Hex ids and hashes, with letters between their digits, are not such clusters.
 */
export function letterFreeClusters(st: ScanState): void {
  const { matcher, text } = st;
  const counts = new Int32Array(NCOUNTED);
  const best = new Int32Array(NCOUNTED);
  LETTER_FREE_CLUSTER.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = LETTER_FREE_CLUSTER.exec(text)) !== null) {
    // `[+(]?\d…` as `\d…` plus a look back: a regex whose every match starts with a digit scans
    // faster, and finds the same clusters.
    const before = m.index > 0 ? text.charCodeAt(m.index - 1) : 0;
    const s = before === 43 || before === 40 ? m.index - 1 : m.index;
    const e = m.index + m[0].length;
    countCluster(text, Math.max(0, s - 2), Math.min(text.length, e + 2), counts, best);
    for (const ri of matcher.digitRules) {
      const rule = matcher.rules[ri]!;
      if (!rule.letters && fitsNeeds(rule.needs!, best)) runWindow(st, ri, s - 8, e + 8, s);
    }
  }
}

/**
 * Rules whose matches start with a digit and can hold letters (IPv6): every match has two colons
 * among hex digits (`2001:db8:`, `2a00::`), so they run only on the digit cluster around such a spot,
 * the same cluster and window as the letter-free rules would have had with hex letters allowed. The
 * hot loop finds the spots: a hex digit, a colon and a hex digit or colon are trigrams of its table.
 * Returns where the cluster ends (-1 when `p` is no such spot).
 */
export function hexColonAt(st: ScanState, p: number): number {
  const { matcher, text } = st;
  const n = text.length;
  // A colon after a hex digit, then at most four hex digits and another colon.
  if (p === 0 || HEX_CLASS[text.charCodeAt(p - 1)] !== 1) return -1;
  let q = p + 1;
  while (q < n && q - p <= 5 && HEX_CLASS[text.charCodeAt(q)] === 1) q++;
  if (q >= n || q - p > 5 || text.charCodeAt(q) !== 58) return -1;
  // The stretch of cluster characters around it, and the cluster in it: from its first digit (or
  // a '+' or '(' right before that) to its end, when six characters or more.
  let a = p;
  while (a > 0 && CLUSTER_CHAR[text.charCodeAt(a - 1)] === 1) a--;
  let e = q;
  while (e < n && CLUSTER_CHAR[text.charCodeAt(e)] === 1) e++;
  let d = a;
  while (d < e && COUNTED_INDEX[text.charCodeAt(d)] !== 0) d++;
  if (e - d < 6) return e;
  const before = d > a ? text.charCodeAt(d - 1) : 0;
  const s = before === 43 || before === 40 ? d - 1 : d;
  // Rules whose matches hold letters need the cluster's counts only, not its letter-free stretches.
  const counts = HEX_COUNTS;
  for (let q = 0; q < NCOUNTED; q++) counts[q] = 0;
  for (let k = Math.max(0, s - 2), hi = Math.min(n, e + 2); k < hi; k++) {
    const idx = COUNTED_INDEX[text.charCodeAt(k)]!;
    if (idx >= 0) {
      counts[idx]!++;
      if (idx > 0) counts[ANY_SEP]!++;
    }
  }
  for (const ri of matcher.digitRules) {
    const rule = matcher.rules[ri]!;
    if (rule.letters && fitsNeeds(rule.needs!, counts)) runWindow(st, ri, s - 8, e + 8, s);
  }
  return e;
}
const HEX_COUNTS = new Int32Array(NCOUNTED);

const LETTER_FREE_CLUSTER = /\d[\d \-.()+/:]{5,}/g;
/** Characters of a digit cluster: digits, separators and hex letters. */
const CLUSTER_CHAR = new Uint8Array(65536);
for (const c of "0123456789 -.()+/:abcdefABCDEF") CLUSTER_CHAR[c.charCodeAt(0)] = 1;

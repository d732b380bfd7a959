/**
 * Running one rule where the character loop or a prefilter says it may match: sticky at a position
 * (`runAt`), sticky at each possible start walking back from a literal inside the pattern
 * (`runBefore`), or over a window (`runWindow`), always inside one segment of a batched text. Every
 * match passes `accept` (validator, entropy, placeholder, keywords nearby) and is recorded once, up
 * to MAX_MATCHES_PER_RULE per rule.
 */
import { KEYWORD_BACK } from "./compile.ts";
import { isPlaceholder, shannonEntropy } from "./entropy.ts";
import type { AnchorUse, CompiledRule, Matcher, RawMatch } from "./matcher.ts";
import { VALIDATOR_FNS } from "./validators.ts";

/** No rule produces more than this many matches in one scan: a bound on per-rule work. */
export const MAX_MATCHES_PER_RULE = 1000;

/** One scan of one text: its matches so far, and per rule where its last match ended and how many. */
export interface ScanState {
  matcher: Matcher;
  text: string;
  out: RawMatch[];
  lastEnd: Int32Array;
  counts: Int32Array;
  /** Segment [start, end) pairs when the text joins several segments: no window crosses one. */
  bounds: number[] | null;
}

/** Index of the pair in `bounds` holding `pos` (binary search), as the pair's start index. */
export function segmentAt(bounds: number[], pos: number): number {
  let lo = 0;
  let hi = bounds.length / 2 - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (bounds[mid * 2]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo * 2;
}

export function runWindow(st: ScanState, ri: number, from: number, to: number, pos = from, clamp = true) {
  const { text } = st;
  const rule = st.matcher.rules[ri]!;
  if (st.counts[ri]! >= MAX_MATCHES_PER_RULE) return;
  if (st.bounds && clamp) {
    const k = segmentAt(st.bounds, pos);
    if (from < st.bounds[k]!) from = st.bounds[k]!;
    if (to > st.bounds[k + 1]!) to = st.bounds[k + 1]!;
  }
  const ws = Math.max(0, from, st.lastEnd[ri]!);
  const we = Math.min(text.length, to);
  if (we <= ws) return;
  // The window's text starts LOOKBEHIND characters early and the search at the window: a pattern's
  // lookbehind (`(?<![\w.])`, `(?<!version=)`) sees what really precedes a match at the window's
  // start, not the start of a string.
  const lb = Math.max(0, ws - LOOKBEHIND);
  const sub = lb === 0 && we === text.length ? text : text.slice(lb, we);
  const re = rule.re;
  re.lastIndex = ws - lb;
  let m: RegExpExecArray | null;
  while ((m = re.exec(sub)) !== null) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    if (!record(st, ri, rule, m, lb)) return;
  }
}

/** How far before a window a pattern's lookbehind may look (the email rule's reaches 259). */
const LOOKBEHIND = 260;

export function accept(
  st: ScanState,
  rule: CompiledRule,
  value: string,
  start: number,
  end: number,
): boolean {
  const def = rule.def;
  if (def.validator) {
    const fn = VALIDATOR_FNS[def.validator];
    if (fn && !fn(value)) return false;
  }
  if (def.entropy != null && !(shannonEntropy(value) > def.entropy)) return false;
  if (def.detector === "secrets" && isPlaceholder(value)) return false;
  if (rule.keywords) {
    let lo = Math.max(0, start - KEYWORD_BACK);
    let hi = end + KEYWORD_BACK;
    if (st.bounds) {
      const k = segmentAt(st.bounds, start);
      lo = Math.max(lo, st.bounds[k]!);
      hi = Math.min(hi, st.bounds[k + 1]!);
    }
    const around = st.text.slice(lo, hi).toLowerCase();
    if (!rule.keywords.some((k) => around.includes(k))) return false;
  }
  return true;
}

/**
 * A literal inside the pattern (`@` of an email, `.pem` of a key file): walk back over the characters
 * the match can hold before it, then try the rule sticky at each possible start, left to right.
 */
export function runBefore(st: ScanState, u: AnchorUse, pos: number) {
  const { text } = st;
  const before = u.before!;
  const seg = st.bounds ? segmentAt(st.bounds, pos) : -1;
  let lim = Math.max(0, pos - u.back, st.lastEnd[u.rule]!);
  if (seg >= 0) lim = Math.max(lim, st.bounds![seg]!);
  let s0 = pos;
  while (s0 > lim && before[text.charCodeAt(s0 - 1)] === 1) s0--;
  const rule = st.matcher.rules[u.rule]!;
  const re = rule.sticky;
  for (let s = s0; s <= pos; s++) {
    if (st.counts[u.rule]! >= MAX_MATCHES_PER_RULE) return;
    re.lastIndex = s;
    const m = re.exec(text);
    if (m === null || m[0].length === 0) continue;
    if (seg >= 0 && s + m[0].length > st.bounds![seg + 1]!) {
      runWindow(st, u.rule, s, st.bounds![seg + 1]!, pos); // crossed into the next segment: retry clamped
      return;
    }
    record(st, u.rule, rule, m, 0);
    return;
  }
}

/** Try a rule exactly at `pos` (its prefix anchor's position). */
export function runAt(st: ScanState, ri: number, pos: number) {
  const rule = st.matcher.rules[ri]!;
  if (st.counts[ri]! >= MAX_MATCHES_PER_RULE) return;
  const re = rule.sticky;
  re.lastIndex = pos;
  const m = re.exec(st.text);
  if (m === null || m[0].length === 0) return;
  if (st.bounds && pos + m[0].length > st.bounds[segmentAt(st.bounds, pos) + 1]!) {
    runWindow(st, ri, pos, pos + m[0].length, pos); // crossed into the next segment: retry clamped
    return;
  }
  record(st, ri, rule, m, 0);
}

/** Record a match found in text offset by `base`; false once the rule hit its match cap. */
export function record(
  st: ScanState,
  ri: number,
  rule: CompiledRule,
  m: RegExpExecArray,
  base: number,
): boolean {
  const mEnd = base + m.index + m[0].length;
  if (mEnd > st.lastEnd[ri]!) st.lastEnd[ri] = mEnd;
  const g = m[1] !== undefined && m.indices?.[1] ? 1 : 0;
  const [gs, ge] = m.indices![g]!;
  const value = m[g]!;
  if (st.bounds && st.bounds[segmentAt(st.bounds, base + gs) + 1]! < base + ge) return true; // crosses segments
  if (accept(st, rule, value, base + gs, base + ge)) {
    st.out.push({ rule: rule.def, start: base + gs, end: base + ge, value, decoded: null });
    if (++st.counts[ri]! >= MAX_MATCHES_PER_RULE) return false;
  }
  return true;
}

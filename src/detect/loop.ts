/**
 * The character loop: one pass over the text that finds every place a rule may match. Each
 * position's hashed trigram is tested against the matcher's table; where it hooks a literal, the
 * literal is checked whole from its start and its rules run there (windows.ts). The same pass notes
 * base64/hex runs for the decoder. The loop runs in WebAssembly (kernel.ts) when every hook is
 * ASCII, else in JavaScript (`charPass`); both find the same.
 */
import { TRI_MASK, triHash } from "./chars.ts";
import { hexColonAt, letterFreeClusters } from "./clusters.ts";
import { charKernel, type KernelResult } from "./kernel.ts";
import type { AnchorLit, Matcher } from "./matcher.ts";
import { MAX_MATCHES_PER_RULE, runAt, runBefore, runWindow, type ScanState } from "./windows.ts";

/** Characters a match may extend past a window's estimate. */
const WINDOW_PAD = 64;
/** Untrusted full-text rules see the text in chunks of this size (with overlap). */
const FULL_CHUNK = 16 * 1024;
const FULL_OVERLAP = 512;

/** Whether a character of `need` (2) comes within `max` characters of `from`, only `skip` (1) before it. */
export function followOk(text: string, from: number, max: number, t: Uint8Array): boolean {
  const end = Math.min(text.length - 1, from + max);
  for (let j = from; j <= end; j++) {
    const f = t[text.charCodeAt(j)]!;
    if (f === 2) return true;
    if (f !== 1) return false;
  }
  return false;
}

export function litAt(text: string, pos: number, al: AnchorLit): boolean {
  if (al.lower === null) {
    const l = al.lit;
    if (pos + l.length > text.length) return false;
    for (let k = 0; k < l.length; k++) if (text.charCodeAt(pos + k) !== l.charCodeAt(k)) return false;
    return true;
  }
  const l = al.lower;
  if (pos + l.length > text.length) return false;
  for (let k = 0; k < l.length; k++) {
    let c = text.charCodeAt(pos + k);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== l.charCodeAt(k)) return false;
  }
  return true;
}

/** Base64/hex run characters (-1; 0 for others): the masked run counter of the hot loop. */
const RUN_MASK = new Int32Array(65536);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
  RUN_MASK[c.charCodeAt(0)] = -1;

/** The hot loop in JavaScript, where the kernel cannot be used; text.length >= 2. */
export function charPass(text: string, tri: Uint8Array, rmin: number, hits: number[], runs: number[]): void {
  const n = text.length;
  // The run counter: +1 for a base64/hex character, reset to 0 by any other (one mask); a run is
  // noted once, when it reaches the decoder's minimum length (at least MIN_RUN, so not before i = 2).
  let run = (((1 & RUN_MASK[text.charCodeAt(0)]!) + 1) & RUN_MASK[text.charCodeAt(1)]!) | 0;
  // One pass, one table: hash each trigram (characters folded to 8 bits) and keep the positions
  // whose trigram may hook a literal. Exact checks happen only at those positions. The loop is kept
  // minimal (one shift, xor, mask and byte load per character; a byte per hash reads faster than a
  // bit set): it reads every character of every request. The last position (a literal's third
  // character past the end) is checked after it.
  let h = ((text.charCodeAt(0) & 255) << 6) ^ (text.charCodeAt(1) & 255);
  const last = n - 1;
  for (let i = 2; i < last; i++) {
    const c = text.charCodeAt(i);
    h = ((h << 6) ^ (c & 255)) & TRI_MASK;
    if (tri[h] !== 0) hits.push(i - 2);
    run = (run + 1) & RUN_MASK[c]!;
    if (run === rmin) runs.push(i + 1 - rmin);
  }
  if (last >= 2) {
    run = (run + 1) & RUN_MASK[text.charCodeAt(last)]!;
    if (run === rmin) runs.push(last + 1 - rmin);
  }
  for (let i = Math.max(2, last); i <= n; i++) {
    const z = i < n ? text.charCodeAt(i) & 255 : 0;
    const th = triHash(text.charCodeAt(i - 2) & 255, text.charCodeAt(i - 1) & 255, z);
    if (tri[th] !== 0) hits.push(i - 2);
  }
}

/** Class anchors and IPv6 spots at hooked positions, in order: their rules run at once. */
function spotHits(st: ScanState, hits: ArrayLike<number>): void {
  const { text, matcher } = st;
  const { classAnchors, letterDigitRules } = matcher;
  let hexAfter = 0;
  for (let k = 0; k < hits.length; k++) {
    const pos = hits[k]!;
    if (letterDigitRules && pos >= hexAfter && text.charCodeAt(pos + 1) === 58) {
      const e = hexColonAt(st, pos + 1);
      if (e > 0) hexAfter = e;
    }
    for (let ci = 0; ci < classAnchors.length; ci++) {
      const ca = classAnchors[ci]!;
      if (
        ca.c0[text.charCodeAt(pos)] === 1 &&
        ca.c1[text.charCodeAt(pos + 1)] === 1 &&
        ca.c2[text.charCodeAt(pos + 2)] === 1 &&
        pos >= st.lastEnd[ca.rule]!
      )
        runAt(st, ca.rule, pos);
    }
  }
}

/**
 * The literals hooked at the positions (bigram slot, third character, then the literal from its
 * start), in the order of their hooks; false when some literal starts before the one found before.
 */
function literalHits(st: ScanState, hits: number[], starts: number[], found: AnchorLit[]): boolean {
  const { text, matcher } = st;
  const { bigram, third, bigramLits } = matcher;
  const n = text.length;
  let lastAt = -1;
  let sorted = true;
  for (let k = 0; k < hits.length; k++) {
    const pos = hits[k]!;
    const slot = bigram[((text.charCodeAt(pos) & 255) << 8) | (text.charCodeAt(pos + 1) & 255)]!;
    if (slot === 0) continue;
    const z = pos + 2 < n ? text.charCodeAt(pos + 2) & 255 : 0;
    if (third[(slot << 8) | z] !== 1) continue;
    const lits = bigramLits[slot]!;
    for (let li = 0; li < lits.length; li++) {
      const al = lits[li]!;
      // The hit is the literal's hook trigram; the literal itself starts `lead` characters before.
      const at = pos - al.lead;
      if (at < 0 || !litAt(text, at, al)) continue;
      if (at < lastAt) sorted = false;
      lastAt = at;
      starts.push(at);
      found.push(al);
    }
  }
  return sorted;
}

export function mainLoop(st: ScanState, runMin: number, runs: number[]): void {
  const { text, matcher } = st;
  if (text.length < 2) return;
  const rmin = runMin > 0 ? runMin : -1;
  const starts: number[] = [];
  const found: AnchorLit[] = [];
  let sorted = true;
  // The kernel checks literal hooks itself and returns the literals found; the JavaScript loop
  // returns every hooked position, checked here.
  let r: KernelResult<AnchorLit> | null = null;
  if (matcher.byteHooks)
    try {
      r = charKernel()?.run(text, matcher, rmin, runs) ?? null;
    } catch {
      r = null; // a fault in the kernel costs speed only: the JavaScript loop below does the same
    }
  if (r) {
    spotHits(st, r.spots);
    let lastAt = -1;
    for (let q = 0; q < r.lits.length; q += 2) {
      const at = r.lits[q]!;
      if (at < lastAt) sorted = false;
      lastAt = at;
      starts.push(at);
      found.push(r.literals[r.lits[q + 1]!]!);
    }
  } else {
    runs.length = 0;
    const hits: number[] = [];
    charPass(text, matcher.tri, rmin, hits, runs);
    spotHits(st, hits);
    sorted = literalHits(st, hits, starts, found);
  }
  // Literals in the order they start (a hook deep in one literal can come after the start of the
  // next), so that each rule is tried left to right like its regex over the whole text.
  const order = sorted ? null : starts.map((_, i) => i).sort((a, b) => starts[a]! - starts[b]! || a - b);
  for (let q = 0; q < starts.length; q++) {
    const i = order === null ? q : order[q]!;
    const at = starts[i]!;
    const al = found[i]!;
    for (let ui = 0; ui < al.uses.length; ui++) {
      const u = al.uses[ui]!;
      if (at < st.lastEnd[u.rule]!) continue;
      if (u.prev !== null && (at === 0 || u.prev[text.charCodeAt(at - 1)] !== 1)) continue;
      if (u.back === 0) {
        if (u.follow === null || followOk(text, at + al.lit.length, u.followMax, u.follow))
          runAt(st, u.rule, at);
      } else if (u.before !== null) runBefore(st, u, at);
      else runWindow(st, u.rule, at - u.back - WINDOW_PAD, at + u.forward + WINDOW_PAD, at);
    }
  }
}

/**
 * Scan one text with the matcher (no decoding): the character loop, then one-character anchors, digit
 * clusters and the rules that run over the whole text. Matches are sorted by start offset.
 */
export function scanPlain(
  matcher: Matcher,
  text: string,
  bounds: number[] | null,
  runMin = 0,
  runs: number[] = [],
) {
  const n = matcher.rules.length;
  // The per-rule state is reused from scan to scan: a request scans several small texts, and two
  // fresh arrays of an entry per rule cost more than clearing them. A scan that would start while
  // another runs (none does today) gets arrays of its own.
  const reuse = !scratchBusy;
  if (reuse && scratchLastEnd.length < n) {
    scratchLastEnd = new Int32Array(n);
    scratchCounts = new Int32Array(n);
  } else if (reuse) {
    scratchLastEnd.fill(0, 0, n);
    scratchCounts.fill(0, 0, n);
  }
  const st: ScanState = {
    matcher,
    text,
    out: [],
    lastEnd: reuse ? scratchLastEnd : new Int32Array(n),
    counts: reuse ? scratchCounts : new Int32Array(n),
    bounds: bounds && bounds.length >= 2 ? bounds : null,
  };
  scratchBusy = true;
  try {
    scanAll(st, runMin, runs);
  } finally {
    if (reuse) scratchBusy = false;
  }
  return st.out;
}

/** The per-rule state of scanPlain (indexed by rule, longer than a matcher's rules is fine). */
let scratchLastEnd = new Int32Array(0);
let scratchCounts = new Int32Array(0);
let scratchBusy = false;

export function scanAll(st: ScanState, runMin: number, runs: number[]): void {
  const { matcher, text } = st;
  mainLoop(st, runMin, runs);
  for (const [ch, uses] of matcher.single) {
    let p = text.indexOf(ch);
    while (p !== -1) {
      for (const u of uses) {
        if (p < st.lastEnd[u.rule]!) continue;
        if (u.prev !== null && (p === 0 || u.prev[text.charCodeAt(p - 1)] !== 1)) continue;
        if (u.before !== null) runBefore(st, u, p);
        else runWindow(st, u.rule, p - u.back - WINDOW_PAD, p + u.forward + WINDOW_PAD, p);
      }
      p = text.indexOf(ch, p + 1);
    }
  }
  if (matcher.digitRules.length > 0) {
    letterFreeClusters(st);
  }
  for (const ri of matcher.fullRules) {
    const rule = matcher.rules[ri]!;
    if (rule.trusted || text.length <= FULL_CHUNK) runWindow(st, ri, 0, text.length, 0, false);
    else
      for (let s = 0; s < text.length; s += FULL_CHUNK - FULL_OVERLAP) {
        runWindow(st, ri, s, s + FULL_CHUNK, s, false);
        if (st.counts[ri]! >= MAX_MATCHES_PER_RULE) break;
      }
  }
}

/**
 * The detection engine: compile RuleDef[] once, then scan text in one pass.
 *
 * Running 60 regexes over a megabyte costs 60-90 ms, so rules do not scan the whole text. Each rule's
 * pattern is analysed (regex-ast.ts) for a literal every match must contain — its prefix (`ghp_`,
 * `AKIA`), a required literal (`@`, `.pem`) or its keywords — and one character loop over the text
 * tests each position's hashed trigram against a 256 KB table (one byte per hash) of those literals'
 * trigrams. A rule's regex then runs only at a verified hit (sticky) or on a small window around it. Rules whose matches
 * start with a digit share one digit-cluster prefilter; the few rules left run over the whole text
 * (user rules in bounded chunks). The same loop counts base64/hex runs for the decoder.
 * Pure: no I/O.
 */
import { noFTL } from "bun:jsc";
import type { RuleDef } from "../core/types.ts";
import { analyzePattern, type PatternAnalysis } from "./analysis.ts";
import codeTrigramsText from "./code-trigrams.json" with { type: "text" };
import { charKernel, type KernelResult, MAX_LITERAL, TRI_LITERAL, TRI_SPOT } from "./kernel.ts";
import { compilePattern } from "./pattern.ts";
import { COUNTED } from "./regex-ast.ts";
import { VALIDATOR_FNS } from "./validators.ts";

export interface EncodingOptions {
  base64: boolean;
  hex: boolean;
  url: boolean;
  unicode: boolean;
  max_depth: number;
  min_decoded_length: number;
  max_decoded_length: number;
}

export interface CompiledRule {
  def: RuleDef;
  re: RegExp;
  /** The same pattern, sticky: tried exactly at a prefix anchor's position. */
  sticky: RegExp;
  trigger: "anchor" | "digits" | "class" | "full";
  anchor: Anchor | null;
  keywords: string[] | null;
  /** Builtin rules are trusted to be linear; others run over bounded chunks. */
  trusted: boolean;
  /** For digit-triggered rules: the fewest of each COUNTED character a match needs. */
  needs: Int32Array | null;
  /** For digit-triggered rules: whether a match can contain letters (an IPv6 address can). */
  letters: boolean;
}

interface AnchorUse {
  rule: number;
  back: number;
  forward: number;
  /** Characters allowed right before the literal (1 = allowed), or null for any. */
  prev: Uint8Array | null;
  /**
   * Every character the match can hold before the literal, or null. With it, the match's start is
   * found by walking back over such characters, and the rule is tried sticky at each candidate start
   * instead of scanning a window that reaches far past the literal.
   */
  before: Uint8Array | null;
  /**
   * For a prefix literal: what must follow it (regex-ast.ts followAfter) as one table, 1 for a
   * character that may come first (at most `followMax` of them), 2 for one the next required item
   * starts with. Most keyword hits in code (`tokenizer.next(`) fail here without running the regex.
   */
  follow: Uint8Array | null;
  followMax: number;
}
interface AnchorLit {
  lit: string;
  /** Lower-cased literal when case-insensitive, else null. */
  lower: string | null;
  /**
   * Where in the literal its hook trigram starts (its rarest in code): the hot loop finds the hook,
   * then the whole literal is checked `lead` characters before it, so uses see the literal's start.
   */
  lead: number;
  uses: AnchorUse[];
}

/**
 * A rule without a literal whose first three characters come from small classes (an IBAN starts
 * with two capital letters and a digit): its trigrams go into the same table as the literals', and
 * the rule runs sticky where the three characters fit, instead of over the whole text.
 */
interface ClassAnchor {
  rule: number;
  c0: Uint8Array;
  c1: Uint8Array;
  c2: Uint8Array;
}

export interface CompileProblem {
  rule: string;
  message: string;
}

export interface Engine {
  rules: CompiledRule[];
  /** bigram (c0 & 255) << 8 | (c1 & 255) → index into `lits` + 1, 0 for none. */
  bigram: Uint16Array;
  /** slot << 8 | third character → 1 when some literal of the slot allows that third character. */
  third: Uint8Array;
  /**
   * Each hashed trigram (18 bits) that hooks something: TRI_LITERAL for a literal's, TRI_SPOT for a
   * class anchor's or an IPv6 spot's. The only table the hot loop reads for every character.
   */
  tri: Uint8Array;
  /** Every literal and class anchor is ASCII (and no literal too long): the kernel can run (kernel.ts). */
  byteHooks: boolean;
  bigramLits: AnchorLit[][];
  /** Anchors of one character (e.g. "@"): char → uses. */
  single: Map<string, AnchorUse[]>;
  digitRules: number[];
  /** Whether a digit rule's matches can hold letters (IPv6). */
  letterDigitRules: boolean;
  classAnchors: ClassAnchor[];
  fullRules: number[];
  problems: CompileProblem[];
}

/** Characters a match may extend past a window's estimate, and the cap for unbounded patterns. */
const WINDOW_PAD = 64;
const MAX_FORWARD = 4096;
export const KEYWORD_BACK = 256;
const KEYWORD_FORWARD = 320;
/** No rule produces more than this many matches in one scan: a bound on per-rule work. */
export const MAX_MATCHES_PER_RULE = 1000;
/** Untrusted full-text rules see the text in chunks of this size (with overlap). */
const FULL_CHUNK = 16 * 1024;
const FULL_OVERLAP = 512;

const DIGIT_OK = new Set([..."0123456789+( "]);
/** Most trigrams a class anchor may add to the table (an IBAN adds 26 x 26 x 10 = 6,760). */
const MAX_CLASS_TRIGRAMS = 8192;

/**
 * How often a trigram occurs in real source code, per MB (code-trigrams.json, counted over a sample
 * of open-source JavaScript, TypeScript and Markdown; absent = rarer than 20 per MB).
 */
let codeTrigrams: Record<string, number> | null = null;
// Parsed on first use: a thread that restores a compiled engine (snapshot.ts) never needs it.
const freqOf = (tri: string) =>
  (codeTrigrams ??= JSON.parse(codeTrigramsText as unknown as string) as Record<string, number>)[tri] ?? 0;

/**
 * The offset of a literal's rarest trigram in code, where the hot loop anchors it: "datadog" at
 * "dog" (not "dat", ~800 per MB of code), "-----BEGIN" at "BEG", "Confidential" at "fid". A later
 * offset must be clearly rarer, since a prefix anchor allows a sticky match and a follow check.
 * Case-insensitive literals count every case of the trigram.
 */
const rarest = new Map<string, number>();
function rarestOffset(lit: string, ci: boolean): number {
  if (lit.length <= 3) return 0;
  const key = `${ci ? "i" : "s"}:${lit}`;
  let o = rarest.get(key);
  if (o === undefined) rarest.set(key, (o = rarestOffsetOf(lit, ci)));
  return o;
}

function rarestOffsetOf(lit: string, ci: boolean): number {
  let best = 0;
  let bestCost = Infinity;
  for (let o = 0; o + 3 <= lit.length && o <= 8; o++) {
    const tri = lit.slice(o, o + 3);
    let f: number;
    if (ci) {
      const low = tri.toLowerCase();
      const cap = low[0]!.toUpperCase() + low.slice(1);
      f = freqOf(low) + freqOf(cap) + freqOf(low.toUpperCase());
    } else f = freqOf(tri);
    const cost = (f + 1) * (o === 0 ? 1 : 2);
    if (cost < bestCost) {
      bestCost = cost;
      best = o;
    }
  }
  return best;
}

/** A rule's anchor as compiled: its analysis, or its keywords when the pattern has no good literal. */
type Anchor = NonNullable<PatternAnalysis["anchor"]>;

/** The characters of a set, with both cases of each when the pattern is case-insensitive. */
function folded(chars: Iterable<string>, ci: boolean): string[] {
  const out = new Set<string>();
  for (const ch of chars) {
    out.add(ch);
    if (ci) {
      out.add(ch.toLowerCase());
      out.add(ch.toUpperCase());
    }
  }
  return [...out].filter((ch) => ch.length === 1).sort();
}

/**
 * Lookup tables by char code, shared between rules and compilations (they never change once made):
 * 61 rules would otherwise allocate hundreds of 64 KB tables, most of them equal.
 */
const tables = new Map<string, Uint8Array>();
function table(key: string, fill: (t: Uint8Array) => void): Uint8Array {
  let t = tables.get(key);
  if (!t) {
    t = new Uint8Array(65536);
    fill(t);
    tables.set(key, t);
  }
  return t;
}

/** Tables by the sets as given (before folding and sorting), for the common repeat lookups. */
const byRaw = new Map<string, Uint8Array>();

/** 1 for each character of the set (both cases when case-insensitive). */
function charTable(chars: string, ci: boolean): Uint8Array {
  const raw = `c:${ci ? "i" : "s"}:${chars}`;
  let t = byRaw.get(raw);
  if (!t) {
    const list = folded(chars, ci);
    t = table(`c:${list.join("")}`, (x) => {
      for (const ch of list) x[ch.charCodeAt(0)] = 1;
    });
    byRaw.set(raw, t);
  }
  return t;
}

/** The table of a follow check: 1 for a character it may skip, 2 for one it needs. */
function followTable(f: { skip: string; need: string }, ci: boolean): Uint8Array {
  // Looked up by the sets as given first: a keyword alternation gives every literal the same ones.
  const raw = `f:${ci ? "i" : "s"}:${f.skip}\u0000${f.need}`;
  let t = byRaw.get(raw);
  if (!t) {
    const skip = folded(f.skip, ci);
    const need = folded(f.need, ci);
    t = table(`f:${skip.join("")}\u0000${need.join("")}`, (x) => {
      for (const ch of skip) x[ch.charCodeAt(0)] = 1;
      for (const ch of need) x[ch.charCodeAt(0)] = 2;
    });
    byRaw.set(raw, t);
  }
  return t;
}

/** Whether a character of `need` (2) comes within `max` characters of `from`, only `skip` (1) before it. */
function followOk(text: string, from: number, max: number, t: Uint8Array): boolean {
  const end = Math.min(text.length - 1, from + max);
  for (let j = from; j <= end; j++) {
    const f = t[text.charCodeAt(j)]!;
    if (f === 2) return true;
    if (f !== 1) return false;
  }
  return false;
}

/**
 * Compile rules into an engine. Disabled rules are skipped; a rule whose pattern does not compile is
 * skipped and reported in `problems` (validation of user input happens before, with checkUserPattern).
 */
export interface CompileOptions {
  /** Which rules run over whole texts unchunked; default: built-in rules. */
  trusted?: (def: RuleDef) => boolean;
  /**
   * Analyses already made, by pattern (precomputed.ts: inlined into the binary by build.ts); others
   * are made here.
   */
  analyses?: Readonly<Record<string, PatternAnalysis>>;
}

export function compileRules(defs: RuleDef[], opts: CompileOptions = {}): Engine {
  const trusted = opts.trusted ?? ((d: RuleDef) => d.source === "builtin");
  const analyses = opts.analyses ?? {};
  const rules: CompiledRule[] = [];
  const problems: CompileProblem[] = [];
  const litMap = new Map<string, AnchorLit>();
  const single = new Map<string, AnchorUse[]>();
  const digitRules: number[] = [];
  const classAnchors: ClassAnchor[] = [];
  const fullRules: number[] = [];

  const classCodes: number[][][] = [];
  const addLit = (lit: string, ci: boolean, use: AnchorUse) => {
    const key = ci ? `i:${lit.toLowerCase()}` : `s:${lit}`;
    let al = litMap.get(key);
    if (!al)
      litMap.set(
        key,
        (al = { lit, lower: ci ? lit.toLowerCase() : null, lead: rarestOffset(lit, ci), uses: [] }),
      );
    al.uses.push(use);
  };

  for (const def of defs) {
    if (def.enabled === false) continue;
    let re: RegExp;
    let sticky: RegExp;
    try {
      re = compilePattern(def.pattern, "gd");
      sticky = compilePattern(def.pattern, "yd");
    } catch (err) {
      problems.push({ rule: def.name, message: `pattern does not compile: ${(err as Error).message}` });
      continue;
    }
    const an = analyses[def.pattern] ?? analyzePattern(def.pattern);
    const ci = an.ci;
    const keywords = def.keywords?.length ? def.keywords.map((k) => k.toLowerCase()) : null;
    let anchor: Anchor | null = an.anchor;
    const weak = anchor && Math.min(...anchor.literals.map((l) => l.length)) < 3;
    if (keywords && (!anchor || weak)) {
      anchor = {
        literals: def.keywords!,
        back: KEYWORD_BACK,
        forward: KEYWORD_FORWARD,
        prev: null,
        before: null,
        follow: [],
      };
    }
    const index = rules.length;
    let trigger: CompiledRule["trigger"] = "full";
    if (anchor) {
      trigger = "anchor";
      const fromKeywords = keywords !== null && anchor.literals === def.keywords;
      const forward = anchor.forward === null ? MAX_FORWARD : Math.min(anchor.forward, MAX_FORWARD);
      anchor.literals.forEach((lit, li) => {
        const own = !fromKeywords;
        const prev = own && anchor.prev ? charTable(anchor.prev, ci) : null;
        const before = own && anchor.before && anchor.back <= 512 ? charTable(anchor.before, ci) : null;
        const follow = own ? (anchor.follow[li] ?? null) : null;
        const use: AnchorUse = {
          rule: index,
          back: anchor.back,
          forward,
          prev,
          before,
          follow: follow ? followTable(follow, ci) : null,
          followMax: follow?.max ?? 0,
        };
        if (lit.length === 1) {
          let arr = single.get(lit);
          if (!arr) single.set(lit, (arr = []));
          arr.push(use);
        } else addLit(lit, ci || fromKeywords, use);
      });
    } else if (an.parsed) {
      if (an.first && [...an.first].every((c) => DIGIT_OK.has(c))) trigger = "digits";
      // Only trusted rules: an untrusted pattern run sticky could scan far past its start, so user
      // rules without a literal keep their bounded chunks.
      const lead = trigger === "full" && trusted(def) ? an.lead : null;
      if (lead) {
        const sets = lead.map((chars) => charTable(chars, ci));
        const codes = lead.map((chars) => [...new Set(folded(chars, ci).map((ch) => ch.charCodeAt(0)))]);
        if (codes[0]!.length * codes[1]!.length * codes[2]!.length <= MAX_CLASS_TRIGRAMS) {
          trigger = "class";
          classAnchors.push({ rule: rules.length, c0: sets[0]!, c1: sets[1]!, c2: sets[2]! });
          classCodes.push(codes);
        }
      }
    }
    if (trigger === "digits") digitRules.push(index);
    if (trigger === "full") fullRules.push(index);
    const needs = trigger === "digits" ? Int32Array.from(an.needs) : null;
    const letters = trigger === "digits" ? an.letters : true;
    rules.push({ def, re, sticky, trigger, anchor, keywords, trusted: trusted(def), needs, letters });
  }

  const bigram = new Uint16Array(65536);
  const bigramLits: AnchorLit[][] = [[]];
  /** The bigram key of each slot (slot 0 is none). */
  const slotKeys: number[] = [0];
  const put = (a: number, b: number, al: AnchorLit) => {
    const key = ((a & 255) << 8) | (b & 255);
    let slot = bigram[key]!;
    if (slot === 0) {
      slot = bigramLits.length;
      bigramLits.push([]);
      slotKeys.push(key);
      bigram[key] = slot;
    }
    if (!bigramLits[slot]!.includes(al)) bigramLits[slot]!.push(al);
  };
  const variants = (ch: string, ci: boolean) =>
    ci ? [...new Set([ch.toLowerCase(), ch.toUpperCase()])] : [ch];
  for (const al of litMap.values()) {
    for (const x of variants(al.lit[al.lead]!, al.lower !== null))
      for (const y of variants(al.lit[al.lead + 1]!, al.lower !== null))
        put(x.charCodeAt(0), y.charCodeAt(0), al);
  }
  // Per slot, the third characters its literals allow (null: any, for a two-character literal).
  const thirds: (number[] | null)[] = [null];
  for (let slot = 1; slot < bigramLits.length; slot++) {
    let list: number[] | null = [];
    for (const al of bigramLits[slot]!) {
      if (al.lit.length - al.lead < 3) list = null;
      else if (list)
        for (const z of variants(al.lit[al.lead + 2]!, al.lower !== null)) list.push(z.charCodeAt(0) & 255);
    }
    thirds.push(list);
  }
  const letterDigitRules = digitRules.some((ri) => rules[ri]!.letters);
  const { third, tri } = slotTables(slotKeys, thirds, classCodes, letterDigitRules);
  return {
    rules,
    bigram,
    third,
    tri,
    byteHooks: asciiHooks(bigramLits, classCodes),
    bigramLits,
    single,
    digitRules,
    letterDigitRules,
    classAnchors,
    fullRules,
    problems,
  };
}

/**
 * `third` (slot << 8 | third character → 1) and the hot loop's `tri` (every trigram a slot's
 * literals allow, and every class anchor's trigram), from each slot's bigram key and thirds.
 */
function slotTables(
  slotKeys: number[],
  thirds: (number[] | null)[],
  classCodes: number[][][],
  hexColons: boolean,
  marks?: [literal: number[], spot: number[]],
): { third: Uint8Array; tri: Uint8Array } {
  const third = new Uint8Array(slotKeys.length * 256);
  const tri = new Uint8Array(TRI_MASK + 1);
  for (let slot = 1; slot < slotKeys.length; slot++) {
    const list = thirds[slot];
    if (list === null || list === undefined) third.fill(1, slot << 8, (slot + 1) << 8);
    else for (const z of list) third[(slot << 8) | z] = 1;
  }
  if (marks) {
    // From a snapshot: the table's entries as they were computed (~2 ms less at a cold start).
    const [literal, spot] = marks;
    for (let k = 0; k < literal.length; k++) tri[literal[k]!] = TRI_LITERAL;
    for (let k = 0; k < spot.length; k++) tri[spot[k]!] = tri[spot[k]!]! | TRI_SPOT;
    return { third, tri };
  }
  const mark = (h: number, bit: number) => {
    tri[h] = tri[h]! | bit;
  };
  for (let slot = 1; slot < slotKeys.length; slot++) {
    const key = slotKeys[slot]!;
    const list = thirds[slot];
    if (list === null || list === undefined)
      for (let z = 0; z < 256; z++) mark(triHash(key >> 8, key & 255, z), TRI_LITERAL);
    else for (const z of list) mark(triHash(key >> 8, key & 255, z), TRI_LITERAL);
  }
  for (const [a, b, c] of classCodes)
    for (const x of a!)
      for (const y of b!) for (const z of c!) mark(triHash(x & 255, y & 255, z & 255), TRI_SPOT);
  // Spots for hexColonAt: a hex digit, a colon, then a hex digit or a colon.
  if (hexColons)
    for (const x of HEX_DIGITS)
      for (const z of `${HEX_DIGITS}:`) mark(triHash(x.charCodeAt(0), 58, z.charCodeAt(0)), TRI_SPOT);
  return { third, tri };
}

/** The entries of `tri` with each bit, for a snapshot. */
function triMarks(tri: Uint8Array): [literal: number[], spot: number[]] {
  const literal: number[] = [];
  const spot: number[] = [];
  for (let h = 0; h < tri.length; h++) {
    if (tri[h]! & TRI_LITERAL) literal.push(h);
    if (tri[h]! & TRI_SPOT) spot.push(h);
  }
  return [literal, spot];
}

/**
 * Whether every literal and every class anchor character is ASCII (and no literal longer than the
 * kernel's context). The kernel hashes UTF-8 and the JavaScript loop code units folded to 8 bits:
 * for ASCII hooks both find the same trigrams.
 */
function asciiHooks(bigramLits: AnchorLit[][], classCodes: number[][][]): boolean {
  for (const slot of bigramLits)
    for (const al of slot)
      if (/[^\x01-\x7f]/.test(al.lit) || al.lit.length > MAX_LITERAL || al.lead > MAX_LITERAL) return false;
  for (const sets of classCodes) for (const set of sets) for (const c of set) if (c > 0x7f) return false;
  return true;
}

const TRI_MASK = (1 << 18) - 1;
/** The rolling trigram hash of the hot loop: ((a << 12) ^ (b << 6) ^ c) over 18 bits. */
const triHash = (a: number, b: number, c: number) => ((a << 12) ^ (b << 6) ^ c) & TRI_MASK;

/** A match inside the engine: it still holds the raw value, which never leaves the scanner. */
export interface RawMatch {
  rule: RuleDef;
  start: number;
  end: number;
  value: string;
  /** Decoding chain when found in decoded content ("base64", "base64>url"), else null. */
  decoded: string | null;
}

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

interface State {
  engine: Engine;
  text: string;
  out: RawMatch[];
  lastEnd: Int32Array;
  counts: Int32Array;
  /** Segment [start, end) pairs when the text joins several segments: no window crosses one. */
  bounds: number[] | null;
}

/** Index of the pair in `bounds` holding `pos` (binary search), as the pair's start index. */
function segmentAt(bounds: number[], pos: number): number {
  let lo = 0;
  let hi = bounds.length / 2 - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (bounds[mid * 2]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo * 2;
}

function runWindow(st: State, ri: number, from: number, to: number, pos = from, clamp = true) {
  const { text } = st;
  const rule = st.engine.rules[ri]!;
  if (st.counts[ri]! >= MAX_MATCHES_PER_RULE) return;
  if (st.bounds && clamp) {
    const k = segmentAt(st.bounds, pos);
    if (from < st.bounds[k]!) from = st.bounds[k]!;
    if (to > st.bounds[k + 1]!) to = st.bounds[k + 1]!;
  }
  const ws = Math.max(0, from, st.lastEnd[ri]!);
  const we = Math.min(text.length, to);
  if (we <= ws) return;
  const sub = ws === 0 && we === text.length ? text : text.slice(ws, we);
  const re = rule.re;
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(sub)) !== null) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    if (!record(st, ri, rule, m, ws)) return;
  }
}

function accept(st: State, rule: CompiledRule, value: string, start: number, end: number): boolean {
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

function litAt(text: string, pos: number, al: AnchorLit): boolean {
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

/**
 * Starts of base64/hex runs at least `runMin` long (the hot loop counts the current run; 0 = none
 * wanted), turned into [start, end) pairs: maximal runs of base64/hex characters.
 */
function runPairs(text: string, starts: number[], runMin: number): number[] {
  const out: number[] = [];
  for (const s of starts) {
    // The rest of the run, by the regex engine (a run can be thousands of characters).
    RUN_REST.lastIndex = s + runMin;
    RUN_REST.test(text);
    out.push(s, RUN_REST.lastIndex);
  }
  return out;
}
const RUN_REST = /[A-Za-z0-9+/]*/y;

/** The hot loop in JavaScript, where the kernel cannot be used; text.length >= 2. */
export function charPass(text: string, tri: Uint8Array, rmin: number, hits: number[], runs: number[]): void {
  const n = text.length;
  // The run counter: +1 for a base64/hex character, reset to 0 by any other (one mask); a run is
  // noted once, when it reaches the decoder's minimum length (at least MIN_RUN, so not before i = 2).
  let run = (((1 & RUN_MASK[text.charCodeAt(0)]!) + 1) & RUN_MASK[text.charCodeAt(1)]!) | 0;
  // One pass, one table: hash each trigram (characters folded to 8 bits) and keep the positions
  // whose trigram may hook a literal. Exact checks happen only at those positions. The loop is kept
  // minimal (one shift, xor, mask and byte load per character; a byte per hash reads faster than a
  // bit set, ~7%): it reads every character of every request. The last position (a literal's third
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
function spotHits(st: State, hits: ArrayLike<number>): void {
  const { text, engine } = st;
  const { classAnchors, letterDigitRules } = engine;
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
function literalHits(st: State, hits: number[], starts: number[], found: AnchorLit[]): boolean {
  const { text, engine } = st;
  const { bigram, third, bigramLits } = engine;
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

function mainLoop(st: State, runMin: number, runs: number[]): void {
  const { text, engine } = st;
  if (text.length < 2) return;
  const rmin = runMin > 0 ? runMin : -1;
  const starts: number[] = [];
  const found: AnchorLit[] = [];
  let sorted = true;
  // The kernel checks literal hooks itself and returns the literals found; the JavaScript loop
  // returns every hooked position, checked here.
  let r: KernelResult<AnchorLit> | null = null;
  if (engine.byteHooks)
    try {
      r = charKernel()?.run(text, engine, rmin, runs) ?? null;
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
    charPass(text, engine.tri, rmin, hits, runs);
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
 * A literal inside the pattern (`@` of an email, `.pem` of a key file): walk back over the characters
 * the match can hold before it, then try the rule sticky at each possible start, left to right.
 */
function runBefore(st: State, u: AnchorUse, pos: number) {
  const { text } = st;
  const before = u.before!;
  const seg = st.bounds ? segmentAt(st.bounds, pos) : -1;
  let lim = Math.max(0, pos - u.back, st.lastEnd[u.rule]!);
  if (seg >= 0) lim = Math.max(lim, st.bounds![seg]!);
  let s0 = pos;
  while (s0 > lim && before[text.charCodeAt(s0 - 1)] === 1) s0--;
  const rule = st.engine.rules[u.rule]!;
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
function runAt(st: State, ri: number, pos: number) {
  const rule = st.engine.rules[ri]!;
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
function record(st: State, ri: number, rule: CompiledRule, m: RegExpExecArray, base: number): boolean {
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

/**
 * Shortest base64/hex run considered for decoding: 16 characters (12 bytes of base64, 8 of hex).
 * No rule matches a value that decodes to fewer characters; the hot loop notes runs this long.
 */
const MIN_RUN = 16;

const HEX_CLASS = new Uint8Array(128);
for (const c of "0123456789abcdefABCDEF") HEX_CLASS[c.charCodeAt(0)] = 1;

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
function letterFreeClusters(st: State): void {
  const { engine, text } = st;
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
    for (const ri of engine.digitRules) {
      const rule = engine.rules[ri]!;
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
function hexColonAt(st: State, p: number): number {
  const { engine, text } = st;
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
  for (const ri of engine.digitRules) {
    const rule = engine.rules[ri]!;
    if (rule.letters && fitsNeeds(rule.needs!, counts)) runWindow(st, ri, s - 8, e + 8, s);
  }
  return e;
}
const HEX_COUNTS = new Int32Array(NCOUNTED);

const LETTER_FREE_CLUSTER = /\d[\d \-.()+/:]{5,}/g;
const HEX_DIGITS = "0123456789abcdefABCDEF";
/** Characters of a digit cluster: digits, separators and hex letters. */
const CLUSTER_CHAR = new Uint8Array(65536);
for (const c of "0123456789 -.()+/:abcdefABCDEF") CLUSTER_CHAR[c.charCodeAt(0)] = 1;

/**
 * Scan one text with the engine (no decoding). Matches are sorted by start offset.
 */
function scanPlain(engine: Engine, text: string, bounds: number[] | null, runMin = 0, runs: number[] = []) {
  const st: State = {
    engine,
    text,
    out: [],
    lastEnd: new Int32Array(engine.rules.length),
    counts: new Int32Array(engine.rules.length),
    bounds: bounds && bounds.length >= 2 ? bounds : null,
  };
  mainLoop(st, runMin, runs);
  for (const [ch, uses] of engine.single) {
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
  if (engine.digitRules.length > 0) {
    letterFreeClusters(st);
  }
  for (const ri of engine.fullRules) {
    const rule = engine.rules[ri]!;
    if (rule.trusted || text.length <= FULL_CHUNK) runWindow(st, ri, 0, text.length, 0, false);
    else
      for (let s = 0; s < text.length; s += FULL_CHUNK - FULL_OVERLAP) {
        runWindow(st, ri, s, s + FULL_CHUNK, s, false);
        if (st.counts[ri]! >= MAX_MATCHES_PER_RULE) break;
      }
  }
  return st.out;
}

export interface ScanTextOptions {
  /** Decoding settings, or null to scan only the text as it is. */
  encoding: EncodingOptions | null;
  /**
   * When `text` joins several segments: their [start, end) pairs, ascending. Windows, keyword
   * proximity and anchored matches stay inside one segment, so findings do not depend on how
   * segments were batched.
   */
  bounds?: number[];
}

const PRINTABLE_MIN = 0.9;
/** Characters that end a URL-encoded span, and the longest span looked at. */
const URL_STOP = new Uint8Array(65536);
for (const c of " \t\r\n\"'<>`\u0000") URL_STOP[c.charCodeAt(0)] = 1;
const MAX_SPAN = 20_000;

function printableRatio(s: string): number {
  if (s.length === 0) return 0;
  let ok = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 32 && c < 127) || c === 9 || c === 10 || c === 13 || (c >= 160 && c !== 0xfffd)) ok++;
  }
  return ok / s.length;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

/**
 * Base64 of text: the first character of every 4-character group encodes the top six bits of a
 * byte, which for tab, newline and printable ASCII is 2 to 31 ('C' to 'f'). Checking three groups
 * rejects ~90% of identifiers and binary blobs before any decoding.
 */
const QUAD_HEAD = new Uint8Array(128);
for (const c of "CDEFGHIJKLMNOPQRSTUVWXYZabcdef") QUAD_HEAD[c.charCodeAt(0)] = 1;
function looksLikeBase64Text(run: string): boolean {
  const url = run.includes("-") || run.includes("_");
  for (let q = 0; q < 12 && q < run.length - 3; q += 4) {
    const c = run.charCodeAt(q);
    if (c >= 128 || QUAD_HEAD[c] === 0) return false;
  }
  if (url && (run.includes("+") || run.includes("/"))) return false;
  return /[A-Z]/.test(run) && /[a-z0-9]/.test(run);
}

function decodeBase64(s: string): string | null {
  let t = s.replace(/=+$/, "");
  const url = /[-_]/.test(t);
  if (url && /[+/]/.test(t)) return null;
  if (t.length % 4 === 1) return null;
  if (url) t = t.replace(/-/g, "+").replace(/_/g, "/");
  try {
    // Check a prefix first: most candidates are identifiers or binary and fail here cheaply.
    const head = t.length > 64 ? t.slice(0, 64) : t;
    const headText = utf8.decode(Uint8Array.fromBase64(head, { lastChunkHandling: "loose" }));
    if (printableRatio(headText) < PRINTABLE_MIN) return null;
    const bytes = Uint8Array.fromBase64(t, { lastChunkHandling: "loose" });
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

function decodeHex(s: string): string | null {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(s)) return null;
  try {
    return utf8.decode(Uint8Array.fromHex(s));
  } catch {
    return null;
  }
}

interface Decoded {
  start: number;
  end: number;
  text: string;
  kind: string;
}

function findEncoded(text: string, runs: number[], enc: EncodingOptions): Decoded[] {
  const out: Decoded[] = [];
  const ok = (d: string | null) =>
    d !== null &&
    d.length >= enc.min_decoded_length &&
    d.length <= enc.max_decoded_length &&
    printableRatio(d) >= PRINTABLE_MIN;
  const maxEncoded = Math.ceil(enc.max_decoded_length * 2) + 4;
  for (let k = 0; k < runs.length; k += 2) {
    const s = runs[k]!;
    let e = runs[k + 1]!;
    if (e - s > maxEncoded) continue;
    // Cheap looks before any slicing: hex needs hex digits, base64 of text needs quad heads.
    const c0 = text.charCodeAt(s);
    const isHexStart =
      enc.hex &&
      e - s >= enc.min_decoded_length * 2 &&
      HEX_CLASS[c0] === 1 &&
      HEX_CLASS[text.charCodeAt(s + 1)] === 1 &&
      HEX_CLASS[text.charCodeAt(s + 2)] === 1;
    const isB64Start =
      enc.base64 &&
      c0 < 128 &&
      QUAD_HEAD[c0] === 1 &&
      QUAD_HEAD[text.charCodeAt(s + 4)] === 1 &&
      QUAD_HEAD[text.charCodeAt(s + 8)] === 1;
    if (!isHexStart && !isB64Start) continue;
    while (e < text.length && text[e] === "=" && e - runs[k + 1]! < 2) e++;
    const run = text.slice(s, e);
    if (isHexStart && /^[0-9a-fA-F]+$/.test(run)) {
      const d = decodeHex(run);
      if (ok(d)) {
        out.push({ start: s, end: e, text: d!, kind: "hex" });
        continue;
      }
    }
    if (isB64Start && looksLikeBase64Text(run)) {
      const d = decodeBase64(run);
      if (ok(d)) out.push({ start: s, end: e, text: d!, kind: "base64" });
    }
  }
  if (enc.url) {
    let p = text.indexOf("%");
    while (p !== -1) {
      if (/^%[0-9a-fA-F]{2}/.test(text.slice(p, p + 3))) {
        let s = p;
        while (s > 0 && p - s < MAX_SPAN && URL_STOP[text.charCodeAt(s - 1)] !== 1) s--;
        let e = p;
        while (e < text.length && e - p < MAX_SPAN && URL_STOP[text.charCodeAt(e)] !== 1) e++;
        const span = text.slice(s, e);
        try {
          const d = decodeURIComponent(span.replace(/\+/g, " "));
          if (d !== span && ok(d)) out.push({ start: s, end: e, text: d, kind: "url" });
        } catch {
          /* not URL encoding */
        }
        p = text.indexOf("%", e);
      } else p = text.indexOf("%", p + 1);
    }
  }
  if (enc.unicode) {
    let p = text.indexOf("\\");
    while (p !== -1) {
      const nx = text[p + 1];
      if (
        (nx === "u" && /^[0-9a-fA-F]{4}/.test(text.slice(p + 2, p + 6))) ||
        (nx === "x" && /^[0-9a-fA-F]{2}/.test(text.slice(p + 2, p + 4)))
      ) {
        const re = /(?:\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|[^\s"'`\\])+/y;
        re.lastIndex = p;
        const m = re.exec(text);
        if (m) {
          const span = m[0];
          const d = span
            .replace(/\\u([0-9a-fA-F]{4})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16)))
            .replace(/\\x([0-9a-fA-F]{2})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16)));
          if ((span.match(/\\[ux]/g)?.length ?? 0) >= 2 && ok(d))
            out.push({ start: p, end: p + span.length, text: d, kind: "unicode" });
          p = text.indexOf("\\", p + span.length);
          continue;
        }
      }
      p = text.indexOf("\\", p + 2);
    }
  }
  return out;
}

/**
 * Scan a text: rules over the text itself, then (when `encoding` is set) over base64, hex, URL and
 * unicode-escaped spans decoded up to `max_depth` levels. A match in decoded content reports the
 * encoded span's offsets in `text` and the decoding chain in `decoded`.
 */
export function scanText(engine: Engine, text: string, opts: ScanTextOptions): RawMatch[] {
  return scanDepth(engine, text, opts.encoding, 0, opts.bounds ?? null);
}

function scanDepth(
  engine: Engine,
  text: string,
  enc: EncodingOptions | null,
  depth: number,
  bounds: number[] | null,
): RawMatch[] {
  const wantDecode =
    enc !== null && depth < enc.max_depth && (enc.base64 || enc.hex || enc.url || enc.unicode);
  const runMin =
    wantDecode && (enc!.base64 || enc!.hex)
      ? Math.max(MIN_RUN, Math.ceil((enc!.min_decoded_length * 4) / 3))
      : 0;
  const starts: number[] = [];
  const matches = scanPlain(engine, text, bounds, runMin, starts);
  if (!wantDecode) return matches;
  const runs = runPairs(text, starts, runMin);
  const decodedSpans = findEncoded(text, runs, enc!);
  if (decodedSpans.length === 0) return matches;
  const out = matches.slice();
  for (const d of decodedSpans) {
    for (const m of scanDepth(engine, d.text, enc, depth + 1, null)) {
      out.push({
        rule: m.rule,
        start: d.start,
        end: d.end,
        value: m.value,
        decoded: m.decoded ? `${d.kind}>${m.decoded}` : d.kind,
      });
    }
  }
  out.sort((a, b) => a.start - b.start || a.end - b.end);
  return out;
}

/**
 * For short-lived processes (`sluice scan` and its workers): keep the engine's large hot functions
 * out of JavaScriptCore's top JIT tier (FTL). Compiling them there costs ~60 ms of CPU per thread,
 * which a scan of less than ~100 MB per thread does not earn back (measured: 50 MB of code 385
 * instead of 465 ms CPU, 2.3 MB 37 instead of 60 ms); the DFG tier runs them within ~7% of FTL speed.
 * The JavaScript character loop (charPass, for engines the kernel cannot serve) and the small
 * digit-cluster helpers stay eligible: they are cheap to compile, and the loop gains the most. The
 * long-running proxy does not call this.
 */
export function skipTopJitTier(): void {
  for (const f of [
    mainLoop,
    scanPlain,
    scanDepth,
    runAt,
    runWindow,
    runBefore,
    record,
    accept,
    litAt,
    followOk,
    findEncoded,
  ])
    noFTL(f as (...args: unknown[]) => unknown);
}

/**
 * A compiled engine as plain data (no RegExps, rule objects or shared tables), for the built-in rules
 * to be compiled when sluice is built (snapshot.ts) rather than in every thread at start-up.
 */
export interface EngineSnapshot {
  /** What the engine was compiled from (engineSignature): a snapshot is used only for the same. */
  signature: string;
  rules: {
    trigger: CompiledRule["trigger"];
    anchor: Anchor | null;
    keywords: string[] | null;
    trusted: boolean;
    needs: number[] | null;
    letters: boolean;
  }[];
  /** Char tables as [code, value] pairs of their non-zero entries; referred to by index. */
  tables: number[][];
  lits: { lit: string; lower: string | null; lead: number; uses: number[] }[];
  uses: [
    rule: number,
    back: number,
    forward: number,
    prev: number,
    before: number,
    follow: number,
    max: number,
  ][];
  /** Per slot (from 1): its bigram key and the third characters its literals allow (-1: any). */
  slots: [key: number, thirds: number[]][];
  bigramLits: number[][];
  single: [string, number[]][];
  digitRules: number[];
  classAnchors: [rule: number, c0: number, c1: number, c2: number][];
  /** The character codes of each class anchor's three sets (for its trigrams). */
  classCodes: number[][][];
  /** The hot loop's table: its entries with TRI_LITERAL, and with TRI_SPOT. */
  tri: [literal: number[], spot: number[]];
  fullRules: number[];
  problems: CompileProblem[];
}

/** What compileRules reads from its rules (with the default trust: built-in rules are trusted). */
export function engineSignature(defs: RuleDef[]): string {
  return JSON.stringify(
    defs
      .filter((d) => d.enabled !== false)
      .map((d) => [d.name, d.pattern, d.keywords ?? null, d.source === "builtin"]),
  );
}

export function snapshotEngine(engine: Engine, defs: RuleDef[]): EngineSnapshot {
  const tables: number[][] = [];
  const tableIndex = new Map<Uint8Array, number>();
  const tab = (t: Uint8Array | null) => {
    if (t === null) return -1;
    let i = tableIndex.get(t);
    if (i === undefined) {
      const pairs: number[] = [];
      for (let c = 0; c < t.length; c++) if (t[c] !== 0) pairs.push(c, t[c]!);
      tableIndex.set(t, (i = tables.length));
      tables.push(pairs);
    }
    return i;
  };
  const uses: EngineSnapshot["uses"] = [];
  const useIndex = new Map<AnchorUse, number>();
  const use = (u: AnchorUse) => {
    let i = useIndex.get(u);
    if (i === undefined) {
      useIndex.set(u, (i = uses.length));
      uses.push([u.rule, u.back, u.forward, tab(u.prev), tab(u.before), tab(u.follow), u.followMax]);
    }
    return i;
  };
  const lits: EngineSnapshot["lits"] = [];
  const litIndex = new Map<AnchorLit, number>();
  const bigramLits = engine.bigramLits.map((slot) =>
    slot.map((al) => {
      let i = litIndex.get(al);
      if (i === undefined) {
        litIndex.set(al, (i = lits.length));
        lits.push({ lit: al.lit, lower: al.lower, lead: al.lead, uses: al.uses.map(use) });
      }
      return i;
    }),
  );
  return {
    signature: engineSignature(defs),
    rules: engine.rules.map((r) => ({
      trigger: r.trigger,
      anchor: r.anchor,
      keywords: r.keywords,
      trusted: r.trusted,
      needs: r.needs ? [...r.needs] : null,
      letters: r.letters,
    })),
    tables,
    lits,
    uses,
    slots: slotsOf(engine),
    bigramLits,
    single: [...engine.single].map(([ch, us]) => [ch, us.map(use)]),
    digitRules: engine.digitRules,
    classAnchors: engine.classAnchors.map((c) => [c.rule, tab(c.c0), tab(c.c1), tab(c.c2)]),
    classCodes: engine.classAnchors.map((c) => [c.c0, c.c1, c.c2].map(codesOf)),
    tri: triMarks(engine.tri),
    fullRules: engine.fullRules,
    problems: engine.problems,
  };
}

function codesOf(t: Uint8Array): number[] {
  const out: number[] = [];
  for (let c = 0; c < t.length; c++) if (t[c] === 1) out.push(c);
  return out;
}

function slotsOf(engine: Engine): EngineSnapshot["slots"] {
  const slots: EngineSnapshot["slots"] = [];
  for (let key = 0; key < 65536; key++) {
    const slot = engine.bigram[key]!;
    if (slot === 0) continue;
    const thirds: number[] = [];
    for (let z = 0; z < 256; z++) if (engine.third[(slot << 8) | z] === 1) thirds.push(z);
    slots[slot - 1] = [key, thirds.length === 256 ? [-1] : thirds];
  }
  return slots;
}

/**
 * A rule of a restored engine. Its RegExps are made when first used: ~10 us each at a cold start,
 * and a scan of a few changed lines runs a few rules. (The patterns compiled when the snapshot was
 * made, from the same rules: the signature says so.)
 */
class RestoredRule implements CompiledRule {
  #re: RegExp | null = null;
  #sticky: RegExp | null = null;
  readonly trigger: CompiledRule["trigger"];
  readonly anchor: Anchor | null;
  readonly keywords: string[] | null;
  readonly trusted: boolean;
  readonly needs: Int32Array | null;
  readonly letters: boolean;
  constructor(
    readonly def: RuleDef,
    r: EngineSnapshot["rules"][number],
  ) {
    this.trigger = r.trigger;
    this.anchor = r.anchor;
    this.keywords = r.keywords;
    this.trusted = r.trusted;
    this.needs = r.needs ? Int32Array.from(r.needs) : null;
    this.letters = r.letters;
  }
  get re(): RegExp {
    this.#re ??= compilePattern(this.def.pattern, "gd");
    return this.#re;
  }
  get sticky(): RegExp {
    this.#sticky ??= compilePattern(this.def.pattern, "yd");
    return this.#sticky;
  }
}

/**
 * The engine of a snapshot for these rules, or null when the snapshot was made from other rules (or
 * a rule no longer compiles): the caller then compiles them.
 */
export function engineFromSnapshot(snap: EngineSnapshot, defs: RuleDef[]): Engine | null {
  // The signature lists every enabled rule, so the same signature means the same rules, in order.
  if (engineSignature(defs) !== snap.signature || snap.problems.length > 0) return null;
  const enabled = defs.filter((d) => d.enabled !== false);
  const tables = snap.tables.map((pairs) => {
    const t = new Uint8Array(65536);
    for (let k = 0; k < pairs.length; k += 2) t[pairs[k]!] = pairs[k + 1]!;
    return t;
  });
  const tab = (i: number) => (i < 0 ? null : tables[i]!);
  const uses: AnchorUse[] = snap.uses.map(([rule, back, forward, prev, before, follow, followMax]) => ({
    rule,
    back,
    forward,
    prev: tab(prev),
    before: tab(before),
    follow: tab(follow),
    followMax,
  }));
  const lits: AnchorLit[] = snap.lits.map((l) => ({
    lit: l.lit,
    lower: l.lower,
    lead: l.lead,
    uses: l.uses.map((i) => uses[i]!),
  }));
  const rules: CompiledRule[] = [];
  for (let i = 0; i < enabled.length; i++) {
    rules.push(new RestoredRule(enabled[i]!, snap.rules[i]!));
  }
  const bigram = new Uint16Array(65536);
  const slotKeys = [0];
  const thirds: (number[] | null)[] = [null];
  snap.slots.forEach(([key, list], i) => {
    bigram[key] = i + 1;
    slotKeys.push(key);
    thirds.push(list[0] === -1 ? null : list);
  });
  const letterDigitRules = snap.digitRules.some((ri) => rules[ri]!.letters);
  const { third, tri } = slotTables(slotKeys, thirds, snap.classCodes, letterDigitRules, snap.tri);
  const bigramLits = snap.bigramLits.map((slot) => slot.map((i) => lits[i]!));
  return {
    rules,
    bigram,
    third,
    tri,
    byteHooks: asciiHooks(bigramLits, snap.classCodes),
    bigramLits,
    single: new Map(snap.single.map(([ch, us]) => [ch, us.map((i) => uses[i]!)])),
    digitRules: snap.digitRules,
    letterDigitRules,
    classAnchors: snap.classAnchors.map(([rule, c0, c1, c2]) => ({
      rule,
      c0: tab(c0)!,
      c1: tab(c1)!,
      c2: tab(c2)!,
    })),
    fullRules: snap.fullRules,
    problems: [],
  };
}

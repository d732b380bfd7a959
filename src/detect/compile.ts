/**
 * Compilation: RuleDef[] → Matcher (matcher.ts says what a matcher is).
 *
 * For each rule, what its pattern's analysis (analysis.ts) found decides how it is triggered: by a
 * literal (hooked in the character loop by its rarest trigram in code), by its first three
 * characters when they come from small classes, by the digit-cluster prefilter, or over the whole
 * text. Then the hot loop's tables are built: the bigram slots of the literals' hooks, the third
 * characters each slot allows, and the 18-bit trigram table the loop reads for every character.
 */
import type { RuleDef } from "../core/types.ts";
import { analyzePattern, type PatternAnalysis } from "./analysis.ts";
import { HEX_DIGITS, TRI_MASK, triHash } from "./chars.ts";
import codeTrigramsText from "./code-trigrams.json" with { type: "text" };
import { MAX_LITERAL, TRI_LITERAL, TRI_SPOT } from "./kernel.ts";
import type {
  Anchor,
  AnchorLit,
  AnchorUse,
  ClassAnchor,
  CompiledRule,
  CompileProblem,
  Matcher,
} from "./matcher.ts";
import { compilePattern } from "./pattern.ts";

/** The longest reach of a window past its literal, for patterns without a bound. */
const MAX_FORWARD = 4096;
/** How far before and after a keyword a match of a rule anchored by its keywords may lie. */
export const KEYWORD_BACK = 256;
const KEYWORD_FORWARD = 320;

const DIGIT_OK = new Set([..."0123456789+( "]);
/** Most trigrams a class anchor may add to the table (an IBAN adds 26 x 26 x 10 = 6,760). */
const MAX_CLASS_TRIGRAMS = 8192;

/**
 * How often a trigram occurs in real source code, per MB (code-trigrams.json, counted over a sample
 * of open-source JavaScript, TypeScript and Markdown; absent = rarer than 20 per MB).
 */
let codeTrigrams: Record<string, number> | null = null;
// Parsed on first use: a thread that restores a compiled matcher (snapshot.ts) never needs it.
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

/**
 * Compile rules into a matcher. Disabled rules are skipped; a rule whose pattern does not compile is
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

/** Compile rules into a matcher: one pass over the rules filling the matcher's tables together (they share indices). */
export function compileRules(defs: RuleDef[], opts: CompileOptions = {}): Matcher {
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
export function slotTables(
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
    // From a snapshot: the table's entries as they were computed, without hashing them again.
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
export function triMarks(tri: Uint8Array): [literal: number[], spot: number[]] {
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
export function asciiHooks(bigramLits: AnchorLit[][], classCodes: number[][][]): boolean {
  for (const slot of bigramLits)
    for (const al of slot)
      if (/[^\x01-\x7f]/.test(al.lit) || al.lit.length > MAX_LITERAL || al.lead > MAX_LITERAL) return false;
  for (const sets of classCodes) for (const set of sets) for (const c of set) if (c > 0x7f) return false;
  return true;
}

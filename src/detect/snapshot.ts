/**
 * A compiled matcher as data, and the matcher for a rule set: restored from the snapshot build.ts made
 * of the built-in rules when the rules are exactly those (the default configuration), else compiled,
 * with the built-in patterns' precomputed analyses (precomputed.ts). Restoring skips the pattern
 * analysis and table building that every scan thread would otherwise repeat at start.
 */
import type { RuleDef } from "../core/types.ts";
import { asciiHooks, compileRules, slotTables, triMarks } from "./compile.ts";
import type { Anchor, AnchorLit, AnchorUse, CompiledRule, CompileProblem, Matcher } from "./matcher.ts";
import { compilePattern } from "./pattern.ts";
import { matcherSnapshot, precomputedAnalyses } from "./precomputed.ts";

/** compileRules with the default trust, or the built-in matcher restored when the rules are those. */
export function compileMatcher(defs: RuleDef[]): Matcher {
  const snap = matcherSnapshot();
  return (snap && matcherFromSnapshot(snap, defs)) ?? compileRules(defs, { analyses: precomputedAnalyses() });
}

/**
 * A compiled matcher as plain data (no RegExps, rule objects or shared tables), for the built-in rules
 * to be compiled when sluice is built (snapshot.ts) rather than in every thread at start-up.
 */
export interface MatcherSnapshot {
  /** What the matcher was compiled from (rulesSignature): a snapshot is used only for the same. */
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
export function rulesSignature(defs: RuleDef[]): string {
  return JSON.stringify(
    defs
      .filter((d) => d.enabled !== false)
      .map((d) => [d.name, d.pattern, d.keywords ?? null, d.source === "builtin"]),
  );
}

export function snapshotMatcher(matcher: Matcher, defs: RuleDef[]): MatcherSnapshot {
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
  const uses: MatcherSnapshot["uses"] = [];
  const useIndex = new Map<AnchorUse, number>();
  const use = (u: AnchorUse) => {
    let i = useIndex.get(u);
    if (i === undefined) {
      useIndex.set(u, (i = uses.length));
      uses.push([u.rule, u.back, u.forward, tab(u.prev), tab(u.before), tab(u.follow), u.followMax]);
    }
    return i;
  };
  const lits: MatcherSnapshot["lits"] = [];
  const litIndex = new Map<AnchorLit, number>();
  const bigramLits = matcher.bigramLits.map((slot) =>
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
    signature: rulesSignature(defs),
    rules: matcher.rules.map((r) => ({
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
    slots: slotsOf(matcher),
    bigramLits,
    single: [...matcher.single].map(([ch, us]) => [ch, us.map(use)]),
    digitRules: matcher.digitRules,
    classAnchors: matcher.classAnchors.map((c) => [c.rule, tab(c.c0), tab(c.c1), tab(c.c2)]),
    classCodes: matcher.classAnchors.map((c) => [c.c0, c.c1, c.c2].map(codesOf)),
    tri: triMarks(matcher.tri),
    fullRules: matcher.fullRules,
    problems: matcher.problems,
  };
}

function codesOf(t: Uint8Array): number[] {
  const out: number[] = [];
  for (let c = 0; c < t.length; c++) if (t[c] === 1) out.push(c);
  return out;
}

function slotsOf(matcher: Matcher): MatcherSnapshot["slots"] {
  const slots: MatcherSnapshot["slots"] = [];
  for (let key = 0; key < 65536; key++) {
    const slot = matcher.bigram[key]!;
    if (slot === 0) continue;
    const thirds: number[] = [];
    for (let z = 0; z < 256; z++) if (matcher.third[(slot << 8) | z] === 1) thirds.push(z);
    slots[slot - 1] = [key, thirds.length === 256 ? [-1] : thirds];
  }
  return slots;
}

/**
 * A rule of a restored matcher. Its RegExps are made when first used: a scan of a few changed lines
 * runs a few rules, and making every rule's at a cold start is what the snapshot saves. (The patterns compiled when the snapshot was
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
    r: MatcherSnapshot["rules"][number],
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
 * The matcher of a snapshot for these rules, or null when the snapshot was made from other rules (or
 * a rule no longer compiles): the caller then compiles them.
 */
export function matcherFromSnapshot(snap: MatcherSnapshot, defs: RuleDef[]): Matcher | null {
  // The signature lists every enabled rule, so the same signature means the same rules, in order.
  if (rulesSignature(defs) !== snap.signature || snap.problems.length > 0) return null;
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

/**
 * Which rules duplicate, contain or overlap each other. Every enabled rule's examples and strings
 * generated from its pattern (samples.ts) are scanned by one matcher holding all the rules, so a pair
 * is reported only with evidence: strings both rules really flag, keywords, validators and entropy
 * included. Over a rule's samples:
 * - **duplicate**: each rule flags every sample of the other;
 * - **subset**: the superset flags every sample of the subset, not the reverse;
 * - **overlap**: some samples are flagged by both;
 * - **cluster**: three or more rules joined by such pairs;
 * - **broad**: a rule that overlaps ten or more others (a generic assignment rule, say). Its pairs are
 *   counted, not listed: they would bury the rest.
 * Structural checks name the likely cause: an identical pattern, or the same literal prefix followed
 * by the same character class.
 *
 * `compareRules` is a generator that yields after each rule, so that a caller can spread the work
 * over many turns of the event loop and keep serving requests.
 */
import type { RuleDef } from "../core/types.ts";
import { compileRules } from "./compile.ts";
import { type Matcher, scanText } from "./matcher.ts";
import { patternParts } from "./pattern.ts";
import { findAnchor, parseRegex } from "./regex-ast.ts";
import { patternSamples } from "./samples.ts";

export type PairKind = "duplicate" | "subset" | "overlap";

export interface RulePair {
  kind: PairKind;
  /** For a subset: the rule contained. */
  rule_a: string;
  /** For a subset: the rule that contains it. */
  rule_b: string;
  /** Share of rule_a's samples that rule_b flags, and the reverse (0 to 1). */
  a_in_b: number;
  b_in_a: number;
  /** Up to three strings both rules flag. */
  evidence: string[];
  /** What the patterns share, when a structural check sees it. */
  reason: string | null;
}

export interface OverlapReport {
  rules: number;
  samples: number;
  duplicates: RulePair[];
  subsets: RulePair[];
  overlaps: RulePair[];
  clusters: string[][];
  broad: { rule: string; overlaps: number }[];
}

export interface CompareProgress {
  done: number;
  total: number;
  rule: string;
}

/** Generated samples per rule, beside its examples. */
const GENERATED = 12;
const EVIDENCE = 3;
/** Rules linked to this many others are broad (see above). */
const BROAD = 10;

/** A stable seed per rule name: the same rules give the same samples on every run. */
function seedOf(name: string): number {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The samples of one rule: its examples, then generated strings, with its first keyword before them. */
function samplesOf(rule: RuleDef): string[] {
  const keyword = rule.keywords?.[0];
  const wrap = keyword ? (s: string) => `${keyword} = ${s}` : undefined;
  return [
    ...new Set([
      ...(rule.examples ?? []),
      ...patternSamples(rule.pattern, GENERATED, seedOf(rule.name), wrap),
    ]),
  ];
}

/** What two patterns share, by their syntax alone. */
function structuralReason(a: RuleDef, b: RuleDef): string | null {
  const norm = (p: string) => {
    const parts = patternParts(p);
    return `${parts.flags}/${parts.source}`;
  };
  if (norm(a.pattern) === norm(b.pattern)) return "identical pattern";
  try {
    const [pa, pb] = [a, b].map((r) => findAnchor(parseRegex(patternParts(r.pattern).source)));
    const shared = pa?.literals.find((l) => pb?.literals.includes(l));
    if (shared && shared.length >= 3) return `same literal ${JSON.stringify(shared)}`;
  } catch {
    /* a pattern our parser cannot read has no structural reason */
  }
  return null;
}

/**
 * The comparison pass: every rule against the others on their examples, then the structural checks and
 * the grouping, as one generator so that it can yield between rules (hence its length).
 * `matcher`: all of `defs` compiled, when the caller has it already (compiling 378 rules takes tens of ms). */
export function* compareRules(defs: RuleDef[], matcher?: Matcher): Generator<CompareProgress, OverlapReport> {
  const rules = defs.filter((d) => d.enabled);
  matcher ??= compileRules(rules);
  const byName = new Map(rules.map((r) => [r.name, r]));
  /** rule → its self-flagged sample count; rule → other rule → [count, evidence]. */
  const own = new Map<string, number>();
  const cross = new Map<string, Map<string, { n: number; evidence: string[] }>>();
  let samples = 0;
  for (const [i, rule] of rules.entries()) {
    let n = 0;
    const row = new Map<string, { n: number; evidence: string[] }>();
    for (const text of samplesOf(rule)) {
      const flaggers = new Set(scanText(matcher, text, { encoding: null }).map((m) => m.rule.name));
      if (!flaggers.has(rule.name)) continue;
      n++;
      for (const other of flaggers) {
        if (other === rule.name) continue;
        const cell = row.get(other) ?? { n: 0, evidence: [] };
        cell.n++;
        if (cell.evidence.length < EVIDENCE) cell.evidence.push(text);
        row.set(other, cell);
      }
    }
    own.set(rule.name, n);
    cross.set(rule.name, row);
    samples += n;
    yield { done: i + 1, total: rules.length, rule: rule.name };
  }

  const report: OverlapReport = {
    rules: rules.length,
    samples,
    duplicates: [],
    subsets: [],
    overlaps: [],
    clusters: [],
    broad: [],
  };
  const degree = new Map<string, Set<string>>();
  for (const [a, row] of cross)
    for (const b of row.keys())
      for (const [x, y] of [
        [a, b],
        [b, a],
      ] as const)
        degree.set(x, (degree.get(x) ?? new Set()).add(y));
  const broad = new Set([...degree].filter(([, others]) => others.size >= BROAD).map(([r]) => r));
  report.broad = [...broad]
    .map((rule) => ({ rule, overlaps: degree.get(rule)!.size }))
    .sort((x, y) => y.overlaps - x.overlaps);
  const seen = new Set<string>();
  const links = new Map<string, Set<string>>();
  for (const [a, row] of cross) {
    for (const b of row.keys()) {
      const key = a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
      if (seen.has(key) || broad.has(a) || broad.has(b)) continue;
      seen.add(key);
      const ab = cross.get(a)?.get(b);
      const ba = cross.get(b)?.get(a);
      const aInB = (ab?.n ?? 0) / Math.max(1, own.get(a) ?? 0);
      const bInA = (ba?.n ?? 0) / Math.max(1, own.get(b) ?? 0);
      const evidence = [...new Set([...(ab?.evidence ?? []), ...(ba?.evidence ?? [])])].slice(0, EVIDENCE);
      const reason = structuralReason(byName.get(a)!, byName.get(b)!);
      if (aInB === 1 && bInA === 1)
        report.duplicates.push({
          kind: "duplicate",
          rule_a: a,
          rule_b: b,
          a_in_b: 1,
          b_in_a: 1,
          evidence,
          reason,
        });
      else if (aInB === 1 || bInA === 1) {
        const [sub, sup, x, y] = aInB === 1 ? [a, b, aInB, bInA] : [b, a, bInA, aInB];
        report.subsets.push({
          kind: "subset",
          rule_a: sub,
          rule_b: sup,
          a_in_b: x,
          b_in_a: y,
          evidence,
          reason,
        });
      } else
        report.overlaps.push({
          kind: "overlap",
          rule_a: a,
          rule_b: b,
          a_in_b: aInB,
          b_in_a: bInA,
          evidence,
          reason,
        });
      for (const [x, y] of [
        [a, b],
        [b, a],
      ] as const) {
        const set = links.get(x) ?? new Set<string>();
        set.add(y);
        links.set(x, set);
      }
    }
  }
  report.clusters = components(links).filter((c) => c.length >= 3);
  return report;
}

/** Connected components of an undirected graph, each sorted, largest first. */
function components(links: Map<string, Set<string>>): string[][] {
  const done = new Set<string>();
  const out: string[][] = [];
  for (const start of links.keys()) {
    if (done.has(start)) continue;
    const group: string[] = [];
    const stack = [start];
    done.add(start);
    while (stack.length > 0) {
      const x = stack.pop()!;
      group.push(x);
      for (const y of links.get(x) ?? []) {
        if (!done.has(y)) {
          done.add(y);
          stack.push(y);
        }
      }
    }
    out.push(group.sort());
  }
  return out.sort((p, q) => q.length - p.length);
}

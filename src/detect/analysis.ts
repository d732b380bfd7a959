/**
 * What compileRules learns from a pattern's syntax (regex-ast.ts), as plain data: a function of the
 * pattern string alone. The built-in rules' analyses are computed when the binary is built
 * (build.ts, precomputed.ts), so that a scan does not spend its cold start on them in every
 * thread; other patterns (config and user rules) are analysed when compiled.
 */
import { parseBuiltinRules } from "./builtin-rules.ts";
import { patternParts } from "./pattern.ts";
import {
  allChars,
  COUNTED,
  findAnchor,
  firstChars,
  followAfter,
  leadingSets,
  minCounts,
  type Node,
  parseRegex,
} from "./regex-ast.ts";

export interface PatternAnalysis {
  /** Case-insensitive (`(?i)`). */
  ci: boolean;
  /** A literal every match contains (regex-ast.ts findAnchor), or null. */
  anchor: {
    literals: string[];
    back: number;
    /** Characters a match may extend from the literal; null when unbounded. */
    forward: number | null;
    /** Characters that can stand right before the literal, when known. */
    prev: string | null;
    /** Every character the match can hold before the literal, when known. */
    before: string | null;
    /** Per literal (same order), for a prefix: what must follow it (regex-ast.ts followAfter). */
    follow: ({ skip: string; max: number; need: string } | null)[];
  } | null;
  /** The characters a match can start with, when few and known. */
  first: string | null;
  /** Sets of the first three characters, when each is fixed (regex-ast.ts leadingSets). */
  lead: string[] | null;
  /** Whether a match can hold letters (false only when every character it can hold is known). */
  letters: boolean;
  /** The fewest of each COUNTED character a match needs (regex-ast.ts minCounts). */
  needs: number[];
  /** False when our parser cannot read the pattern (the matcher then runs it over the whole text). */
  parsed: boolean;
}

const str = (s: Set<string> | null | undefined): string | null => (s ? [...s].join("") : null);

/** Analyse one rule pattern (with its optional `(?i)`). Never throws. */
export function analyzePattern(pattern: string): PatternAnalysis {
  const { source, flags } = patternParts(pattern);
  const ci = flags.includes("i");
  let ast: Node;
  try {
    ast = parseRegex(source);
  } catch {
    return { ci, anchor: null, first: null, lead: null, letters: true, needs: [], parsed: false };
  }
  const a = findAnchor(ast);
  const chars = allChars(ast);
  const mc = minCounts(ast);
  return {
    ci,
    anchor: a
      ? {
          literals: a.literals,
          back: a.back,
          forward: Number.isFinite(a.forward) ? a.forward : null,
          prev: str(a.prev),
          before: str(a.before),
          follow: a.literals.map((lit) => {
            const f = a.back === 0 ? followAfter(ast, lit, ci) : null;
            return f ? { skip: [...f.skip].join(""), max: f.max, need: [...f.need].join("") } : null;
          }),
        }
      : null,
    first: str(firstChars(ast)),
    lead: leadingSets(ast, 3)?.map((set) => set.join("")) ?? null,
    letters: chars === null || [...chars].some((ch) => /[A-Za-z]/.test(ch)),
    needs: [...COUNTED].map((c) => mc.get(c) ?? 0),
    parsed: true,
  };
}

/** The analyses of every built-in rule's pattern, by pattern (build.ts inlines them). */
export function builtinAnalyses(): Record<string, PatternAnalysis> {
  const out: Record<string, PatternAnalysis> = {};
  for (const r of parseBuiltinRules()) out[r.pattern] = analyzePattern(r.pattern);
  return out;
}

/**
 * Live pattern testing in the browser with the matcher's own code (src/detect/pattern.ts, pure): a
 * leading `(?i)`/`(?s)` sets flags, a capture group makes group 1 the match, a pattern that matches
 * empty text is refused, and a repeated quantifier inside a repeated group (catastrophic
 * backtracking) is refused before the server is asked. The server's timed trial still has the last word.
 */
import { compilePattern as matcherCompile, patternParts } from "../src/detect/pattern.ts";
import { nestedQuantifier, parseRegex } from "../src/detect/regex-ast.ts";

export interface PatternMatch {
  start: number;
  end: number;
  text: string;
}

export type PatternResult =
  | { ok: true; matches: PatternMatch[]; warning?: string }
  | { ok: false; error: string };

export function compilePattern(pattern: string): RegExp {
  return matcherCompile(pattern, "gd");
}

/** The matcher's static checks, without its timed trial (which needs process CPU time). */
export function checkPattern(pattern: string): { error?: string; warning?: string } {
  let re: RegExp;
  try {
    re = matcherCompile(pattern);
  } catch (err) {
    return { error: (err as Error).message };
  }
  if (re.test("")) return { error: "the pattern matches empty text; it would flag every request" };
  try {
    const nested = nestedQuantifier(parseRegex(patternParts(pattern).source), patternParts(pattern).source);
    if (nested?.startsWith("a repeated quantifier"))
      return { error: `the pattern can backtrack catastrophically: it has ${nested}` };
    if (nested) return { warning: `the pattern has ${nested}; the server may refuse it as too slow` };
  } catch {
    /* the parser is stricter than the RegExp engine; the server decides */
  }
  return {};
}

export function testPattern(pattern: string, sample: string, max = 200): PatternResult {
  if (!pattern) return { ok: true, matches: [] };
  const check = checkPattern(pattern);
  if (check.error) return { ok: false, error: check.error };
  const re = compilePattern(pattern);
  const matches: PatternMatch[] = [];
  for (const m of sample.matchAll(re)) {
    const idx = (m as RegExpMatchArray & { indices?: Array<[number, number] | undefined> }).indices;
    const span = m.length > 1 && idx?.[1] ? idx[1] : idx?.[0];
    if (!span) continue;
    if (span[1] > span[0])
      matches.push({ start: span[0], end: span[1], text: sample.slice(span[0], span[1]) });
    if (matches.length >= max) break;
  }
  return { ok: true, matches, warning: check.warning };
}

/** Mask a matched value the way findings do: keep 4 characters at each end. */
export function maskValue(v: string): string {
  if (v.length <= 8) return `${v.slice(0, 2)}****`;
  return `${v.slice(0, 4)}****${v.slice(-4)}`;
}

/**
 * The built-in rules' pattern analyses and compiled matcher, made when the binary is built: build.ts
 * computes them (analysis.ts builtinAnalyses, snapshot-build.ts builtinSnapshot) and inlines them as
 * constants. Running from source there are none and everything is analysed and compiled at start,
 * which costs less there than a Bun macro would (a macro runs at every start from source).
 *
 * Both are keyed by what they were made from: an analysis by its pattern, the matcher by its rules'
 * signature. A user rule, or a built-in rule edited since, is analysed or compiled as usual, so an
 * out-of-date entry can only cost time, never a wrong result.
 */
import type { PatternAnalysis } from "./analysis.ts";
import type { MatcherSnapshot } from "./snapshot.ts";

// JSON texts, parsed on first use: JSON.parse is quicker than evaluating object literals, and a scan
// that restores the matcher never needs the analyses.
declare const SLUICE_PATTERN_ANALYSES: string | undefined;
declare const SLUICE_MATCHER_SNAPSHOT: string | undefined;

let analyses: Readonly<Record<string, PatternAnalysis>> | null = null;
export function precomputedAnalyses(): Readonly<Record<string, PatternAnalysis>> {
  analyses ??= typeof SLUICE_PATTERN_ANALYSES === "undefined" ? {} : JSON.parse(SLUICE_PATTERN_ANALYSES);
  return analyses!;
}

let snapshot: MatcherSnapshot | null | undefined;
export function matcherSnapshot(): MatcherSnapshot | null {
  if (snapshot === undefined)
    snapshot = typeof SLUICE_MATCHER_SNAPSHOT === "undefined" ? null : JSON.parse(SLUICE_MATCHER_SNAPSHOT);
  return snapshot!;
}

/**
 * The built-in rules' pattern analyses and compiled engine, made when the binary is built: build.ts
 * computes them (analysis.ts builtinAnalyses, snapshot-build.ts builtinSnapshot) and inlines them as
 * constants. Running from source there are none and everything is analysed and compiled at start,
 * which costs less there than a Bun macro (~30-70 ms per macro at every start from source).
 *
 * Both are keyed by what they were made from: an analysis by its pattern, the engine by its rules'
 * signature. A user rule, or a built-in rule edited since, is analysed or compiled as usual, so an
 * out-of-date entry can only cost time, never a wrong result.
 */
import type { PatternAnalysis } from "./analysis.ts";
import type { EngineSnapshot } from "./engine.ts";

declare const SLUICE_PATTERN_ANALYSES: Record<string, PatternAnalysis> | undefined;
declare const SLUICE_ENGINE_SNAPSHOT: EngineSnapshot | undefined;

export const PRECOMPUTED: Readonly<Record<string, PatternAnalysis>> =
  typeof SLUICE_PATTERN_ANALYSES === "undefined" ? {} : SLUICE_PATTERN_ANALYSES;

export const ENGINE_SNAPSHOT: EngineSnapshot | null =
  typeof SLUICE_ENGINE_SNAPSHOT === "undefined" ? null : SLUICE_ENGINE_SNAPSHOT;

/**
 * The built-in rules' pattern analyses, computed when this file is transpiled or bundled (a Bun
 * macro runs analysis.ts's builtinAnalyses and inlines its result here as data). Keyed by pattern:
 * a pattern that is not here (a user rule, or a built-in rule edited since) is analysed at compile
 * time, so an out-of-date entry can only cost time, never a wrong result.
 */
import { builtinAnalyses } from "./analysis.ts" with { type: "macro" };
import type { PatternAnalysis } from "./analysis.ts";

export const PRECOMPUTED: Readonly<Record<string, PatternAnalysis>> = builtinAnalyses();

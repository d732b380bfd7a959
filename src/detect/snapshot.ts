/**
 * The engine for a rule set: restored from the snapshot build.ts made of the built-in rules when the
 * rules are exactly those (the default configuration; ~2 ms instead of ~8 ms of cold compilation in
 * every scan thread), else compiled, with the built-in patterns' precomputed analyses.
 */
import type { RuleDef } from "../core/types.ts";
import { compileRules, type Engine, engineFromSnapshot } from "./engine.ts";
import { engineSnapshot, precomputedAnalyses } from "./precomputed.ts";

/** compileRules with the default trust. */
export function compileEngine(defs: RuleDef[]): Engine {
  const snap = engineSnapshot();
  return (snap && engineFromSnapshot(snap, defs)) ?? compileRules(defs, { analyses: precomputedAnalyses() });
}

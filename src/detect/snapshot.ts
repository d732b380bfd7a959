/**
 * The built-in rules compiled when sluice is built (a Bun macro runs snapshot-build.ts and inlines
 * the engine as data): a thread that scans with exactly those rules (the default configuration)
 * restores it in ~1 ms instead of compiling them in ~8 ms of cold code. Any other rule set, or
 * built-in rules changed since the snapshot, is compiled as before.
 */
import type { RuleDef } from "../core/types.ts";
import { compileRules, type Engine, engineFromSnapshot } from "./engine.ts";
import { PRECOMPUTED } from "./precomputed.ts";
import { builtinSnapshot } from "./snapshot-build.ts" with { type: "macro" };

const SNAPSHOT = builtinSnapshot();

/**
 * compileRules with the default trust: from the snapshot when the rules are the built-in ones, else
 * compiled with the built-in patterns' precomputed analyses.
 */
export function compileEngine(defs: RuleDef[]): Engine {
  return engineFromSnapshot(SNAPSHOT, defs) ?? compileRules(defs, { analyses: PRECOMPUTED });
}

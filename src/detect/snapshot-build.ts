/**
 * The matcher snapshot of the built-in rules, made by build.ts and inlined into the binary
 * (precomputed.ts).
 */
import { parseBuiltinRules } from "./builtin-rules.ts";
import { compileRules } from "./compile.ts";
import { type MatcherSnapshot, snapshotMatcher } from "./snapshot.ts";

export function builtinSnapshot(): MatcherSnapshot {
  const defs = parseBuiltinRules().filter((r) => r.enabled !== false);
  return snapshotMatcher(compileRules(defs), defs);
}

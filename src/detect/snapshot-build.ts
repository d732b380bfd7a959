/**
 * The engine snapshot of the built-in rules, made by build.ts and inlined into the binary
 * (precomputed.ts).
 */
import { parseBuiltinRules } from "./builtin-rules.ts";
import { compileRules } from "./compile.ts";
import { type EngineSnapshot, snapshotEngine } from "./snapshot.ts";

export function builtinSnapshot(): EngineSnapshot {
  const defs = parseBuiltinRules().filter((r) => r.enabled !== false);
  return snapshotEngine(compileRules(defs), defs);
}

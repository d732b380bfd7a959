/**
 * Compiles the built-in rules into an engine snapshot. Runs as a Bun macro (snapshot.ts), when sluice
 * is built or transpiled; the snapshot is inlined as data.
 */
import { parseBuiltinRules } from "./builtin-rules.ts";
import { compileRules, type EngineSnapshot, snapshotEngine } from "./engine.ts";

/** Imports nothing that runs a macro itself (Bun does not run macros inside a macro). */
export function builtinSnapshot(): EngineSnapshot {
  const defs = parseBuiltinRules().filter((r) => r.enabled !== false);
  return snapshotEngine(compileRules(defs), defs);
}

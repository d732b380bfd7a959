/**
 * The community rules shipped in rules/*.yaml, embedded so that compiled binaries carry them.
 * SEAM (owned by detection): the signature is fixed.
 */
import type { RuleDef } from "../core/types.ts";

export function loadBuiltinRules(): RuleDef[] {
  return [];
}

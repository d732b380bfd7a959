/**
 * The rules and scanner `sluice scan` uses: the same payload pipeline as `serve`
 * (src/policy/pipeline.ts), fed with the built-in community rules, the config's `custom_rules` and
 * any `--rules FILE`, under the same configuration (detector switches and actions, allowlists).
 */
import { customRuleDef } from "../config/custom-rule.ts";
import type { Config } from "../config/schema.ts";
import type { RuleDef } from "../core/types.ts";
import { loadBuiltinRules } from "../detect/builtin.ts";
import { skipTopJitTier } from "../detect/matcher.ts";
import { createPipeline, textPayload } from "../policy/pipeline.ts";
import type { TextScanner } from "./window.ts";

/** Everything a worker needs to build its own scanner; structured-clone safe. */
export interface ScanSetup {
  config: Config;
  rules: RuleDef[];
}

export interface RuleSources {
  builtin?: boolean;
  extra?: RuleDef[];
}

/** Built-in rules, then config custom_rules, then extra rules; a later rule of the same name wins. */
export function rulesInForce(config: Config, sources: RuleSources = {}): RuleDef[] {
  const byName = new Map<string, RuleDef>();
  if (sources.builtin !== false) for (const r of loadBuiltinRules()) byName.set(r.name, r);
  for (const c of config.custom_rules) byName.set(c.name, customRuleDef(c));
  for (const r of sources.extra ?? []) byName.set(r.name, r);
  return [...byName.values()];
}

export function makeTextScanner(setup: ScanSetup): TextScanner {
  // A scan is short-lived: the matcher's top-tier JIT compile would cost more than it saves.
  skipTopJitTier();
  const enabled = setup.rules.filter((r) => r.enabled);
  const pipeline = createPipeline({
    config: () => setup.config,
    rules: () => enabled,
    rulesVersion: () => 1,
    hmacKey: null,
  });
  return (text, path) => pipeline.inspect(textPayload(text, path)).findings;
}

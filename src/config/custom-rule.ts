/** Apart from schema.ts so that `sluice scan` can turn config rules into rules without loading zod. */
import type { RuleDef } from "../core/types.ts";
import type { CustomRuleConfig } from "./schema.ts";

/** The rule a `custom_rules` entry stands for (source "config", tier "custom", enabled). */
export function customRuleDef(c: CustomRuleConfig): RuleDef {
  return {
    name: c.name,
    pattern: c.pattern,
    detector: c.detector,
    severity: c.severity,
    action: c.action,
    enabled: true,
    tier: "custom",
    source: "config",
    description: c.description,
    tags: c.tags,
    validator: c.validator ?? null,
    keywords: c.keywords ?? null,
  };
}

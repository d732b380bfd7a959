/**
 * The community rules of rules/*.yaml as RuleDefs, and the field checks every rule file goes through.
 * build.ts runs `builtinRuleData` and inlines its result into the binary (builtin.ts), so no thread
 * of a binary parses YAML at start-up. Imports no YAML
 * library (Bun.YAML is native; the `yaml` package is only for user files, which need line numbers).
 */
import { RULE_FILES } from "../../rules/index.ts";
import {
  DETECTORS,
  RULE_ACTIONS,
  RULE_DESCRIPTION_MAX,
  RULE_NAME,
  RULE_NAME_RULE,
  RULE_PATTERN_MAX,
  RULE_TIERS,
  type RuleDef,
  SEVERITIES,
  VALIDATORS,
} from "../core/types.ts";
import type { RuleAt, RuleProblem } from "./rule-file.ts";

/**
 * One rule from its parsed mapping: every field checked, each problem added to `problems` with the
 * line of its field when known; null when the rule has a problem (it is left out whole).
 */
export function ruleFromRaw(
  raw: Record<string, unknown>,
  at: RuleAt,
  source: RuleDef["source"],
  lines: Map<string, number>,
  problems: RuleProblem[],
): RuleDef | null {
  const name = typeof raw.name === "string" ? raw.name : null;
  const line = at.line;
  const before = problems.length;
  const bad = (field: string | null, message: string) =>
    problems.push({
      file: at.file,
      line: (field && at.lineOf?.(field)) || line,
      rule: name ?? (raw.name === undefined ? null : String(raw.name)),
      message: field ? `${field}: ${message}` : message,
    });
  if (!name || !RULE_NAME.test(name))
    bad("name", `${JSON.stringify(raw.name ?? null)} must be ${RULE_NAME_RULE}`);
  else if (lines.has(name)) {
    const first = lines.get(name);
    bad(null, `duplicate rule name${first ? ` (first at line ${first})` : ""}`);
    return null;
  } else lines.set(name, line ?? 0);
  const pattern = typeof raw.pattern === "string" ? raw.pattern : "";
  if (pattern.length === 0) bad("pattern", "is required");
  else if (pattern.length > RULE_PATTERN_MAX) bad("pattern", `is longer than ${RULE_PATTERN_MAX} characters`);
  const oneOf = <T extends string>(field: string, allowed: readonly T[], fallback: T): T => {
    const v = raw[field] ?? fallback;
    if ((allowed as readonly unknown[]).includes(v)) return v as T;
    bad(
      field,
      `must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")} (got ${JSON.stringify(v)})`,
    );
    return fallback;
  };
  const detector = oneOf("detector", DETECTORS, "custom");
  const severity = oneOf("severity", SEVERITIES, "high");
  const action = oneOf("action", RULE_ACTIONS, "");
  const tier = oneOf("tier", RULE_TIERS, source === "builtin" ? "community" : "custom");
  const validator = raw.validator == null ? null : oneOf("validator", VALIDATORS, VALIDATORS[0]);
  const strList = (key: string): string[] => {
    const v = raw[key];
    if (v === undefined || v === null) return [];
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
    bad(key, "must be a list of strings");
    return [];
  };
  const entropy = raw.entropy === undefined || raw.entropy === null ? null : Number(raw.entropy);
  if (entropy !== null && !(entropy > 0 && entropy <= 8))
    bad("entropy", "must be a number of bits per character (0 to 8)");
  if (raw.enabled !== undefined && typeof raw.enabled !== "boolean") bad("enabled", "must be true or false");
  let description = "";
  if (typeof raw.description === "string" && raw.description.length <= RULE_DESCRIPTION_MAX)
    description = raw.description;
  else if (raw.description !== undefined && raw.description !== null)
    bad("description", `must be text of at most ${RULE_DESCRIPTION_MAX} characters`);
  const keywords = strList("keywords");
  const tags = strList("tags");
  const examples = strList("examples");
  const negative_examples = strList("negative_examples");
  if (problems.length > before || !name) return null; // a rule is used whole or not at all
  return {
    name,
    pattern,
    detector,
    severity,
    action,
    enabled: raw.enabled !== false,
    tier,
    source,
    description,
    tags,
    validator,
    keywords: keywords.length ? keywords : null,
    entropy,
    examples,
    negative_examples,
  };
}

/**
 * The community rules of the embedded rule files, parsed with Bun's native YAML parser. The files
 * are ours and checked by the rule self-test (test/detect/rules.test.ts), which also compares this
 * with parseRuleText's reading (rule-file.ts).
 */
export function parseBuiltinRules(): RuleDef[] {
  const out: RuleDef[] = [];
  for (const f of RULE_FILES) {
    const doc = Bun.YAML.parse(f.text) as { rules?: unknown } | unknown[] | null;
    const list = Array.isArray(doc) ? doc : (doc as { rules?: unknown } | null)?.rules;
    if (!Array.isArray(list)) throw new Error(`${f.file}: expected a \`rules:\` list`);
    const lines = new Map<string, number>();
    for (const item of list) {
      const rule = ruleFromRaw(
        item as Record<string, unknown>,
        { file: f.file, line: null },
        "builtin",
        lines,
        [],
      );
      if (rule) out.push(rule);
    }
  }
  return out;
}

/**
 * The parsed community rules and the texts they came from; build.ts inlines them into the binary.
 */
export function builtinRuleData(): { texts: string[]; rules: RuleDef[] } {
  return { texts: RULE_FILES.map((f) => f.text), rules: parseBuiltinRules() };
}

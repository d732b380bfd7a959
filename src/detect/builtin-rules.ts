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
  type RuleAction,
  type RuleDef,
  SEVERITIES,
  VALIDATORS,
  type ValidatorName,
} from "../core/types.ts";

/** One problem in a rule file or rule: where it is and what is wrong. */
export interface RuleProblem {
  file: string | null;
  line: number | null;
  rule: string | null;
  message: string;
}

const NAME_RE = /^[a-z0-9][a-z0-9_.-]{0,99}$/;

/** One rule from its parsed mapping; problems are added to `problems`, null when it is left out. */
export function ruleFromRaw(
  raw: Record<string, unknown>,
  file: string,
  line: number | null,
  source: RuleDef["source"],
  lines: Map<string, number>,
  problems: RuleProblem[],
): RuleDef | null {
  const tier = source === "builtin" ? "community" : "custom";
  const name = typeof raw.name === "string" ? raw.name : null;
  const bad = (message: string) => problems.push({ file, line, rule: name, message });
  if (!name || !NAME_RE.test(name)) {
    bad(`rule name ${JSON.stringify(raw.name)} must be lowercase letters, digits, '_', '.', '-'`);
    return null;
  }
  if (lines.has(name)) bad(`duplicate rule name ${name}`);
  lines.set(name, line ?? 0);
  if (typeof raw.pattern !== "string" || raw.pattern.length === 0) {
    bad("pattern is required");
    return null;
  }
  const detector = (raw.detector ?? "custom") as RuleDef["detector"];
  if (!DETECTORS.includes(detector)) bad(`detector must be one of ${DETECTORS.join(", ")}`);
  const severity = (raw.severity ?? "high") as RuleDef["severity"];
  if (!SEVERITIES.includes(severity)) bad(`severity must be one of ${SEVERITIES.join(", ")}`);
  const action = (raw.action ?? "") as RuleAction;
  if (!RULE_ACTIONS.includes(action))
    bad(`action must be one of ${RULE_ACTIONS.map((a) => a || '""').join(", ")}`);
  const validator = (raw.validator ?? null) as ValidatorName | null;
  if (validator !== null && !VALIDATORS.includes(validator))
    bad(`validator must be one of ${VALIDATORS.join(", ")}`);
  const strList = (v: unknown, key: string): string[] => {
    if (v === undefined || v === null) return [];
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
    bad(`${key} must be a list of strings`);
    return [];
  };
  const entropy = raw.entropy === undefined || raw.entropy === null ? null : Number(raw.entropy);
  if (entropy !== null && !(entropy > 0 && entropy <= 8))
    bad("entropy must be a number of bits per character (0 to 8)");
  const keywords = strList(raw.keywords, "keywords");
  return {
    name,
    pattern: raw.pattern,
    detector,
    severity,
    action,
    enabled: raw.enabled === undefined ? true : raw.enabled !== false,
    tier,
    source,
    description: typeof raw.description === "string" ? raw.description : "",
    tags: strList(raw.tags, "tags"),
    validator,
    keywords: keywords.length ? keywords : null,
    entropy,
    examples: strList(raw.examples, "examples"),
    negative_examples: strList(raw.negative_examples, "negative_examples"),
  };
}

/**
 * The community rules of the embedded rule files, parsed with Bun's native YAML parser. The files
 * are ours and checked by the rule self-test (test/detect/rules.test.ts), which also compares this
 * with parseRuleFile's reading.
 */
export function parseBuiltinRules(): RuleDef[] {
  const out: RuleDef[] = [];
  for (const f of RULE_FILES) {
    const doc = Bun.YAML.parse(f.text) as { rules?: unknown } | unknown[] | null;
    const list = Array.isArray(doc) ? doc : (doc as { rules?: unknown } | null)?.rules;
    if (!Array.isArray(list)) throw new Error(`${f.file}: expected a \`rules:\` list`);
    const lines = new Map<string, number>();
    for (const item of list) {
      const rule = ruleFromRaw(item as Record<string, unknown>, f.file, null, "builtin", lines, []);
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

/**
 * The community rules of rules/*.yaml as RuleDefs, and the field checks every rule file goes through.
 * build.ts runs `builtinRuleData` and inlines its result into the binary (builtin.ts), so no thread
 * of a binary parses YAML at start-up. Imports no YAML
 * library (Bun.YAML is native; the `yaml` package is only for user files, which need line numbers).
 */
import { RULE_FILES } from "../../rules/index.ts";
import type { RuleDef } from "../core/types.ts";
import type { RuleAt, RuleProblem } from "./rule-file.ts";

/**
 * One rule from its parsed mapping: every field checked against its declaration (core/rule.ts),
 * each problem added to `problems` with the line of its field when known; null when the rule has a
 * problem (it is left out whole) or its name was taken by an earlier rule of the file.
 */
export function ruleFromRaw(
  raw: Record<string, unknown>,
  at: RuleAt,
  source: RuleDef["source"],
  lines: Map<string, number>,
  problems: RuleProblem[],
  trusted = false,
): RuleDef | null {
  // Required here: a compiled binary carries its rules read, and its start-up never loads this.
  const { RULE_FILE_FIELDS, readRuleFields, withGiven } =
    require("../core/rule.ts") as typeof import("../core/rule.ts");
  const name = typeof raw.name === "string" ? raw.name : null;
  const bad = (field: string | null, problem: string, given?: unknown) =>
    problems.push({
      file: at.file,
      line: (field && at.lineOf?.(field)) || at.line,
      rule: name ?? (raw.name == null ? null : String(raw.name)),
      message: field ? `${field}: ${withGiven(problem, given)}` : problem,
    });
  if (name !== null && lines.has(name)) {
    const first = lines.get(name);
    bad(null, `duplicate rule name${first ? ` (first at line ${first})` : ""}`);
    return null;
  }
  const fields = readRuleFields(raw, RULE_FILE_FIELDS, bad, {
    defaults: { tier: source === "builtin" ? "community" : "custom" },
    trusted,
  });
  if (name !== null) lines.set(name, at.line ?? 0);
  if (!fields) return null;
  return { ...fields, keywords: fields.keywords?.length ? fields.keywords : null, source };
}

/**
 * The community rules of the embedded rule files, parsed with Bun's native YAML parser. The files
 * are ours and checked by the rule self-test (test/detect/rules.test.ts), which also compares this
 * with parseRuleText's reading (rule-file.ts), so at start (`trusted`) their fields are only
 * completed with defaults; what build.ts inlines is read with every check.
 */
export function parseBuiltinRules(trusted = true): RuleDef[] {
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
        trusted,
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
  return { texts: RULE_FILES.map((f) => f.text), rules: parseBuiltinRules(false) };
}

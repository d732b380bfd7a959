/**
 * The rule file format, parsed and written (no I/O: callers read the file): YAML or JSON, a list of rules or `{rules: [...]}`, each rule
 * shaped like `rules/*.yaml`. The one reader behind `sluice rules validate|import`, `sluice scan
 * --rules` and the rule self-test; fields are checked by `ruleFromRaw` (builtin-rules.ts), which the
 * start-up loader of the built-in rules shares. Every problem names the file and the line of the rule,
 * or of the offending field.
 */
import type { Node, YAMLMap } from "yaml";
import type { RuleDef } from "../core/types.ts";
import { ruleFromRaw } from "./builtin-rules.ts";

/** One problem in a rule file or rule: where it is and what is wrong. */
export interface RuleProblem {
  file: string | null;
  line: number | null;
  rule: string | null;
  message: string;
}

/** Where a rule is: its file and line, and the line of one of its fields when known. */
export interface RuleAt {
  file: string | null;
  line: number | null;
  lineOf?: (field: string) => number | null;
}

export interface ParsedRuleFile {
  rules: RuleDef[];
  /** Line of each rule's `name` in the file, by rule name. */
  lines: Map<string, number>;
  problems: RuleProblem[];
}

/** `file:line: rule "name": message` for printing. */
export function formatRuleProblem(p: RuleProblem): string {
  const loc = p.file ? `${p.file}${p.line ? `:${p.line}` : ""}: ` : "";
  return `${loc}${p.rule ? `rule "${p.rule}": ` : ""}${p.message}`;
}

/**
 * Parse a rule file's text. Problems are collected, never thrown; the rules without problems are
 * returned. `source` marks where the rules come from ("builtin" for rules/, "import" for user files).
 */
export function parseRuleText(
  text: string,
  file: string,
  source: RuleDef["source"] = "import",
): ParsedRuleFile {
  // Loaded on first use, so that `sluice scan` and its workers, which read no rule file, never load it.
  const { isMap, isSeq, LineCounter, parseDocument } = require("yaml") as typeof import("yaml");
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  const out: ParsedRuleFile = { rules: [], lines: new Map(), problems: [] };
  const lineOf = (node: Node | null | undefined): number | null =>
    node?.range ? lc.linePos(node.range[0]).line : null;
  if (doc.errors.length > 0) {
    for (const e of doc.errors)
      out.problems.push({
        file,
        line: lc.linePos(e.pos[0]).line,
        rule: null,
        message: `invalid YAML/JSON: ${e.message.split("\n")[0]}`,
      });
    return out;
  }
  let list = doc.contents as Node | null;
  if (isMap(list)) list = ((list as YAMLMap).get("rules", true) as Node | undefined) ?? null;
  if (!isSeq(list)) {
    out.problems.push({
      file,
      line: lineOf(doc.contents as Node | null) ?? 1,
      rule: null,
      message: "expected a list of rules, or a mapping with a `rules:` list",
    });
    return out;
  }
  for (const item of list.items as Node[]) {
    const line = lineOf(item);
    if (!isMap(item)) {
      out.problems.push({
        file,
        line,
        rule: null,
        message: "each rule must be a mapping with name and pattern",
      });
      continue;
    }
    const at: RuleAt = { file, line, lineOf: (field) => lineOf(item.get(field, true) as Node | undefined) };
    const rule = ruleFromRaw(item.toJSON() as Record<string, unknown>, at, source, out.lines, out.problems);
    if (rule) out.rules.push(rule);
  }
  return out;
}

/** A rule as a rule file holds it, for `sluice rules export` (no hit counts or timestamps). */
export function exportableRule(r: RuleDef): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: r.name,
    pattern: r.pattern,
    detector: r.detector,
    severity: r.severity,
    action: r.action,
    enabled: r.enabled,
    tier: r.tier,
    description: r.description,
    tags: r.tags,
  };
  if (r.validator) out.validator = r.validator;
  if (r.keywords?.length) out.keywords = r.keywords;
  if (r.entropy != null) out.entropy = r.entropy;
  if (r.examples?.length) out.examples = r.examples;
  if (r.negative_examples?.length) out.negative_examples = r.negative_examples;
  return out;
}

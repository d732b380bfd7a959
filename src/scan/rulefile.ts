/**
 * Rule files for `sluice scan --rules FILE` and `sluice rules import|validate`: YAML or JSON, either
 * a list of rules or `{rules: [...]}`, each rule shaped like `rules/*.yaml` (RuleDef with examples).
 * Every problem names the file and the line of the rule (or of the offending field).
 */
import { readFileSync } from "node:fs";
import { isMap, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from "yaml";
import { z } from "zod";
import { DETECTORS, RULE_ACTIONS, RULE_TIERS, type RuleDef, SEVERITIES, VALIDATORS } from "../core/types.ts";

export const ruleNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,99}$/, "lowercase letters, digits, '_', '.', '-' (1 to 100 characters)");

export const ruleEntrySchema = z.object({
  name: ruleNameSchema,
  pattern: z.string().min(1).max(4096),
  detector: z.enum(DETECTORS).default("custom"),
  severity: z.enum(SEVERITIES).default("high"),
  action: z.enum(RULE_ACTIONS).default(""),
  enabled: z.boolean().default(true),
  tier: z.enum(RULE_TIERS).default("custom"),
  description: z.string().max(1000).default(""),
  tags: z.array(z.string()).default([]),
  validator: z.enum(VALIDATORS).nullable().optional(),
  keywords: z.array(z.string()).nullable().optional(),
  entropy: z.number().min(0).max(8).nullable().optional(),
  examples: z.array(z.string()).optional(),
  negative_examples: z.array(z.string()).optional(),
});

export interface RuleProblem {
  file: string;
  line: number;
  rule: string | null;
  message: string;
}

export function formatProblem(p: RuleProblem): string {
  return `${p.file}:${p.line}: ${p.rule ? `rule "${p.rule}": ` : ""}${p.message}`;
}

export interface ParsedRuleFile {
  rules: RuleDef[];
  /** Line of each rule (by name) in the file, for later checks (examples). */
  lines: Map<string, number>;
  problems: RuleProblem[];
}

/** Parse a rule file's text. Problems are collected, never thrown; valid rules are still returned. */
export function parseRuleText(
  text: string,
  file: string,
  source: RuleDef["source"] = "import",
): ParsedRuleFile {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  const out: ParsedRuleFile = { rules: [], lines: new Map(), problems: [] };
  const lineOf = (node: Node | null | undefined, fallback = 1) =>
    node?.range ? lc.linePos(node.range[0]).line : fallback;
  if (doc.errors.length > 0) {
    for (const err of doc.errors) {
      out.problems.push({
        file,
        line: err.linePos?.[0]?.line ?? 1,
        rule: null,
        message: `invalid YAML/JSON: ${err.message.split("\n")[0]}`,
      });
    }
    return out;
  }
  let seq: Node | null = doc.contents as Node | null;
  if (isMap(seq)) seq = ((seq as YAMLMap).get("rules", true) as Node | undefined) ?? null;
  if (!isSeq(seq)) {
    out.problems.push({
      file,
      line: lineOf(doc.contents as Node | null),
      rule: null,
      message: "expected a list of rules, or a mapping with a `rules:` list",
    });
    return out;
  }
  const seen = new Map<string, number>();
  for (const item of seq.items as Node[]) {
    const line = lineOf(item);
    const raw = (item as { toJSON?: () => unknown }).toJSON?.() ?? null;
    const name =
      raw && typeof raw === "object" && "name" in raw ? String((raw as { name: unknown }).name) : null;
    const parsed = ruleEntrySchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const key = issue.path[0];
        const field =
          isMap(item) && key !== undefined ? (item.get(key, true) as Node | undefined) : undefined;
        const where = issue.path.map(String).join(".") || "(rule)";
        out.problems.push({
          file,
          line: lineOf(field, line),
          rule: name,
          message: `${where}: ${issue.message}`,
        });
      }
      continue;
    }
    const r = parsed.data;
    if (seen.has(r.name)) {
      out.problems.push({
        file,
        line,
        rule: r.name,
        message: `duplicate rule name (first at line ${seen.get(r.name)})`,
      });
      continue;
    }
    seen.set(r.name, line);
    const rule: RuleDef = {
      name: r.name,
      pattern: r.pattern,
      detector: r.detector,
      severity: r.severity,
      action: r.action,
      enabled: r.enabled,
      tier: r.tier,
      source,
      description: r.description,
      tags: r.tags,
      validator: r.validator ?? null,
      keywords: r.keywords ?? null,
      entropy: r.entropy ?? null,
    };
    if (r.examples) rule.examples = r.examples;
    if (r.negative_examples) rule.negative_examples = r.negative_examples;
    out.rules.push(rule);
    out.lines.set(r.name, line);
  }
  return out;
}

export function parseRuleFile(path: string, source: RuleDef["source"] = "import"): ParsedRuleFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    return {
      rules: [],
      lines: new Map(),
      problems: [{ file: path, line: 1, rule: null, message: `cannot read: ${(e as Error).message}` }],
    };
  }
  return parseRuleText(text, path, source);
}

/** Serialisable form of a rule for export (no hit counts or timestamps). */
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

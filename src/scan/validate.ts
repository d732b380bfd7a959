/**
 * `sluice rules validate`: every pattern compiles (and passes the matcher's safety checks), every
 * example produces a finding of its rule and no negative example does, with validators, keywords
 * and entropy applied exactly as the scanner applies them (src/detect/builtin.ts `validateRules`).
 * Each problem names the file and the line of the rule.
 */
import { readFileSync } from "node:fs";
import { isMap, isSeq, LineCounter, parseDocument } from "yaml";
import type { Config } from "../config/schema.ts";
import type { RuleDef } from "../core/types.ts";
import { builtinRuleFiles, validateRules } from "../detect/builtin.ts";
import { checkUserPattern } from "../detect/pattern.ts";
import { type ParsedRuleFile, parseRuleText, type RuleProblem } from "../detect/rule-file.ts";
import { configRules } from "../policy/compile.ts";

/** Read and parse a rule file; a file that cannot be read is one problem. */
export function readRuleFile(path: string, source: RuleDef["source"] = "import"): ParsedRuleFile {
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

/**
 * Pattern checks only (fast; `sluice scan --rules`): the matcher's acceptance check for a user's
 * pattern (it compiles, does not match empty text, cannot backtrack catastrophically).
 */
export function checkRulePatterns(rules: RuleDef[], lines: Map<string, number>, file: string): RuleProblem[] {
  const out: RuleProblem[] = [];
  for (const r of rules) {
    const check = checkUserPattern(r.pattern);
    if (!check.ok) out.push({ file, line: lines.get(r.name) ?? 1, rule: r.name, message: check.error });
  }
  return out;
}

/** Patterns, examples and negative examples, as the matcher runs them. */
export function checkRules(rules: RuleDef[], lines: Map<string, number>, file: string): RuleProblem[] {
  return validateRules(rules, { file, lines }).map((p) => ({
    file,
    line: p.line ?? (p.rule ? lines.get(p.rule) : undefined) ?? 1,
    rule: p.rule,
    message: p.message,
  }));
}

export interface ValidateResult {
  files: number;
  rules: number;
  problems: RuleProblem[];
}

function sortProblems(ps: RuleProblem[]): RuleProblem[] {
  return ps.sort((a, b) =>
    a.file === b.file ? (a.line ?? 0) - (b.line ?? 0) : (a.file ?? "") < (b.file ?? "") ? -1 : 1,
  );
}

export function validateRuleFiles(paths: string[]): ValidateResult {
  const res: ValidateResult = { files: paths.length, rules: 0, problems: [] };
  for (const p of paths) {
    const parsed = readRuleFile(p);
    res.rules += parsed.rules.length;
    res.problems.push(...parsed.problems, ...checkRules(parsed.rules, parsed.lines, p));
  }
  sortProblems(res.problems);
  return res;
}

/** Line of each `custom_rules` entry (by name) in a config file. */
function configRuleLines(file: string | null): Map<string, number> {
  const lines = new Map<string, number>();
  if (!file) return lines;
  try {
    const lc = new LineCounter();
    const doc = parseDocument(readFileSync(file, "utf8"), { lineCounter: lc });
    const seq = doc.get("custom_rules", true);
    if (isSeq(seq))
      for (const item of seq.items) {
        const name = isMap(item) ? item.get("name") : null;
        const at = (item as { range?: [number, number, number] }).range?.[0];
        if (typeof name === "string" && at !== undefined) lines.set(name, lc.linePos(at).line);
      }
  } catch {
    /* lines are a convenience */
  }
  return lines;
}

/** The rules in force without a file argument: the built-in rule files, then the config's rules. */
export function validateInForce(config: Config, configFile: string | null): ValidateResult {
  const res: ValidateResult = { files: 0, rules: 0, problems: [] };
  for (const f of builtinRuleFiles()) {
    const parsed = parseRuleText(f.text, f.file, "builtin");
    res.files++;
    res.rules += parsed.rules.length;
    for (const p of [
      ...parsed.problems,
      ...validateRules(parsed.rules, { file: f.file, lines: parsed.lines }),
    ])
      res.problems.push({ file: p.file ?? f.file, line: p.line ?? 1, rule: p.rule, message: p.message });
  }
  const fromConfig = configRules(config, new Set());
  if (fromConfig.length) res.files++;
  res.rules += fromConfig.length;
  res.problems.push(...checkRules(fromConfig, configRuleLines(configFile), configFile ?? "config"));
  sortProblems(res.problems);
  return res;
}

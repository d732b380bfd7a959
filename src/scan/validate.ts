/**
 * `sluice rules validate`: every pattern compiles, every example matches its rule and no negative
 * example does. Each problem names the file and the line of the rule.
 */
import type { RuleDef } from "../core/types.ts";
import { checkUserPattern, compilePattern } from "../detect/pattern.ts";
import { parseRuleFile, type RuleProblem } from "./rulefile.ts";

/** Compile a rule pattern the way the engine does (a leading `(?i)` / `(?s)` becomes flags). */
export function compileRulePattern(pattern: string, extraFlags = ""): RegExp {
  return compilePattern(pattern, extraFlags);
}

/**
 * The engine's own acceptance check: the pattern compiles, does not match empty text and cannot
 * backtrack catastrophically. Returns the error message or null.
 */
export function patternError(pattern: string): string | null {
  const res = checkUserPattern(pattern);
  return res.ok ? null : res.error;
}

export function checkRulePatterns(rules: RuleDef[], lines: Map<string, number>, file: string): RuleProblem[] {
  const out: RuleProblem[] = [];
  for (const r of rules) {
    const err = patternError(r.pattern);
    if (err)
      out.push({
        file,
        line: lines.get(r.name) ?? 1,
        rule: r.name,
        message: err,
      });
  }
  return out;
}

function matches(rule: RuleDef, text: string): boolean {
  const re = compileRulePattern(rule.pattern, "g");
  return re.test(text);
}

/** Compile every pattern and run its examples. */
export function checkRules(rules: RuleDef[], lines: Map<string, number>, file: string): RuleProblem[] {
  const out = checkRulePatterns(rules, lines, file);
  const broken = new Set(out.map((p) => p.rule));
  for (const r of rules) {
    if (broken.has(r.name)) continue;
    const line = lines.get(r.name) ?? 1;
    (r.examples ?? []).forEach((ex, i) => {
      if (!matches(r, ex))
        out.push({
          file,
          line,
          rule: r.name,
          message: `examples[${i}] is not matched by the rule: ${JSON.stringify(ex)}`,
        });
    });
    (r.negative_examples ?? []).forEach((ex, i) => {
      if (matches(r, ex))
        out.push({
          file,
          line,
          rule: r.name,
          message: `negative_examples[${i}] is matched by the rule: ${JSON.stringify(ex)}`,
        });
    });
  }
  return out;
}

export interface ValidateResult {
  files: number;
  rules: number;
  problems: RuleProblem[];
}

export function validateRuleFiles(paths: string[]): ValidateResult {
  const res: ValidateResult = { files: paths.length, rules: 0, problems: [] };
  for (const p of paths) {
    const parsed = parseRuleFile(p);
    res.rules += parsed.rules.length;
    res.problems.push(...parsed.problems, ...checkRules(parsed.rules, parsed.lines, p));
  }
  res.problems.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  return res;
}

/** Validate rules that are not in a file of their own (built-in and config rules). */
export function validateRuleSet(rules: RuleDef[], where: string): ValidateResult {
  return { files: 0, rules: rules.length, problems: checkRules(rules, new Map(), where) };
}

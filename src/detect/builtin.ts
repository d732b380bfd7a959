/**
 * The community rules shipped in rules/*.yaml, embedded so that compiled binaries carry them, and the
 * rule checks behind `sluice rules validate` and the rule self-test (patterns, examples, negatives).
 */
import { RULE_FILES } from "../../rules/index.ts";
import type { RuleDef } from "../core/types.ts";
import { parseBuiltinRules } from "./builtin-rules.ts";
import { compileRules } from "./compile.ts";
import { scanText } from "./matcher.ts";
import { checkUserPattern, compilePattern } from "./pattern.ts";
import { parseRuleText, type RuleProblem } from "./rule-file.ts";

/**
 * The community rules, parsed from rules/*.yaml when the binary is built (build.ts runs
 * builtin-rules.ts's builtinRuleData and inlines its result as a constant). From source there are
 * none and the rules are parsed at start (~2 ms, less than a Bun macro costs at every start).
 */
declare const SLUICE_BUILTIN_RULES: string | undefined;

let cached: RuleDef[] | null = null;

/** The community rules of rules/*.yaml (a fresh copy each call). */
export function loadBuiltinRules(): RuleDef[] {
  // The inlined rules are used when they were made from the embedded texts (always in a built
  // binary, checked anyway); otherwise the texts are parsed.
  const INLINED: { texts: string[]; rules: RuleDef[] } | null =
    cached || typeof SLUICE_BUILTIN_RULES === "undefined" ? null : JSON.parse(SLUICE_BUILTIN_RULES);
  if (!cached)
    cached =
      INLINED !== null &&
      INLINED.texts.length === RULE_FILES.length &&
      RULE_FILES.every((f, i) => f.text === INLINED.texts[i])
        ? INLINED.rules
        : parseBuiltinRules();
  return cached.map((r) => ({
    ...r,
    tags: [...r.tags],
    examples: [...(r.examples ?? [])],
    negative_examples: [...(r.negative_examples ?? [])],
  }));
}

/** The embedded rule files (name and text), for `sluice rules export` and the self-test. */
export function builtinRuleFiles(): { file: string; text: string }[] {
  return RULE_FILES.map((f) => ({ ...f }));
}

/**
 * Check rules the way the scanner will run them: the pattern compiles (and, for rules that are not
 * builtin, passes checkUserPattern), every `examples` entry produces a finding of that rule and no
 * `negative_examples` entry does (validators, keywords and entropy included).
 */
export function validateRules(
  rules: RuleDef[],
  where: { file?: string; lines?: Map<string, number> } = {},
): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const at = (rule: string) => ({ file: where.file ?? null, line: where.lines?.get(rule) ?? null, rule });
  for (const rule of rules) {
    try {
      compilePattern(rule.pattern);
    } catch (err) {
      problems.push({ ...at(rule.name), message: `pattern does not compile: ${(err as Error).message}` });
      continue;
    }
    if (rule.source !== "builtin") {
      const check = checkUserPattern(rule.pattern);
      if (!check.ok) {
        problems.push({ ...at(rule.name), message: check.error });
        continue;
      }
    }
    const matcher = compileRules([{ ...rule, enabled: true }], { trusted: () => true });
    for (const ex of rule.examples ?? []) {
      const found = scanText(matcher, ex, { encoding: null }).some((m) => m.rule.name === rule.name);
      if (!found)
        problems.push({ ...at(rule.name), message: `example does not match: ${JSON.stringify(ex)}` });
    }
    for (const ex of rule.negative_examples ?? []) {
      const found = scanText(matcher, ex, { encoding: null }).some((m) => m.rule.name === rule.name);
      if (found)
        problems.push({ ...at(rule.name), message: `negative example matches: ${JSON.stringify(ex)}` });
    }
  }
  return problems;
}

/** Parse and validate one rule file: everything `sluice rules validate <file>` reports. */
export function validateRuleFile(
  file: string,
  text: string,
  source: RuleDef["source"] = "import",
): RuleProblem[] {
  const parsed = parseRuleText(text, file, source);
  return [...parsed.problems, ...validateRules(parsed.rules, { file, lines: parsed.lines })];
}

/**
 * The community rules shipped in rules/*.yaml, embedded so that compiled binaries carry them, and the
 * rule-file checker behind `sluice rules validate` and the rule self-test.
 * SEAM (owned by detection): `loadBuiltinRules` keeps its signature.
 */
import { isMap, isSeq, LineCounter, parseDocument, type YAMLMap } from "yaml";
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
import { compileRules, scanText } from "./engine.ts";
import { checkUserPattern, compilePattern } from "./pattern.ts";

/** One problem in a rule file or rule: where it is and what is wrong. */
export interface RuleProblem {
  file: string | null;
  line: number | null;
  rule: string | null;
  message: string;
}

export interface ParsedRuleFile {
  rules: RuleDef[];
  /** Line of each rule's `name` in the file, by rule name. */
  lines: Map<string, number>;
  problems: RuleProblem[];
}

const NAME_RE = /^[a-z0-9][a-z0-9_.-]{0,99}$/;

/**
 * Parse one rule file (`rules: [ {name, pattern, …} ]`, or a bare list). Fields are checked and
 * problems reported with the file and line; rules with problems in required fields are left out.
 * `source` marks where the rules come from ("builtin" for rules/, "import" for user files).
 */
export function parseRuleFile(
  file: string,
  text: string,
  source: RuleDef["source"] = "import",
): ParsedRuleFile {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  const problems: RuleProblem[] = [];
  const lines = new Map<string, number>();
  const lineOf = (offset: number | undefined) => (offset === undefined ? null : lc.linePos(offset).line);
  for (const e of doc.errors) problems.push({ file, line: lineOf(e.pos[0]), rule: null, message: e.message });
  if (doc.errors.length > 0) return { rules: [], lines, problems };
  let list: unknown = doc.contents;
  if (isMap(list)) list = (list as YAMLMap).get("rules", true);
  if (!isSeq(list)) {
    problems.push({ file, line: 1, rule: null, message: "expected a `rules:` list of rules" });
    return { rules: [], lines, problems };
  }
  const rules: RuleDef[] = [];
  for (const item of list.items) {
    const line = lineOf((item as { range?: [number, number, number] }).range?.[0]);
    if (!isMap(item)) {
      problems.push({ file, line, rule: null, message: "each rule must be a mapping with name and pattern" });
      continue;
    }
    const rule = ruleFromRaw(
      (item as YAMLMap).toJSON() as Record<string, unknown>,
      file,
      line,
      source,
      lines,
      problems,
    );
    if (rule) rules.push(rule);
  }
  return { rules, lines, problems };
}

/** One rule from its parsed mapping; problems are added to `problems`, null when it is left out. */
function ruleFromRaw(
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

let cached: RuleDef[] | null = null;

/** The community rules of rules/*.yaml (a fresh copy each call). */
export function loadBuiltinRules(): RuleDef[] {
  if (!cached) {
    cached = [];
    // Bun's native YAML parser: ~1 ms for all files instead of ~45 ms with the `yaml` package, which
    // every `sluice scan` worker paid at start-up. The files are ours and checked by the rule
    // self-test; user rule files keep parseRuleFile (line numbers in problems).
    for (const f of RULE_FILES) {
      const doc = Bun.YAML.parse(f.text) as { rules?: unknown } | unknown[] | null;
      const list = Array.isArray(doc) ? doc : (doc as { rules?: unknown } | null)?.rules;
      if (!Array.isArray(list)) throw new Error(`${f.file}: expected a \`rules:\` list`);
      const lines = new Map<string, number>();
      for (const item of list) {
        const rule = ruleFromRaw(item as Record<string, unknown>, f.file, null, "builtin", lines, []);
        if (rule) cached.push(rule);
      }
    }
  }
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
    const engine = compileRules([{ ...rule, enabled: true }], { trusted: () => true });
    for (const ex of rule.examples ?? []) {
      const found = scanText(engine, ex, { encoding: null }).some((m) => m.rule.name === rule.name);
      if (!found)
        problems.push({ ...at(rule.name), message: `example does not match: ${JSON.stringify(ex)}` });
    }
    for (const ex of rule.negative_examples ?? []) {
      const found = scanText(engine, ex, { encoding: null }).some((m) => m.rule.name === rule.name);
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
  const parsed = parseRuleFile(file, text, source);
  return [...parsed.problems, ...validateRules(parsed.rules, { file, lines: parsed.lines })];
}

/** `file:line: rule: message` for printing. */
export function formatRuleProblem(p: RuleProblem): string {
  const loc = p.file ? `${p.file}${p.line ? `:${p.line}` : ""}: ` : "";
  return `${loc}${p.rule ? `${p.rule}: ` : ""}${p.message}`;
}

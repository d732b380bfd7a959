/**
 * Pattern analysis as data: the built-in rules' analyses inlined at build time equal a live
 * analysis, and the follow check after a prefix literal never rejects a real match.
 */
import { describe, expect, test } from "bun:test";
import type { RuleDef } from "../../src/core/types.ts";
import { analyzePattern, builtinAnalyses } from "../../src/detect/analysis.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { compileRules } from "../../src/detect/compile.ts";
import { scanText } from "../../src/detect/matcher.ts";
import { followAfter, parseRegex } from "../../src/detect/regex-ast.ts";
import { snapshotMatcher } from "../../src/detect/snapshot.ts";

describe("precomputed analyses", () => {
  test("build.ts's analyses cover every built-in pattern; a matcher compiled with them is the same", () => {
    const rules = loadBuiltinRules();
    const analyses = builtinAnalyses();
    expect(rules.length).toBeGreaterThan(50);
    for (const r of rules)
      expect({ rule: r.name, a: analyses[r.pattern] }).toEqual({
        rule: r.name,
        a: analyzePattern(r.pattern),
      });
    expect(snapshotMatcher(compileRules(rules, { analyses }), rules)).toEqual(
      snapshotMatcher(compileRules(rules), rules),
    );
  });

  test("a pattern our parser cannot read is marked, not thrown", () => {
    expect(analyzePattern("(?<=a)(?<x>b)\\k<x>[").parsed).toBe(false);
  });
});

describe("follow check after a prefix literal", () => {
  const generic = String.raw`(?:password|token|client[_-]?secret)[\w.-]{0,40}?["']?\s{0,3}(?:=|:)\s{0,3}([^\s"']{16,})`;

  test("a keyword alternation: skip what may come before the operator, then need it", () => {
    const f = followAfter(parseRegex(generic), "token", true)!;
    expect([...f.need].sort()).toEqual([":", "="]);
    expect(f.max).toBe(40 + 1 + 3);
    expect(f.skip.has("_")).toBe(true);
    expect(f.skip.has("(")).toBe(false);
    // `\s` is every JavaScript whitespace, not only ASCII.
    expect(f.skip.has("\u00a0")).toBe(true);
    // The literal ends inside `client[_-]?secret`: the rest of the branch may follow it.
    const c = followAfter(parseRegex(generic), "client", true)!;
    expect(c.max).toBe("_secret".length + 40 + 1 + 3);
    expect(c.skip.has("s")).toBe(true);
  });

  test("fixed prefixes need the next item's first character", () => {
    const f = followAfter(parseRegex("ghp_[A-Za-z0-9]{36}"), "ghp_", false)!;
    expect(f.max).toBe(0);
    expect(f.need.has("a") && f.need.has("Z") && f.need.has("0")).toBe(true);
  });

  test("no check when the shape gives none", () => {
    expect(followAfter(parseRegex("api[_-]?key|apikey"), "apikey", false)).toBeNull();
    expect(followAfter(parseRegex("token.*"), "token", false)).toBeNull();
  });

  const rule = (pattern: string): RuleDef => ({
    name: "t",
    description: "t",
    detector: "secrets",
    severity: "high",
    action: "block",
    pattern,
    enabled: true,
    source: "import",
    tier: "custom",
    tags: [],
    examples: [],
    negative_examples: [],
  });

  test("the matcher finds what the regex finds, with and without the operator nearby", () => {
    const e = compileRules([rule(`(?i)${generic}`)], { trusted: () => true });
    const value = ["Zx9vQ2mL7", "pR4tY8uW1eK5sN3b"].join("");
    const cases = [
      `tokenizer.next(x); token = "${value}"`,
      `CLIENT_SECRET:\u00a0${value}`,
      `password_for_the_main_database_of_prod = ${value}`,
      `const token = fetchToken(a, b); // no value`,
    ];
    const re = new RegExp(generic, "gi");
    for (const text of cases) {
      const want = [...text.matchAll(re)].map((m) => m[1]!);
      const got = scanText(e, text, { encoding: null }).map((m) => m.value);
      expect({ text, got }).toEqual({ text, got: want });
    }
  });
});

describe("base64 runs found in the one pass", () => {
  test("decoding sees every run at least the minimum long, wherever it sits", () => {
    const e = compileRules(loadBuiltinRules());
    const token = ["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].join("");
    const b64 = btoa(`token ${token}`);
    const enc = {
      base64: true,
      hex: false,
      url: false,
      unicode: false,
      max_depth: 1,
      min_decoded_length: 8,
      max_decoded_length: 10000,
    };
    for (const text of [
      b64,
      `"${b64}"`,
      `${b64}\n`,
      `ab ${b64} cd`,
      `=${b64}=`,
      `${"A".repeat(15)} ${b64}`,
    ]) {
      const found = scanText(e, text, { encoding: enc }).filter((m) => m.decoded === "base64");
      expect({ text, rules: found.map((m) => m.rule.name) }).toEqual({ text, rules: ["github_pat"] });
      const at = text.indexOf(b64);
      expect(found[0]!.start).toBe(at);
    }
  });
});

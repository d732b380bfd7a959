/**
 * A tiny stand-in scanner for unit tests of src/scan/ (windowing, diff mapping, baseline, output):
 * each rule is a regex; the finding looks like the pipeline's. End-to-end tests use the real one.
 */
import { createHash } from "node:crypto";
import type { Action, Finding, Severity } from "../../src/core/types.ts";
import { copyString } from "../../src/policy/mask.ts";
import type { TextScanner } from "../../src/scan/window.ts";

export interface TestRule {
  name: string;
  pattern: RegExp;
  action?: Action;
  severity?: Severity;
}

/** Like maskValue, a new string: a slice would keep the scanned text alive (window.ts relies on it). */
export function mask(v: string): string {
  return v.length <= 8 ? "****" : copyString(`${v.slice(0, 4)}****${v.slice(-4)}`);
}

export function regexScanner(rules: TestRule[]): TextScanner & { calls: number } {
  const fn = ((text: string, path: string) => {
    fn.calls++;
    const out: Finding[] = [];
    for (const r of rules) {
      const re = new RegExp(r.pattern.source, `${r.pattern.flags.replace("g", "")}g`);
      for (const m of text.matchAll(re)) {
        const value = m[0];
        out.push({
          rule: r.name,
          detector: "secrets",
          finding_type: r.name,
          severity: r.severity ?? "high",
          action: r.action ?? "block",
          action_source: r.action ? "rule" : "rule_default",
          matched_rules: [r.name],
          path,
          start: m.index!,
          end: m.index! + value.length,
          preview: mask(value),
          content_hash: createHash("sha256").update(value).digest("hex"),
          value_hash: null,
          decoded: null,
          description: `test rule ${r.name}`,
        });
      }
    }
    return out;
  }) as TextScanner & { calls: number };
  fn.calls = 0;
  return fn;
}

export const AWS = { name: "aws", pattern: /AKIA[0-9A-Z]{16}/ } satisfies TestRule;

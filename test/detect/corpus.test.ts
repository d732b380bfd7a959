/**
 * Precision and recall per detector family on the labeled corpus (test/corpus/corpus.ts), through
 * the payload pipeline as `sluice scan` gives it a text. Targets: ≥ 0.95 each. The table is printed.
 */
import { expect, test } from "bun:test";
import { defaultConfig } from "../../src/config/schema.ts";
import type { Finding } from "../../src/core/types.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { createPipeline, textPayload } from "../../src/policy/pipeline.ts";
import { corpus } from "../bench/engine.bench.ts";
import { negatives, positives } from "../corpus/corpus.ts";

const rules = loadBuiltinRules();
const pipeline = createPipeline({
  config: defaultConfig,
  rules: () => rules,
  rulesVersion: () => 1,
  hmacKey: null,
});
const findingsIn = (text: string, path: string) => pipeline.inspect(textPayload(text, path)).findings;
const FAMILIES = ["secrets", "pii", "proprietary", "injection"] as const;

test("every community rule has a positive in the corpus", () => {
  const covered = new Set(positives().map((p) => p.rule));
  expect(rules.map((r) => r.name).filter((n) => !covered.has(n))).toEqual([]);
});

test("precision and recall per family are at least 0.95", () => {
  const stats = Object.fromEntries(
    FAMILIES.map((f) => [f, { tp: 0, fn: 0, fp: 0, missed: [] as string[], wrong: [] as string[] }]),
  );
  for (const pos of positives()) {
    const found = findingsIn(pos.text, `corpus/${pos.rule}`);
    const st = stats[pos.family]!;
    if (found.some((f) => f.rule === pos.rule)) st.tp++;
    else {
      st.fn++;
      st.missed.push(pos.rule);
    }
    // Other findings in a positive are false positives unless they are another real value in the text
    // (a card-holder line may also hold a phone number): only findings of other families count.
    for (const f of found) if (f.detector !== pos.family && f.rule !== pos.rule) count(f, `${pos.rule}`);
  }
  function count(f: Finding, where: string) {
    const fam = f.detector as (typeof FAMILIES)[number];
    if (!stats[fam]) return;
    stats[fam]!.fp++;
    stats[fam]!.wrong.push(`${f.rule} in ${where} (${f.preview})`);
  }
  for (const neg of negatives())
    for (const f of findingsIn(neg.text, `corpus/${neg.kind}`)) count(f, neg.kind);
  const rows = FAMILIES.map((fam) => {
    const s = stats[fam]!;
    const precision = s.tp + s.fp === 0 ? 1 : s.tp / (s.tp + s.fp);
    const recall = s.tp + s.fn === 0 ? 1 : s.tp / (s.tp + s.fn);
    return {
      family: fam,
      tp: s.tp,
      fp: s.fp,
      fn: s.fn,
      precision: precision.toFixed(3),
      recall: recall.toFixed(3),
      missed: s.missed.join(", "),
      false_positives: s.wrong.join("; "),
    };
  });
  console.log(`corpus: ${positives().length} positives, ${negatives().length} negatives`);
  console.table(rows.map(({ missed, false_positives, ...r }) => r));
  for (const r of rows) {
    if (r.missed || r.false_positives)
      console.log(`${r.family}: missed [${r.missed}] false positives [${r.false_positives}]`);
    expect(Number(r.precision)).toBeGreaterThanOrEqual(0.95);
    expect(Number(r.recall)).toBeGreaterThanOrEqual(0.95);
  }
});

test("real text: ~3 MB of installed dependencies' sources and READMEs raise no secret findings", () => {
  // The same fixed inputs as the matcher bench: real code and prose that mention keys, tokens,
  // passwords, URLs and numbers all the time, and contain no credential.
  const { prose, code } = corpus();
  const text = [...prose, ...code].join("\n");
  expect(text.length).toBeGreaterThan(1_000_000);
  const found = findingsIn(text, "node_modules");
  console.log(
    `real text: ${(text.length / 1e6).toFixed(1)} MB, findings: ${found.map((f) => `${f.rule} ${f.preview}`).join("; ") || "none"}`,
  );
  expect(found.filter((f) => f.detector === "secrets")).toEqual([]);
  // What remains are true mentions (a client-cert .pem path in an SDK README, a sample email).
  expect(found.length).toBeLessThanOrEqual(5);
});

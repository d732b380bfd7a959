/**
 * Differential test of the prefilter: the matcher (trigram anchors, sticky starts, windows, digit
 * clusters) must find exactly what the naive matcher finds — every rule's regex over the whole text,
 * with the same validators, entropy, placeholder and keyword checks — on the corpus, every rule
 * example, and real text with values planted at random places.
 */
import { expect, test } from "bun:test";
import { defaults } from "../../src/config/files.ts";
import type { RuleDef } from "../../src/core/types.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { compileRules, KEYWORD_BACK } from "../../src/detect/compile.ts";
import { isPlaceholder, shannonEntropy } from "../../src/detect/entropy.ts";
import { scanText } from "../../src/detect/matcher.ts";
import { compilePattern } from "../../src/detect/pattern.ts";
import { VALIDATOR_FNS } from "../../src/detect/validators.ts";
import { corpus } from "../bench/engine.bench.ts";
import { negatives, positives } from "../corpus/corpus.ts";

const rules = loadBuiltinRules();
const matcher = compileRules(rules);
const regexes = rules.map((r) => compilePattern(r.pattern, "gd"));

function naive(text: string): string[] {
  const out: string[] = [];
  for (const [i, r] of rules.entries()) {
    const re = regexes[i]!;
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      const g = m[1] !== undefined ? 1 : 0;
      const [s, e] = m.indices![g]!;
      if (accept(r, m[g]!, text, s, e)) out.push(`${r.name}@${s}-${e}`);
    }
  }
  return out.sort();
}

function accept(r: RuleDef, value: string, text: string, s: number, e: number): boolean {
  if (r.validator && !VALIDATOR_FNS[r.validator](value)) return false;
  if (r.entropy != null && !(shannonEntropy(value) > r.entropy)) return false;
  if (r.detector === "secrets" && isPlaceholder(value)) return false;
  if (r.keywords?.length) {
    const around = text.slice(Math.max(0, s - KEYWORD_BACK), e + KEYWORD_BACK).toLowerCase();
    if (!r.keywords.some((k) => around.includes(k.toLowerCase()))) return false;
  }
  return true;
}

const fast = (text: string) =>
  scanText(matcher, text, { encoding: null })
    .map((m) => `${m.rule.name}@${m.start}-${m.end}`)
    .sort();

test("the corpus and every rule example: same findings as the naive matcher", () => {
  const texts = [
    ...positives().map((p) => p.text),
    ...negatives().map((n) => n.text),
    ...rules.flatMap((r) => [...(r.examples ?? []), ...(r.negative_examples ?? [])]),
  ];
  for (const t of texts) expect({ t, found: fast(t) }).toEqual({ t, found: naive(t) });
});

test("real text with values planted at random places: same findings as the naive matcher", () => {
  const { prose, code } = corpus();
  const plants = [...positives().map((p) => p.text), ...rules.flatMap((r) => r.examples ?? [])];
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 48271) % 2147483647;
    return seed % n;
  };
  for (let round = 0; round < 30; round++) {
    const parts: string[] = [];
    for (let k = 0; k < 40; k++) {
      const src = rnd(3) === 0 ? prose : code;
      const piece = src[rnd(src.length)]!;
      const at = rnd(Math.max(1, piece.length - 2000));
      parts.push(piece.slice(at, at + 1 + rnd(2000)));
      if (rnd(2) === 0) parts.push(plants[rnd(plants.length)]!);
    }
    const text = parts.join(rnd(2) ? "\n" : " ");
    expect(fast(text)).toEqual(naive(text));
  }
});

test("segments joined with bounds find what each segment finds alone (decoding on)", () => {
  const enc = defaults().pipeline.encoding;
  const segs = [
    ...positives().map((p) => p.text),
    ...negatives().map((n) => n.text),
    Buffer.from(`token ${positives()[2]!.text}`).toString("base64"),
    "aws_secret_access_key is mentioned here",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  ];
  const sep = "\n\u0000\n";
  // Joined 400 segments at a time: one scan keeps at most MAX_MATCHES_PER_RULE matches of a rule,
  // and the generic rule finds more than that in the whole corpus.
  const joined: string[] = [];
  for (let first = 0; first < segs.length; first += 400) {
    const batch = segs.slice(first, first + 400);
    const bounds: number[] = [];
    let at = 0;
    for (const s of batch) {
      bounds.push(at, at + s.length);
      at += s.length + sep.length;
    }
    for (const m of scanText(matcher, batch.join(sep), { encoding: enc, bounds })) {
      let k = 0;
      while (k + 1 < batch.length && bounds[(k + 1) * 2]! <= m.start) k++;
      joined.push(
        `${first + k}:${m.rule.name}@${m.start - bounds[k * 2]!}-${m.end - bounds[k * 2]!}:${m.decoded}`,
      );
    }
  }
  joined.sort();
  const alone = segs
    .flatMap((s, k) =>
      scanText(matcher, s, { encoding: enc }).map(
        (m) => `${k}:${m.rule.name}@${m.start}-${m.end}:${m.decoded}`,
      ),
    )
    .sort();
  expect(joined).toEqual(alone);
  expect(alone.length).toBeGreaterThan(50);
});

/**
 * The matcher snapshot of the built-in rules that build.ts inlines into the binary: restored, it is
 * the matcher a fresh compilation gives; for any other rule set it is not used.
 */
import { expect, test } from "bun:test";
import { builtinAnalyses } from "../../src/detect/analysis.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { compileRules } from "../../src/detect/compile.ts";
import { scanText } from "../../src/detect/matcher.ts";
import { compileMatcher, matcherFromSnapshot, snapshotMatcher } from "../../src/detect/snapshot.ts";
import { builtinSnapshot } from "../../src/detect/snapshot-build.ts";

const defs = loadBuiltinRules();

test("restored from the snapshot, the built-in matcher equals a fresh compilation", () => {
  const fresh = compileRules(defs, { analyses: builtinAnalyses() });
  const restored = matcherFromSnapshot(builtinSnapshot(), defs);
  expect(restored).not.toBeNull();
  expect(snapshotMatcher(restored!, defs)).toEqual(snapshotMatcher(fresh, defs));
  expect(restored!.rules.map((r) => r.def)).toEqual(fresh.rules.map((r) => r.def));
  // The tables the hot loop and the kernel read, restored rather than rebuilt.
  expect(restored!.tri).toEqual(fresh.tri);
  expect(restored!.third).toEqual(fresh.third);
  expect(restored!.bigram).toEqual(fresh.bigram);
  expect(restored!.byteHooks).toBe(true);
  const text = `const k = "${["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].join("")}"; mail bob@example.com, 4111 1111 1111 1111`;
  const names = (e: typeof fresh) =>
    scanText(e, text, { encoding: null }).map((m) => `${m.rule.name}@${m.start}`);
  expect(names(restored!)).toEqual(names(fresh));
  expect(names(fresh).length).toBeGreaterThan(0);
});

test("any other rule set is compiled, not restored", () => {
  const snap = builtinSnapshot();
  expect(matcherFromSnapshot(snap, defs.slice(1))).toBeNull();
  expect(
    matcherFromSnapshot(
      snap,
      defs.map((d, i) => (i === 3 ? { ...d, pattern: `${d.pattern}x` } : d)),
    ),
  ).toBeNull();
  expect(
    matcherFromSnapshot(
      snap,
      defs.map((d, i) => (i === 5 ? { ...d, enabled: false } : d)),
    ),
  ).toBeNull();
  expect(
    matcherFromSnapshot(
      snap,
      defs.map((d, i) => (i === 7 ? { ...d, source: "config" as const } : d)),
    ),
  ).toBeNull();
  // compileMatcher still gives a working matcher for them.
  const e = compileMatcher(defs.slice(1));
  expect(e.rules.length).toBe(defs.length - 1);
});

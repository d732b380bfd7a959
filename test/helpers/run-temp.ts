/**
 * A run's temp files in one directory of their own, removed when the run ends, so that a run leaves
 * nothing in the temp dir (sluice homes, stores, certificates, browser profiles, compiled test
 * programs; subprocesses inherit TMPDIR too). What is kept across runs on purpose (the compiled
 * binaries' cache, binaries.ts) stays in the temp dir itself, named by SLUICE_TEST_CACHE_DIR.
 * Used by the test preload (test/setup.ts) and the benchmarks (test/bench/index.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Point TMPDIR at a new directory of this run; returns what removes it (a no-op when one is set). */
export function useRunTempDir(): () => void {
  if (process.env.SLUICE_TEST_CACHE_DIR) return () => {};
  const root = tmpdir();
  const run = mkdtempSync(join(root, "sluice-test-run-"));
  process.env.SLUICE_TEST_CACHE_DIR = root;
  process.env.TMPDIR = run;
  return () => rmSync(run, { recursive: true, force: true });
}

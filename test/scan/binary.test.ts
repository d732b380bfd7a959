/**
 * `sluice scan` in the compiled binary (the shared test build of test/helpers/binaries.ts, or
 * SLUICE_TEST_BINARY):
 * built-in rules are embedded and the scan workers start from the binary's embedded worker entry.
 */
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostBinaries } from "../helpers/binaries.ts";
import { run } from "../helpers/run.ts";

setDefaultTimeout(60_000);

let binary: string;
beforeAll(async () => {
  binary = process.env.SLUICE_TEST_BINARY ?? (await hostBinaries()).sluice;
}, 180_000);

test("the binary scans a tree with worker threads and the built-in rules", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-scan-bin-tree-"));
  // 12 files of 3 MB: over PARALLEL_MIN_BYTES, so that the scan runs in parallel.
  const filler = "const value = compute(1, 2, 3); // ordinary source code line\n".repeat(48_000);
  const key = "ghp_R7tQ2mX9vL4kP8sW1nB6cY3hJ5dF0gA2eZ7u";
  mkdirSync(join(dir, "src"));
  for (let i = 0; i < 12; i++) writeFileSync(join(dir, "src", `f${i}.ts`), `${filler}const t = "${key}";\n`);
  const r = await run([binary, "scan", "--format", "json", "--jobs", "2", "src"], {
    cwd: dir,
    env: { ...process.env, SLUICE_HOME: join(dir, ".home") },
  });
  expect(r.stderr).toBe("");
  const j = JSON.parse(r.stdout);
  expect(r.code).toBe(1);
  expect(j.summary.workers).toBe(2);
  expect(j.summary.files_scanned).toBe(12);
  expect(j.findings.filter((f: { rule: string }) => f.rule === "github_pat").length).toBe(12);
  expect(j.findings[0].line).toBe(48_001);
  expect(r.stdout).not.toContain(key);
});

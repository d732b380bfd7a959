import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig } from "../../src/config/schema.ts";
import type { RuleDef } from "../../src/core/types.ts";
import { planRanges } from "../../src/scan/file.ts";
import { scanFiles } from "../../src/scan/pool.ts";
import type { ScanSetup } from "../../src/scan/setup.ts";
import { walk } from "../../src/scan/walk.ts";
import { ScanWorker } from "../../src/scan/workers.ts";
import { tempDir } from "./_git.ts";

// Subprocesses and git on a loaded machine: give each test room.
setDefaultTimeout(30_000);

const rule = (name: string, pattern: string): RuleDef => ({
  name,
  pattern,
  detector: "custom",
  severity: "high",
  action: "block",
  enabled: true,
  tier: "custom",
  source: "import",
  description: "",
  tags: [],
});
const SETUP: ScanSetup = {
  config: defaultConfig(),
  rules: [
    rule("t-key", "KEYX-[0-9]{8}"),
    rule("t-block", "-----BEGIN TEST-----[\\s\\S]{1,400}?-----END TEST-----"),
  ],
};

function bigFile(dir: string, name: string, lines: number): void {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    if (i % 997 === 0) out.push(`é😀 token KEYX-${String(i).padStart(8, "0")} end`);
    else if (i % 1499 === 0) out.push("-----BEGIN TEST-----", "abc".repeat(20), "-----END TEST-----");
    else out.push(`line ${i} with some ordinary text to fill the file up`);
  }
  writeFileSync(join(dir, name), `${out.join("\n")}\n`);
}

describe("scanFiles", () => {
  test("a large file split into ranges gives the same findings, lines and columns as one pass", async () => {
    using t = tempDir();
    bigFile(t.dir, "big.txt", 120_000);
    bigFile(t.dir, "small.txt", 3_000);
    const files = walk(["."], { cwd: t.dir }).files;
    const ranges = await planRanges(files.find((f) => f.display === "big.txt")!, 700_000);
    expect(ranges.length).toBeGreaterThan(4);
    const stats = { workers: 0 };
    const split = await scanFiles(
      files,
      SETUP,
      { jobs: 2, forceWorkers: true, splitMinBytes: 1_000_000 },
      stats,
    );
    const whole = await scanFiles(files, SETUP, { jobs: 1 });
    expect(stats.workers).toBe(2);
    const key = (r: typeof split) =>
      r.map((f) => [
        f.file,
        f.bytes,
        f.findings.map((x) => `${x.rule}@${x.line}:${x.column}-${x.end_line}:${x.end_column}`),
      ]);
    expect(key(split)).toEqual(key(whole));
    const big = whole.find((f) => f.file === "big.txt")!;
    expect(big.findings.filter((f) => f.rule === "t-key").length).toBe(Math.ceil(120_000 / 997));
    expect(big.findings.some((f) => f.rule === "t-block")).toBe(true);
  }, 30_000);

  test("workers that cannot start or that die mid-scan hand their work back; results stay in input order", async () => {
    using t = tempDir();
    for (let i = 0; i < 6; i++) bigFile(t.dir, `f${i}.txt`, 6_000 + i * 1000);
    // A worker that starts, says it is ready, then dies on its first batch.
    const dying = join(t.dir, "dying-worker.ts");
    writeFileSync(
      dying,
      `self.onmessage = (e) => { if (e.data.type === "init") postMessage({ type: "ready" }); else throw new Error("boom"); };\npostMessage({ type: "loaded" });\n`,
    );
    const files = walk(["."], { cwd: t.dir }).files.filter((f) => f.display.endsWith(".txt"));
    const whole = await scanFiles(files, SETUP, { jobs: 1 });
    for (const specs of [[join(t.dir, "missing-worker.ts")], [dying]]) {
      const stats = { workers: 0 };
      const got = await scanFiles(
        files,
        SETUP,
        { jobs: 2, forceWorkers: true, workers: [new ScanWorker(specs)] },
        stats,
      );
      expect(got).toEqual(whole);
      expect(stats.workers).toBe(1);
    }
    expect(whole.map((f) => f.file)).toEqual(files.map((f) => f.display));
    expect(whole.every((f) => f.findings.length > 0)).toBe(true);
  });

  test("workers started early are used, and terminated when the job turns out small", async () => {
    using t = tempDir();
    bigFile(t.dir, "a.txt", 30_000);
    bigFile(t.dir, "b.txt", 30_000);
    const files = walk(["."], { cwd: t.dir }).files;
    const stats = { workers: 0 };
    await scanFiles(files, SETUP, { jobs: 2, forceWorkers: true, workers: [new ScanWorker()] }, stats);
    expect(stats.workers).toBe(2);
    const small = { workers: 0 };
    const one = await scanFiles(files.slice(0, 1), SETUP, { jobs: 2, workers: [new ScanWorker()] }, small);
    expect(small.workers).toBe(0);
    expect(one[0]!.findings.length).toBeGreaterThan(0);
  });

  test("ranges start at line starts and cover the file exactly", async () => {
    using t = tempDir();
    bigFile(t.dir, "f.txt", 20_000);
    const f = walk(["f.txt"], { cwd: t.dir }).files[0]!;
    const ranges = await planRanges(f, 100_000);
    const bytes = await Bun.file(join(t.dir, "f.txt")).bytes();
    expect(ranges[0]!.start).toBe(0);
    expect(ranges[ranges.length - 1]!.end).toBe(f.size);
    for (let i = 1; i < ranges.length; i++) {
      expect(ranges[i]!.start).toBe(ranges[i - 1]!.end);
      expect(bytes[ranges[i]!.start - 1]).toBe(10);
    }
  });
});

/**
 * The README's examples are real output: the `sluice scan --format json` example is what the scan of
 * the file it describes prints (all but the duration), and the two commands that open the README are
 * the ones CI runs.
 */
import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runSluice } from "../helpers/sluice.ts";

const README = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");

test("the JSON output example is the real output of the scan it describes", async () => {
  const block = README.match(/### JSON output[\s\S]*?```json\n([\s\S]*?)```/)![1]!;
  const example = JSON.parse(block);
  const dir = mkdtempSync(join(tmpdir(), "sluice-readme-"));
  mkdirSync(join(dir, "src"));
  const lines = ["// config", ...Array.from({ length: 10 }, (_, i) => `// line ${i + 2}`)];
  lines.push(`const key = "${["AKIA", "Z7QKXW3NPL5TYR2V"].join("")}";`);
  writeFileSync(join(dir, "src/config.ts"), `${lines.join("\n")}\n`);
  const r = await runSluice(["scan", "src", "--format", "json"], { cwd: dir });
  expect(r.code).toBe(1);
  const real = JSON.parse(r.stdout);
  real.summary.duration_ms = example.summary.duration_ms;
  expect(real).toEqual(example);
});

test("the README opens with the two commands: start sluice, run the tests", () => {
  const first = README.match(/```sh\n([\s\S]*?)```/)![1]!
    .trim()
    .split("\n");
  expect(first).toEqual([
    "npm install -g bun@1.4.4 && bun install --frozen-lockfile && bun src/cli.ts serve",
    "npm install -g bun@1.4.4 && bun install --frozen-lockfile && bun run test",
  ]);
});

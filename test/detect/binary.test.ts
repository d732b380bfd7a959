/**
 * The community rules travel inside a compiled binary: an entry that prints the rule count and a
 * scan result is built with `bun build --compile` and run from another directory.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../../src");

test("a compiled binary carries rules/*.yaml", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-rules-bin-"));
  const entry = join(dir, "entry.ts");
  writeFileSync(
    entry,
    [
      `import { loadBuiltinRules } from ${JSON.stringify(join(SRC, "detect/builtin.ts"))};`,
      `import { compileRules } from ${JSON.stringify(join(SRC, "detect/compile.ts"))};`,
      `import { scanText } from ${JSON.stringify(join(SRC, "detect/matcher.ts"))};`,
      "const rules = loadBuiltinRules();",
      `const found = scanText(compileRules(rules), "key " + ["AKIA", "IOSFODNN7EXAMPLQ"].join(""), { encoding: null });`,
      "console.log(JSON.stringify({ rules: rules.length, found: found.map((m) => m.rule.name) }));",
    ].join("\n"),
  );
  const out = join(dir, "rules-bin");
  const build = Bun.spawnSync([process.execPath, "build", "--compile", entry, "--outfile", out], {
    stderr: "pipe",
  });
  expect(build.exitCode).toBe(0);
  const run = Bun.spawnSync([out], { cwd: tmpdir(), stdout: "pipe", stderr: "pipe" });
  expect(run.exitCode).toBe(0);
  const result = JSON.parse(run.stdout.toString()) as { rules: number; found: string[] };
  expect(result.rules).toBeGreaterThanOrEqual(43);
  expect(result.found).toEqual(["aws_access_key_id"]);
}, 60_000);

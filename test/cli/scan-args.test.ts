/**
 * `sluice scan` parses its common command lines without citty (parseScanArgs): on every command line
 * it accepts, the flags `scan` reads must be exactly what citty would have given it, and on the
 * ones it does not accept it must give up (citty parses those).
 */
import { describe, expect, test } from "bun:test";
import { parseArgs } from "citty";
import scan, { parseScanArgs, type ScanArgs } from "../../src/cli/scan.ts";
import { lcg } from "../corpus/gen.ts";

const KEYS: (keyof ScanArgs)[] = [
  "_",
  "diff",
  "baseline",
  "create-baseline",
  "format",
  "output",
  "config",
  "rules",
  "default-rules",
  "color",
  "jobs",
];

function viaCitty(raw: string[]): Record<string, unknown> {
  const args = parseArgs(raw, scan.args as Parameters<typeof parseArgs>[1]) as Record<string, unknown>;
  return Object.fromEntries(KEYS.map((k) => [k, args[k]]));
}

function viaFast(raw: string[]): Record<string, unknown> | null {
  const args = parseScanArgs(raw);
  return args && Object.fromEntries(KEYS.map((k) => [k, args[k]]));
}

describe("parseScanArgs", () => {
  test("reads what citty reads on the usual command lines", () => {
    const lines = [
      [],
      ["."],
      ["-"],
      ["a.ts", "b.ts", "-"],
      ["--format", "json", "a.ts", "b.ts"],
      ["--format=json", "src"],
      ["-f", "sarif", "-o", "out.sarif", "src"],
      ["--output=r.json", "--format", "json", "."],
      ["--no-color", "."],
      ["--color", "--no-color", "."],
      ["--no-color", "--color", "."],
      ["--no-default-rules", "--rules", "a.yaml", "--rules", "b.yaml", "x"],
      ["--rules=a.yaml", "x"],
      ["--default-rules", "x"],
      ["--baseline", "b.json", "--create-baseline", "c.json", "."],
      ["--config", "c.yaml", "-c", "d.yaml", "."],
      ["--jobs", "3", "."],
      ["-j", "1", "."],
      ["--jobs=abc", "."],
      ["--diff", "main..HEAD"],
      ["--diff", "src/", "--format", "json"],
      ["--diff=HEAD~1"],
      ["--format="],
      ["--format", "json", "--format", "text", "."],
    ];
    for (const raw of lines) {
      const fast = viaFast(raw);
      expect(fast, JSON.stringify(raw)).not.toBeNull();
      expect(fast, JSON.stringify(raw)).toEqual(viaCitty(raw));
    }
  });

  test("leaves the other command lines to citty", () => {
    const lines = [
      ["--help"],
      ["-h", "."],
      ["--", "a"],
      ["--diff"],
      ["--diff", "--format", "json"],
      ["--format"],
      ["-o", "-", "."],
      ["-fjson", "."],
      ["--createBaseline", "x.json"],
      ["--color=false", "."],
      ["--unknown", "."],
      ["-v"],
    ];
    for (const raw of lines) expect(parseScanArgs(raw), JSON.stringify(raw)).toBeNull();
  });

  test("random command lines: accepted ones read as citty reads them", () => {
    const tokens = [
      "a.ts",
      "-",
      "--format",
      "json",
      "-f",
      "--format=sarif",
      "--no-color",
      "--color",
      "--default-rules",
      "--no-default-rules",
      "--rules",
      "r.yaml",
      "--diff",
      "HEAD",
      "-o",
      "--output=o.json",
      "--jobs",
      "2",
      "-j",
      "--baseline",
      "--create-baseline",
      "-c",
      "--config=c.yaml",
      "--",
      "-x",
    ];
    const rnd = lcg(7);
    let accepted = 0;
    for (let k = 0; k < 3000; k++) {
      const raw = Array.from({ length: rnd(7) }, () => tokens[rnd(tokens.length)]!);
      const fast = viaFast(raw);
      if (fast === null) continue;
      accepted++;
      expect(fast, JSON.stringify(raw)).toEqual(viaCitty(raw));
    }
    expect(accepted).toBeGreaterThan(300);
  });
});

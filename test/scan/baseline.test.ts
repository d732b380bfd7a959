import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  applyBaseline,
  BaselineError,
  createBaseline,
  loadBaseline,
  writeBaseline,
} from "../../src/scan/baseline.ts";
import { WindowScanner } from "../../src/scan/window.ts";
import { tempDir } from "./_git.ts";
import { AWS, regexScanner } from "./_scanner.ts";

const KEY = "AKIAIOSFODNN7EXAMPLQ";
const KEY2 = "AKIAJ7QWERTYUIOPASDF";

function scan(file: string, text: string) {
  const w = new WindowScanner(regexScanner([AWS]), file);
  w.push(text);
  return w.finish();
}

describe("baseline", () => {
  test("round trip: known findings are suppressed, even after moving lines; new ones are kept", () => {
    using t = tempDir();
    const path = join(t.dir, "baseline.json");
    writeBaseline(path, createBaseline(scan("a.txt", `x\n${KEY}\n`)));
    const raw = readFileSync(path, "utf8");
    expect(raw).not.toContain(KEY);
    const b = loadBaseline(path);
    expect(b.entries).toHaveLength(1);
    expect(b.entries[0]).toMatchObject({ rule: "aws", file: "a.txt", preview: "AKIA****MPLQ", line: 2 });
    // the stored hash is not the plain sha256 of the value
    const { createHash } = require("node:crypto");
    expect(raw).not.toContain(createHash("sha256").update(KEY).digest("hex"));

    const moved = scan("a.txt", `new line\nanother\n\n  ${KEY} moved\n${KEY2}\n`);
    const res = applyBaseline(moved, b);
    expect(res.suppressed).toBe(1);
    expect(res.kept.map((f) => [f.line, f.preview])).toEqual([[5, "AKIA****ASDF"]]);
  });

  test("the same value in another file is not suppressed", () => {
    const b = createBaseline(scan("a.txt", KEY));
    expect(applyBaseline(scan("b.txt", KEY), b).kept).toHaveLength(1);
  });

  test("two baselines of the same findings use different salts", () => {
    const f = scan("a.txt", KEY);
    expect(createBaseline(f).entries[0]!.hash).not.toBe(createBaseline(f).entries[0]!.hash);
  });

  test("a malformed baseline is a clear error", () => {
    using t = tempDir();
    const path = join(t.dir, "b.json");
    require("node:fs").writeFileSync(path, '{"entries": []}');
    expect(() => loadBaseline(path)).toThrow(BaselineError);
    expect(() => loadBaseline(join(t.dir, "missing.json"))).toThrow(/cannot read baseline/);
  });

  test("a file that is not JSON (a .env given by mistake) is an error that does not quote it", () => {
    using t = tempDir();
    const path = join(t.dir, ".env");
    require("node:fs").writeFileSync(path, `${KEY}=1\n`);
    expect(() => loadBaseline(path)).toThrow(/not valid JSON/);
    let message = "";
    try {
      loadBaseline(path);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).not.toContain(KEY);
  });
});

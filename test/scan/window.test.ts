import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { scanStream } from "../../src/scan/file.ts";
import { WindowScanner } from "../../src/scan/window.ts";
import { run } from "../helpers/run.ts";
import { AWS, regexScanner } from "./_scanner.ts";

const KEY = "AKIAIOSFODNN7EXAMPLQ";
const PEM = /-----BEGIN KEY-----[\s\S]*?-----END KEY-----/;

/** Deterministic pseudo-random text with keys planted at known places. */
function corpus(seed: number, size: number): { text: string; keys: number[] } {
  let x = seed;
  const rnd = () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x / 0x7fffffff;
  };
  const words = ["const", "let", "x", "=", "foo(bar)", "// note", "é", "😀", "\n", "\n", "\t", "AKIA"];
  let text = "";
  const keys: number[] = [];
  while (text.length < size) {
    if (rnd() < 0.02) {
      text += " ";
      keys.push(text.length);
      text += `${KEY} `;
    } else text += `${words[Math.floor(rnd() * words.length)]} `;
  }
  return { text, keys };
}

function scanWhole(text: string, rules = [AWS]) {
  const w = new WindowScanner(regexScanner(rules), "f", 1 << 30, 0);
  w.push(text);
  return w.finish();
}

function stream(text: string, pieces: number[]): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let off = 0;
  let k = 0;
  return new ReadableStream({
    pull(c) {
      if (off >= bytes.length) return c.close();
      const n = pieces[k++ % pieces.length]!;
      c.enqueue(bytes.subarray(off, off + n));
      off += n;
    },
  });
}

describe("WindowScanner", () => {
  test("line and column are 1-based, in UTF-16 units, end exclusive", () => {
    const text = `first\nsecond é ${KEY}\n\nx${KEY}`;
    const f = scanWhole(text);
    expect(f.map((x) => [x.line, x.column, x.end_line, x.end_column])).toEqual([
      [2, 10, 2, 30],
      [4, 2, 4, 22],
    ]);
    expect(f[0]!.preview).toBe("AKIA****MPLQ");
  });

  test("a multi-line match reports its end line", () => {
    const rules = [{ name: "pem", pattern: PEM }];
    const f = scanWhole("a\n-----BEGIN KEY-----\nabc\n-----END KEY-----\n", rules);
    expect(f.map((x) => [x.line, x.column, x.end_line, x.end_column])).toEqual([[2, 1, 4, 18]]);
  });

  test("any chunking finds every match exactly once at the same place", () => {
    const { text, keys } = corpus(7, 60_000);
    const whole = scanWhole(text);
    expect(whole.length).toBe(keys.length);
    for (const [chunk, overlap] of [
      [1000, 64],
      [97, 40],
      [4096, 1024],
      [50, 20],
    ] as const) {
      const w = new WindowScanner(regexScanner([AWS]), "f", chunk, overlap);
      // Feed in odd piece sizes so boundaries fall inside keys.
      for (let i = 0; i < text.length; i += 333) w.push(text.slice(i, i + 333));
      const got = w.finish();
      expect(got.map((x) => [x.line, x.column])).toEqual(whole.map((x) => [x.line, x.column]));
    }
  });

  test("a key that straddles a window boundary is found once", () => {
    const text = `${"x".repeat(995)}${KEY}${"y".repeat(1000)}`;
    const w = new WindowScanner(regexScanner([AWS]), "f", 1000, 64);
    w.push(text);
    expect(w.finish().map((x) => x.column)).toEqual([996]);
  });

  test("a match longer than the window keeps its start window's context", () => {
    // With leading context a later window does not report the tail of an earlier match.
    const rules = [{ name: "long", pattern: /\bQ{30,}\b/ }];
    const text = `${"a ".repeat(490)}${"Q".repeat(60)} end`;
    const w = new WindowScanner(regexScanner(rules), "f", 1000, 64);
    w.push(text);
    expect(w.finish().length).toBe(1);
  });

  test("empty input has no findings", () => {
    const w = new WindowScanner(regexScanner([AWS]), "f");
    expect(w.finish()).toEqual([]);
  });
});

describe("scanStream", () => {
  test("multi-byte characters split across byte chunks decode correctly", async () => {
    const { text } = corpus(3, 20_000);
    const want = scanWhole(text);
    const res = await scanStream(stream(text, [1, 7, 13, 4096]), "s", regexScanner([AWS]), {
      chunk: 2000,
      overlap: 100,
    });
    expect(res.skipped).toBeNull();
    expect(res.bytes).toBe(new TextEncoder().encode(text).length);
    expect(res.findings.map((x) => [x.line, x.column])).toEqual(want.map((x) => [x.line, x.column]));
  });

  test("a NUL byte in the first 8000 bytes marks the input binary", async () => {
    const res = await scanStream(stream(`abc\0${KEY}`, [100]), "bin", regexScanner([AWS]));
    expect(res.skipped).toBe("binary");
    expect(res.findings).toEqual([]);
  });

  test("256 MB stream is scanned in bounded memory", async () => {
    // In a fresh process: inside the shared test process the heap left by earlier test files changes
    // when the collector runs, and sampling RSS every few ms can miss the peak. The child reports its
    // exact peak (VmHWM; getrusage's maxRSS would include the test runner's RSS, inherited by exec).
    const {
      stdout: out,
      stderr: err,
      code,
    } = await run([process.execPath, join(import.meta.dir, "_big-stream.ts")]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    const r = JSON.parse(out) as {
      blocks: number;
      findings: number;
      secondLine: number;
      before: number;
      peak: number;
      heapGrowth: number;
    };
    expect(r.findings).toBe(r.blocks);
    expect(r.secondLine).toBe(2 * 20_001);
    // The whole stream is 256 MB; the scanner holds a 4 MiB window (twice that as UTF-16) and the
    // garbage of the windows it has finished.
    expect(r.peak - r.before).toBeLessThan(160 * 1024 * 1024);
    // Nothing of the scanned text stays reachable: the findings hold copies, not slices of windows.
    expect(r.heapGrowth).toBeLessThan(16 * 1024 * 1024);
  }, 30_000);
});

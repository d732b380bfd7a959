import { describe, expect, test } from "bun:test";
import { isBinary } from "../../src/scan/file.ts";

describe("isBinary (git's heuristic)", () => {
  test("a NUL byte in the first 8000 bytes, and only there", () => {
    const at = (size: number, nul: number) => {
      const b = new Uint8Array(size).fill(97);
      if (nul >= 0) b[nul] = 0;
      return isBinary(b);
    };
    expect(isBinary(new Uint8Array(0))).toBe(false);
    expect(at(10, -1)).toBe(false);
    expect(at(10, 0)).toBe(true);
    expect(at(10, 9)).toBe(true);
    expect(at(20_000, 7999)).toBe(true);
    expect(at(20_000, 8000)).toBe(false);
    expect(at(8000, 7999)).toBe(true);
  });
});

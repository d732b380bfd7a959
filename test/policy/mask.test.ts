import { describe, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import {
  contentHash,
  copyString,
  credentialHash,
  keyDigest,
  maskValue,
  valueHash,
} from "../../src/policy/mask.ts";
import { fingerprintOf } from "../../src/scan/window.ts";
import { lcg } from "../corpus/gen.ts";

const KEY = new Uint8Array(32).map((_, i) => i);

// Stored findings, dedup keys and baselines hold these digests: they must never change.
describe("hashes of a value", () => {
  test("content_hash, value_hash, api_key_hash and fingerprint are pinned", () => {
    expect(contentHash("AKIAIOSFODNN7EXAMPLE", KEY)).toBe(
      "4e223fb4d205a94471a8a4b7b5ae3775fa74c74e2dfec000a231039e1b4a3f0c",
    );
    expect(valueHash("AKIAIOSFODNN7EXAMPLE", KEY)).toBe(
      "65fbd4cdc580ad37d8c08c29a7f40e607851410c53e0dadbc0a09a3979435a2f",
    );
    expect(credentialHash("sk-ant-api03-test", KEY)).toBe("ebfc4053f4e45ccc");
    expect(fingerprintOf("aws-access-key", "src/a.ts", maskValue("AKIAIOSFODNN7EXAMPLE"))).toBe(
      "73256aa1454215a377db4c4eadd112ee",
    );
    // Without a key (`sluice scan`, nothing stored): the plain digest, a lone surrogate as U+FFFD.
    expect(contentHash("AKIAIOSFODNN7EXAMPLE", null)).toBe(
      "1a5d44a2dca19669d72edf4c4f1c27c4c1ca4b4408fbb17f6ce4ad452d78ddb3",
    );
    expect(contentHash("x\ud800y", null)).toBe(
      "0b37743370331e33808c0dd0167563798a3c324504cf0055d2b0ac81578d2c58",
    );
  });

  test("the same bytes as node:crypto for any string; keyed = HMAC over the plain digest", () => {
    const values = ["", "a", "é€😀", "a\0b", "\ud83d", "x\udc00y", "😀\ud800", "x".repeat(100_000)];
    for (const v of values) {
      const plain = createHash("sha256").update(v).digest("hex");
      expect(contentHash(v, null)).toBe(plain);
      expect(contentHash(v, KEY)).toBe(createHmac("sha256", KEY).update(plain).digest("hex"));
      expect(keyDigest(plain, KEY)).toBe(contentHash(v, KEY));
      expect(valueHash(v, KEY)).toBe(createHmac("sha256", KEY).update(v).digest("hex"));
      expect(credentialHash(v, KEY)).toBe(
        createHmac("sha256", KEY).update(plain.slice(0, 16)).digest("hex").slice(0, 16),
      );
    }
  });
});

/** maskValue as first written (an array of codes), the reference for the quicker one. */
function maskReference(value: string): string {
  // Whitespace (JavaScript's \s, the set maskValue spells out by code) is shown as a star.
  const kept = (c: number) => (/\s/.test(String.fromCharCode(c)) ? 42 : c);
  const n = value.length;
  const keep = n >= 12 ? 4 : n >= 8 ? 2 : n >= 4 ? 1 : 0;
  const codes: number[] = [];
  if (keep === 0) {
    for (let k = Math.min(32, Math.max(1, n)); k > 0; k--) codes.push(42);
  } else if (n < 8) {
    codes.push(kept(value.charCodeAt(0)));
    for (let k = 1; k < n; k++) codes.push(42);
  } else {
    for (let k = 0; k < keep; k++) codes.push(kept(value.charCodeAt(k)));
    for (let k = Math.min(32, Math.max(1, n - 2 * keep)); k > 0; k--) codes.push(42);
    for (let k = n - keep; k < n; k++) codes.push(kept(value.charCodeAt(k)));
  }
  return String.fromCharCode(...codes);
}

describe("maskValue and copyString", () => {
  test("maskValue: every length and kind of character as the reference", () => {
    const chars = [
      "a",
      "Z",
      "7",
      " ",
      "\t",
      "\n",
      "\u00a0",
      "\u2003",
      "\u3000",
      "é",
      "😀",
      "\ud800",
      "\udc00",
      "*",
    ];
    const rnd = lcg(11);
    for (let n = 0; n < 60; n++) {
      for (let k = 0; k < 20; k++) {
        const v = Array.from({ length: n }, () => chars[rnd(chars.length)]).join("");
        expect(maskValue(v)).toBe(maskReference(v));
      }
    }
    expect(maskValue("x".repeat(100_000))).toBe(maskReference("x".repeat(100_000)));
  });

  test("copyString: the same characters, lone surrogates and controls included", () => {
    const values = [
      "",
      "a",
      'q"uote\\',
      "\u0000\u001f\u007f",
      "x\ud800y",
      "\udc00",
      "😀é",
      "</script>",
      "z".repeat(70_000),
    ];
    for (const v of values) expect(copyString(v)).toBe(v);
  });

  /**
   * Growth of RSS while 64 texts of 1-2 MB each are made and `derive` keeps strings made from slices
   * of them: 64-128 MB if what it keeps holds on to the texts.
   */
  function keptGrowth(derive: (big: string) => string[]): number {
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    const kept: string[] = [];
    for (let i = 0; i < 64; i++)
      kept.push(...derive(`${String.fromCharCode(65 + (i % 26)).repeat(1 << 20)}${i}é`));
    Bun.gc(true);
    expect(kept.length).toBeGreaterThan(64);
    return process.memoryUsage().rss - before;
  }

  test("copyString: a copy of a slice does not keep the text it was cut from", () => {
    expect(
      keptGrowth((big) => [copyString(`${big.slice(100, 140)}…`), copyString(big.slice(200, 260))]),
    ).toBeLessThan(40 * 1024 * 1024);
  });

  test("maskValue of a slice does not keep the text it was cut from (the scan reports previews as they are)", () => {
    expect(
      keptGrowth((big) => [3, 6, 10, 40].map((len) => maskValue(big.slice(100, 100 + len)))),
    ).toBeLessThan(40 * 1024 * 1024);
  });
});

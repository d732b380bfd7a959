import { describe, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { contentHash, maskValue, valueHash } from "../../src/policy/mask.ts";
import { fingerprintOf } from "../../src/scan/window.ts";

const KEY = new Uint8Array(32).map((_, i) => i);

// Stored findings, dedup keys and baselines hold these digests: they must never change.
describe("hashes of a value", () => {
  test("content_hash, value_hash and fingerprint are pinned", () => {
    expect(contentHash("AKIAIOSFODNN7EXAMPLE")).toBe(
      "1a5d44a2dca19669d72edf4c4f1c27c4c1ca4b4408fbb17f6ce4ad452d78ddb3",
    );
    expect(valueHash("AKIAIOSFODNN7EXAMPLE", KEY)).toBe(
      "65fbd4cdc580ad37d8c08c29a7f40e607851410c53e0dadbc0a09a3979435a2f",
    );
    expect(fingerprintOf("aws-access-key", "src/a.ts", maskValue("AKIAIOSFODNN7EXAMPLE"))).toBe(
      "73256aa1454215a377db4c4eadd112ee",
    );
    // A lone surrogate is hashed as U+FFFD, as node:crypto does.
    expect(contentHash("x\ud800y")).toBe("0b37743370331e33808c0dd0167563798a3c324504cf0055d2b0ac81578d2c58");
  });

  test("the same bytes as node:crypto for any string", () => {
    const values = ["", "a", "é€😀", "a\0b", "\ud83d", "x\udc00y", "😀\ud800", "x".repeat(100_000)];
    for (const v of values) {
      expect(contentHash(v)).toBe(createHash("sha256").update(v).digest("hex"));
      expect(valueHash(v, KEY)).toBe(createHmac("sha256", KEY).update(v).digest("hex"));
    }
  });
});

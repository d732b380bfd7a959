/** The installation key behind value_hash: 32 random bytes, file 0600 in a 0700 directory, stable. */
import { expect, test } from "bun:test";
import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HMAC_KEY_FILE, loadOrCreateHmacKey } from "../../src/policy/hmac-key.ts";

test("created once with 0600 in a 0700 directory, then read back unchanged", () => {
  const dir = join(mkdtempSync(join(tmpdir(), "sluice-hmac-")), "home");
  const a = loadOrCreateHmacKey(dir);
  expect(a.length).toBe(32);
  expect(statSync(join(dir, HMAC_KEY_FILE)).mode & 0o777).toBe(0o600);
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  const b = loadOrCreateHmacKey(dir);
  expect(Buffer.from(b).equals(Buffer.from(a))).toBe(true);
  expect(a.some((x) => x !== 0)).toBe(true);
});

test("a key file of the wrong size is replaced", () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-hmac-"));
  writeFileSync(join(dir, HMAC_KEY_FILE), "short", { mode: 0o644 });
  const key = loadOrCreateHmacKey(dir);
  expect(key.length).toBe(32);
  expect(statSync(join(dir, HMAC_KEY_FILE)).mode & 0o777).toBe(0o600);
});

import { expect, test } from "bun:test";
import { backoffDelay } from "../../src/agent/backoff.ts";

test("the wait doubles with each failure in a row and stops at the maximum", () => {
  const o = { initialMs: 1000, maxMs: 60_000 };
  expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, o))).toEqual([
    1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000,
  ]);
  expect(backoffDelay(10_000, o)).toBe(60_000);
  expect(backoffDelay(0, o)).toBe(1000);
});

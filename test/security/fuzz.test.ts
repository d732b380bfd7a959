/**
 * A short run of the request-path fuzzer (test/fuzz/request-path.ts; `bun run fuzz` runs it for
 * longer): random bytes, JSON, depths, paths and lying headers through the real proxy. No 5xx, no
 * planted token at the upstream, sluice healthy after.
 */
import { expect, test } from "bun:test";
import { fuzzRequestPath } from "../fuzz/request-path.ts";

test("three seconds of random requests: no fault, no token reaches the upstream", async () => {
  const r = await fuzzRequestPath(3, 7);
  expect(r.requests).toBeGreaterThan(50);
  expect(r.blocked).toBeGreaterThan(0);
  expect(r.faults).toEqual([]);
  expect(r.leaks).toEqual([]);
  expect(r.healthy).toBe(true);
}, 30_000);

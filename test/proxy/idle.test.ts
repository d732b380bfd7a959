/**
 * The proxy's idle work (a garbage collection between turns): it runs once after a scan when the
 * proxy goes quiet, never while a request is in flight, and not again until something new is scanned.
 */
import { expect, test } from "bun:test";
import { IdleWork } from "../../src/proxy/idle.ts";

function rig() {
  let busy = false;
  const runs: { busy: boolean; at: number }[] = [];
  let wake: () => void = () => {};
  const idle = new IdleWork(
    () => busy,
    () => {
      runs.push({ busy, at: performance.now() });
      wake();
    },
    2,
  );
  const ran = () => new Promise<void>((r) => (wake = r));
  return { idle, runs, ran, setBusy: (b: boolean) => void (busy = b) };
}

test("after a scan, the work runs once the proxy is quiet, and only once", async () => {
  const r = rig();
  const first = r.ran();
  r.idle.scanned();
  await first;
  expect(r.runs.length).toBe(1);
  // Nothing new scanned: a settled request does not run it again.
  r.idle.settled();
  const again = r.ran();
  r.idle.scanned();
  await again;
  expect(r.runs.length).toBe(2);
  r.idle.stop();
});

test("never while a request is in flight: it waits for the request to settle", async () => {
  const r = rig();
  r.setBusy(true);
  r.idle.scanned();
  let settledAt = 0;
  const ran = r.ran();
  // The timer fires while busy and does nothing; the request settles later and re-arms it.
  setTimeout(() => {
    r.setBusy(false);
    settledAt = performance.now();
    r.idle.settled();
  }, 20);
  await ran;
  expect(r.runs).toHaveLength(1);
  expect(r.runs[0]!.busy).toBe(false);
  expect(r.runs[0]!.at).toBeGreaterThanOrEqual(settledAt);
  r.idle.stop();
});

test("WebSocket traffic defers it until the relay is quiet", async () => {
  const r = rig();
  r.idle.scanned();
  const ran = r.ran();
  let lastActivity = 0;
  const tick = setInterval(() => {
    r.idle.activity();
    lastActivity = performance.now();
  }, 1);
  setTimeout(() => clearInterval(tick), 15);
  await ran;
  expect(r.runs[0]!.at - lastActivity).toBeGreaterThanOrEqual(1.5);
  r.idle.stop();
});

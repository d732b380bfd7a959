import type { Scheduler } from "../../src/notify/delivery.ts";

/** Sends in flight; the manual scheduler lets them settle before it moves time on. */
export const inflight = new Set<Promise<unknown>>();

/**
 * A scheduler advanced by hand: no sleeping, timers fire in order when time is moved, each only
 * after every real request in flight has been answered (a hanging one is raced against nothing, so
 * it is skipped: its timeout timer is what ends it).
 */
export function manualScheduler() {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  const s: Scheduler & { advance(ms: number): Promise<void>; delays: number[] } = {
    delays: [],
    now: () => now,
    after(ms, fn) {
      s.delays.push(ms);
      timers.push({ at: now + ms, fn });
    },
    async advance(ms) {
      const end = now + ms;
      for (;;) {
        await new Promise((r) => setImmediate(r));
        await Promise.all([...inflight]);
        timers.sort((a, b) => a.at - b.at);
        const next = timers[0];
        if (!next || next.at > end) break;
        timers.shift();
        now = next.at;
        next.fn();
      }
      now = end;
      await new Promise((r) => setImmediate(r));
    },
  };
  return s;
}

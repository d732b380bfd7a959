import { afterAll, describe, expect, test } from "bun:test";
import { backoffDelay, deliveryQueue } from "../../src/notify/delivery.ts";
import { inflight, manualScheduler } from "./scheduler.ts";

const failing = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response("boom", { status: 500 }),
});
const hanging = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
afterAll(() => {
  failing.stop(true);
  hanging.stop(true);
});

const post =
  (url: string, awaited = true) =>
  (signal: AbortSignal) => {
    const p = (async () => {
      const res = await fetch(url, { method: "POST", body: "{}", signal });
      const text = await res.text();
      if (!res.ok) throw new Error(`receiver answered ${res.status}: ${text.slice(0, 200)}`);
      return text;
    })();
    if (awaited) {
      const settled = p.catch(() => {});
      inflight.add(settled);
      settled.then(() => inflight.delete(settled));
    }
    return p;
  };

describe("delivery queue", () => {
  test("backoff doubles up to the cap, with full jitter", () => {
    const o = { baseDelayMs: 1000, maxDelayMs: 8000, random: () => 0.999999 };
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(n, o))).toEqual([999, 1999, 3999, 7999, 7999]);
    expect(backoffDelay(3, { ...o, random: () => 0 })).toBe(0);
  });

  test("enqueue returns at once; a 500 receiver is retried on the backoff, then dropped, status says why", async () => {
    const s = manualScheduler();
    const q = deliveryQueue({ attempts: 3, baseDelayMs: 1000, timeoutMs: 5000, random: () => 0.5 }, s);
    q.enqueue(post(failing.url.href));
    expect(q.status().pending).toBe(1);
    await s.advance(60_000);
    const st = q.status();
    expect(st).toMatchObject({ pending: 0, sent: 0, dropped: 1 });
    expect(st.last_error).toBe("attempt 3/3: receiver answered 500: boom");
    // timeouts (5000) interleave with the retry delays: 50% of 1000, then 50% of 2000
    expect(s.delays.filter((d) => d !== 5000)).toEqual([500, 1000]);
  });

  test("a hanging receiver times out on each attempt", async () => {
    const s = manualScheduler();
    const q = deliveryQueue({ attempts: 2, baseDelayMs: 100, timeoutMs: 2000, random: () => 0 }, s);
    q.enqueue(post(hanging.url.href, false));
    await s.advance(10_000);
    expect(q.status()).toMatchObject({
      pending: 0,
      dropped: 1,
      last_error: "attempt 2/2: timed out after 2000 ms",
    });
  });

  test("success records last_success; a full queue drops and says so", async () => {
    const s = manualScheduler();
    const q = deliveryQueue({ maxPending: 1 }, s);
    q.enqueue(async () => "ok");
    q.enqueue(async () => "ok");
    await s.advance(1);
    await q.idle();
    const st = q.status();
    expect(st).toMatchObject({ sent: 1, dropped: 1, pending: 0 });
    expect(st.last_success).toBe(new Date(0).toISOString());
    expect(st.last_error).toContain("queue full");
  });
  test("at most `concurrency` messages are in flight; the rest wait in order; each failed attempt is reported", async () => {
    const s = manualScheduler();
    const q = deliveryQueue(
      { attempts: 2, baseDelayMs: 100, timeoutMs: 1000, concurrency: 2, random: () => 0 },
      s,
    );
    const started: number[] = [];
    const failures: string[] = [];
    for (let i = 0; i < 6; i++)
      q.enqueue(
        () => {
          started.push(i);
          return new Promise<string>(() => {});
        },
        (f) => failures.push(`${i}:${f.attempt}/${f.attempts}:${f.dropped}:${f.error}`),
      );
    await s.advance(1);
    expect(started).toEqual([0, 1]);
    expect(q.status().pending).toBe(6);
    // both attempts of 0 and 1 time out (1000 + 0 backoff + 1000), then 2 and 3 start
    await s.advance(2000);
    expect(started).toEqual([0, 1, 0, 1, 2, 3]);
    expect(failures.slice(0, 2)).toEqual([
      "0:1/2:false:timed out after 1000 ms",
      "1:1/2:false:timed out after 1000 ms",
    ]);
    expect(failures.slice(2, 4)).toEqual([
      "0:2/2:true:timed out after 1000 ms",
      "1:2/2:true:timed out after 1000 ms",
    ]);
    await s.advance(10_000);
    expect(q.status()).toMatchObject({ pending: 0, dropped: 6, sent: 0 });
  });
});

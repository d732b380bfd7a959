/**
 * Delivery off the request path: each channel has its own queue; a send runs with a timeout and is
 * retried with exponential backoff and full jitter, then dropped. The emitter only enqueues, so a dead
 * or slow receiver never delays or fails the request that raised the event. Each channel keeps its
 * dispatch status (last success, last error, pending, dropped) for the API and the dashboard.
 */

export interface DeliveryStatus {
  last_success: string | null;
  last_error: string | null;
  last_error_at: string | null;
  pending: number;
  sent: number;
  dropped: number;
}

export interface Scheduler {
  now(): number;
  /** Run `fn` after `ms`; tests pass a scheduler they advance by hand. */
  after(ms: number, fn: () => void): void;
}

export const realScheduler: Scheduler = {
  now: () => Date.now(),
  after: (ms, fn) => {
    const t = setTimeout(fn, ms);
    (t as { unref?: () => void }).unref?.();
  },
};

export interface DeliveryOptions {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  timeoutMs: number;
  maxPending: number;
  /** 0..1; injected so tests can pin the jitter. */
  random: () => number;
}

export const DEFAULT_DELIVERY: DeliveryOptions = {
  attempts: 5,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  timeoutMs: 10_000,
  maxPending: 1000,
  random: Math.random,
};

/** Delay before retry `n` (1-based): full jitter over min(max, base * 2^(n-1)). */
export function backoffDelay(
  n: number,
  o: Pick<DeliveryOptions, "baseDelayMs" | "maxDelayMs" | "random">,
): number {
  const cap = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (n - 1));
  return Math.floor(o.random() * cap);
}

/** One attempt: resolves with the receiver's answer (for /test) or throws a message without secrets. */
export type Send = (signal: AbortSignal) => Promise<string>;

export interface DeliveryQueue {
  enqueue(send: Send): void;
  status(): DeliveryStatus;
  /** Resolves when nothing is pending or in flight (for shutdown and tests). */
  idle(): Promise<void>;
}

/** @example const q = deliveryQueue(); q.enqueue((signal) => postJson(url, body, signal)); */
export function deliveryQueue(
  options: Partial<DeliveryOptions> = {},
  scheduler: Scheduler = realScheduler,
): DeliveryQueue {
  const o = { ...DEFAULT_DELIVERY, ...options };
  const status: DeliveryStatus = {
    last_success: null,
    last_error: null,
    last_error_at: null,
    pending: 0,
    sent: 0,
    dropped: 0,
  };
  let waiters: (() => void)[] = [];
  const settle = () => {
    if (status.pending > 0) return;
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  const iso = () => new Date(scheduler.now()).toISOString();

  const attempt = (send: Send, n: number): void => {
    const ac = new AbortController();
    // Whichever comes first, the answer or the timeout, decides the attempt; a send that ignores
    // the abort signal and never settles still ends here.
    let decided = false;
    scheduler.after(o.timeoutMs, () => {
      if (decided) return;
      decided = true;
      ac.abort();
      fail(send, n, `timed out after ${o.timeoutMs} ms`);
    });
    send(ac.signal).then(
      () => {
        if (decided) return;
        decided = true;
        status.sent++;
        status.last_success = iso();
        status.pending--;
        settle();
      },
      (e: unknown) => {
        if (decided) return;
        decided = true;
        fail(send, n, e instanceof Error ? e.message : String(e));
      },
    );
  };
  const fail = (send: Send, n: number, message: string) => {
    status.last_error = `attempt ${n}/${o.attempts}: ${message}`;
    status.last_error_at = iso();
    if (n >= o.attempts) {
      status.dropped++;
      status.pending--;
      settle();
      return;
    }
    scheduler.after(backoffDelay(n, o), () => attempt(send, n + 1));
  };

  return {
    enqueue(send) {
      if (status.pending >= o.maxPending) {
        status.dropped++;
        status.last_error = `queue full (${o.maxPending} pending); message dropped`;
        status.last_error_at = iso();
        return;
      }
      status.pending++;
      // Start on a later turn, never inside the emitter's call.
      queueMicrotask(() => attempt(send, 1));
    },
    status: () => ({ ...status }),
    idle: () => (status.pending === 0 ? Promise.resolve() : new Promise((r) => waiters.push(r))),
  };
}

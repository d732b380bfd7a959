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
  /** Messages in flight at once per channel. */
  concurrency: number;
  /** 0..1; injected so tests can pin the jitter. */
  random: () => number;
}

export const DEFAULT_DELIVERY: DeliveryOptions = {
  attempts: 5,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  timeoutMs: 10_000,
  maxPending: 1000,
  concurrency: 2,
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

/** A failed attempt, for the log: which attempt, why, and whether the message is now dropped. */
export interface FailedAttempt {
  attempt: number;
  attempts: number;
  error: string;
  dropped: boolean;
}

export interface DeliveryQueue {
  /** `onFail` hears of every failed attempt of this message (the dispatcher logs it). */
  enqueue(send: Send, onFail?: (f: FailedAttempt) => void): void;
  status(): DeliveryStatus;
  /** Resolves when nothing is pending or in flight (for shutdown and tests). */
  idle(): Promise<void>;
}

interface Message {
  send: Send;
  onFail?: (f: FailedAttempt) => void;
}

/**
 * @example const q = deliveryQueue(); q.enqueue((signal) => postJson(url, body, signal));
 *
 * At most `concurrency` messages are in flight at once (a message holds its slot through its
 * retries); the rest wait in order. Without that cap every event opened its own connection, and a
 * receiver that hangs held hundreds of sockets and timers on the event loop the proxy runs on.
 */
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
  const waiting: Message[] = [];
  let inFlight = 0;
  let waiters: (() => void)[] = [];
  const iso = () => new Date(scheduler.now()).toISOString();

  const done = () => {
    status.pending--;
    inFlight--;
    next();
    if (status.pending > 0) return;
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  const next = () => {
    while (inFlight < o.concurrency && waiting.length > 0) {
      inFlight++;
      attempt(waiting.shift()!, 1);
    }
  };

  const attempt = (m: Message, n: number): void => {
    const ac = new AbortController();
    // Whichever comes first, the answer or the timeout, decides the attempt; a send that ignores
    // the abort signal and never settles still ends here.
    let decided = false;
    scheduler.after(o.timeoutMs, () => {
      if (decided) return;
      decided = true;
      ac.abort();
      fail(m, n, `timed out after ${o.timeoutMs} ms`);
    });
    m.send(ac.signal).then(
      () => {
        if (decided) return;
        decided = true;
        status.sent++;
        status.last_success = iso();
        done();
      },
      (e: unknown) => {
        if (decided) return;
        decided = true;
        fail(m, n, e instanceof Error ? e.message : String(e));
      },
    );
  };
  const fail = (m: Message, n: number, message: string) => {
    status.last_error = `attempt ${n}/${o.attempts}: ${message}`;
    status.last_error_at = iso();
    const dropped = n >= o.attempts;
    try {
      m.onFail?.({ attempt: n, attempts: o.attempts, error: message, dropped });
    } catch {
      /* a listener's fault never stops delivery */
    }
    if (dropped) {
      status.dropped++;
      done();
      return;
    }
    scheduler.after(backoffDelay(n, o), () => attempt(m, n + 1));
  };

  return {
    enqueue(send, onFail) {
      if (status.pending >= o.maxPending) {
        status.dropped++;
        status.last_error = `queue full (${o.maxPending} pending); message dropped`;
        status.last_error_at = iso();
        return;
      }
      status.pending++;
      waiting.push({ send, onFail });
      // Start on a later turn, never inside the emitter's call.
      queueMicrotask(next);
    },
    status: () => ({ ...status }),
    idle: () => (status.pending === 0 ? Promise.resolve() : new Promise((r) => waiters.push(r))),
  };
}

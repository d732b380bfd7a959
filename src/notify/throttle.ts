/**
 * Per-channel cooldown and dedup. The first event of a kind (the dedup key: event type, rule and
 * session) is sent at once; further events of that key within the channel's cooldown are counted,
 * not sent; when the cooldown ends, one message carries how many were held back. A storm of
 * findings therefore becomes one message plus a count per cooldown. Time comes from the injected
 * clock, so tests drive it without sleeping.
 */

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** What to send: the event, and how many events of its key were held back before it. */
export interface Release<E> {
  event: E;
  /** Events of the same key suppressed during the cooldown that ended with this message. */
  suppressed: number;
}

interface Window<E> {
  opened: number;
  held: number;
  last: E | null;
}

export interface Throttle<E> {
  /** The event to send now, or null when it is held back by the cooldown. */
  offer(key: string, event: E): Release<E> | null;
  /** Summaries of the cooldowns that have ended with events held back; call on a timer. */
  flush(): Release<E>[];
}

/** @example const t = throttle<Ev>(300_000, clock); const send = t.offer("finding:rule:s1", ev); */
export function throttle<E>(cooldownMs: number, clock: Clock = systemClock): Throttle<E> {
  const windows = new Map<string, Window<E>>();
  return {
    offer(key, event) {
      const now = clock.now();
      const open = windows.get(key);
      if (open && now - open.opened < cooldownMs) {
        open.held++;
        open.last = event;
        return null;
      }
      const suppressed = open?.held ?? 0;
      windows.set(key, { opened: now, held: 0, last: null });
      return { event, suppressed };
    },
    flush() {
      const now = clock.now();
      const out: Release<E>[] = [];
      for (const [key, w] of windows) {
        if (now - w.opened < cooldownMs) continue;
        if (w.held > 0 && w.last !== null) {
          out.push({ event: w.last, suppressed: w.held - 1 });
          // The summary opens a new cooldown, so the next event waits for it.
          windows.set(key, { opened: now, held: 0, last: null });
        } else windows.delete(key);
      }
      return out;
    },
  };
}

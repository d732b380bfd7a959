/**
 * Following the dashboard's live stream (`GET /api/v1/live`) in a test: every event is read in the
 * background as `{event, data}` (data parsed from JSON); `next(pred)` resolves with the first event,
 * already seen or still to come, that matches.
 */
export interface LiveEvent {
  event: string;
  data: Record<string, unknown>;
}

export interface Live {
  events: LiveEvent[];
  next(pred: (e: LiveEvent) => boolean): Promise<LiveEvent>;
  /** Stop reading (the server sees the client go). */
  close(): Promise<void>;
}

export function followLive(res: Response): Live {
  const events: LiveEvent[] = [];
  const waiters: { pred: (e: LiveEvent) => boolean; resolve: (e: LiveEvent) => void }[] = [];
  const reader = res.body!.getReader();
  void (async () => {
    const dec = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += dec.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const event = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (!event || !data) continue;
          const e = { event, data: JSON.parse(data) as Record<string, unknown> };
          events.push(e);
          for (const w of [...waiters])
            if (w.pred(e)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(e);
            }
        }
      }
    } catch {
      /* closed */
    }
  })();
  return {
    events,
    next(pred) {
      const hit = events.find(pred);
      return hit ? Promise.resolve(hit) : new Promise((resolve) => waiters.push({ pred, resolve }));
    },
    close: () => reader.cancel().catch(() => {}),
  };
}

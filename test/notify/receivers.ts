/**
 * A local webhook receiver that checks sluice's signature the way a consumer would (HMAC over
 * timestamp and body, timestamp within the replay window) and keeps what arrived.
 */
import { verifyWebhook } from "../../src/notify/webhook-sign.ts";

export interface Arrival {
  body: Record<string, unknown>;
  signed: boolean;
}

/**
 * Answers 200 with `answer` when the signature holds, else 401. `now` is the receiver's clock in
 * seconds (tests on a hand-driven clock pass the request's own timestamp).
 */
export function signedReceiver(
  secret: string,
  answer = "accepted",
  now: (req: Request) => number = () => Math.floor(Date.now() / 1000),
) {
  const arrived: Arrival[] = [];
  let waiters: (() => void)[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const raw = await req.text();
      const signed = verifyWebhook(
        secret,
        raw,
        {
          signature: req.headers.get("x-sluice-signature"),
          timestamp: req.headers.get("x-sluice-timestamp"),
        },
        now(req),
      );
      arrived.push({ body: JSON.parse(raw), signed });
      const w = waiters;
      waiters = [];
      for (const f of w) f();
      return new Response(signed ? answer : "bad signature", { status: signed ? 200 : 401 });
    },
  });
  return {
    /** Base URL, ending in `/`. */
    url: server.url.href,
    arrived,
    /** Resolves at the next arrival. */
    next: () => new Promise<void>((r) => waiters.push(r)),
    stop: () => server.stop(true),
  };
}

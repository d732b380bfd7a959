/**
 * Bodies larger than `proxy.max_body_size` are scanned as they stream, in bounded memory, instead of
 * being forwarded unscanned: the body goes upstream window by window, and a window leaves only once
 * it was scanned. The last `OVERLAP` bytes of each window are held back and scanned again with the
 * next one, so a value across a window boundary is seen whole before any of it leaves. A blocking
 * finding stops the body there: the upstream request is aborted before its end, and the client is
 * answered with the block. A body whose bytes do not match its declared `Content-Length` is refused.
 *
 * Windows are scanned as text (a window of a JSON body is no JSON document): redaction cannot be
 * done on a stream, so a redact decision blocks.
 */
import type { Verdict } from "../core/hook.ts";
import { ACTIONS, type Action, type Finding } from "../core/types.ts";

/** New bytes scanned at a time, at most (the carried overlap comes on top). */
const MAX_WINDOW = 1 << 20;
/** Bytes carried from one window into the next: longer than any single secret (a PEM key is ~3.2 KB). */
const MAX_OVERLAP = 16 * 1024;

/**
 * The window and overlap for a scan limit: a window with its overlap stays within the limit, since
 * the pipeline scans nothing larger (and the limit is the memory a body may hold).
 */
export function windowFor(limit: number): { window: number; overlap: number } {
  const overlap = Math.min(MAX_OVERLAP, Math.floor(limit / 4));
  return { window: Math.max(1, Math.min(MAX_WINDOW, limit - overlap)), overlap };
}

export class StreamBlocked extends Error {
  constructor(readonly verdict: Verdict) {
    super("sluice blocked the request body while it streamed");
  }
}

export class LengthMismatch extends Error {
  constructor(
    readonly declared: number,
    readonly received: number,
  ) {
    super(`the body has ${received} bytes, not the ${declared} its Content-Length declares`);
  }
}

export interface StreamScan {
  /** What goes upstream: the body, released window by window once scanned. */
  body: ReadableStream<Uint8Array>;
  /** The findings and strongest action so far (all of them once the body has ended). */
  verdict(): Verdict;
  /** Set when a window blocked, or the length did not match: why the body was stopped. */
  stopped(): StreamBlocked | LengthMismatch | null;
}

const rank = (a: Action) => ACTIONS.indexOf(a);

/**
 * Scan `source` (after `head`, bytes already read from it) window by window with `scan`, releasing
 * each window once scanned. `declared` is the Content-Length, when the client gave one.
 */
export function scanStreaming(
  source: ReadableStream<Uint8Array>,
  head: Uint8Array[],
  declared: number | null,
  limit: number,
  scan: (window: Uint8Array) => Verdict | Promise<Verdict>,
): StreamScan {
  const { window: WINDOW, overlap: OVERLAP } = windowFor(limit);
  const reader = source.getReader();
  const pending: Uint8Array[] = [...head];
  let pendingBytes = head.reduce((n, c) => n + c.byteLength, 0);
  let carry = new Uint8Array(0);
  let received = pendingBytes;
  let ended = false;
  let stopped: StreamBlocked | LengthMismatch | null = null;
  const findings: Finding[] = [];
  let action: Action = "pass";
  let scanned = 0;

  const join = (parts: Uint8Array[], total: number) => {
    const out = new Uint8Array(total);
    let off = 0;
    for (const p of parts) {
      out.set(p, off);
      off += p.byteLength;
    }
    return out;
  };

  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        while (!ended && pendingBytes < WINDOW) {
          const { done, value } = await reader.read();
          if (done) ended = true;
          else {
            pending.push(value);
            pendingBytes += value.byteLength;
            received += value.byteLength;
          }
        }
        if (ended && declared !== null && received !== declared) {
          stopped = new LengthMismatch(declared, received);
          throw stopped;
        }
        // At most one window of new bytes; a larger chunk leaves the rest for the next pull.
        const all = join(pending, pendingBytes);
        const fresh = all.subarray(0, Math.min(WINDOW, all.byteLength));
        const rest = all.subarray(fresh.byteLength);
        pending.length = 0;
        pendingBytes = rest.byteLength;
        if (pendingBytes > 0) pending.push(rest);
        const last = ended && pendingBytes === 0;
        const window = join([carry, fresh], carry.byteLength + fresh.byteLength);
        // The carried bytes alone were scanned with the window before: only new bytes need a scan.
        if (fresh.byteLength > 0) {
          const v = await scan(window);
          scanned += fresh.byteLength;
          findings.push(...v.findings);
          const a: Action = v.action === "redact" ? "block" : v.action;
          if (rank(a) > rank(action)) action = a;
          if (a === "block") {
            stopped = new StreamBlocked(verdictNow());
            throw stopped;
          }
        }
        // Hold back the overlap unless this is the end of the body; release the rest.
        const keep = last ? 0 : Math.min(OVERLAP, window.byteLength);
        const release = window.subarray(0, window.byteLength - keep);
        carry = window.slice(window.byteLength - keep);
        if (release.byteLength > 0) controller.enqueue(release);
        if (last) controller.close();
      } catch (e) {
        reader.cancel(e).catch(() => {});
        controller.error(e);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });

  const verdictNow = (): Verdict => ({ action, findings: [...findings], scanned_bytes: scanned });
  return { body, verdict: verdictNow, stopped: () => stopped };
}

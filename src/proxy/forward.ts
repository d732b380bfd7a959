/**
 * Forwarding one HTTP request upstream and relaying the answer: bytes unchanged both
 * ways (`decompress: false`), manual redirects, the three timers of `proxy.timeout`, retries only when
 * nothing reached the upstream or a pooled connection was stale (the retry bypasses the pool), and SSE
 * relayed chunk by chunk. Upstream failures become the provider's 502/504 shape, never a hang.
 *
 * Connections: every request may run on a kept-alive connection from the pool (`pool.ts` says which).
 * A stream that ends cleanly leaves its connection there; one cut short (client gone, upstream error,
 * timeout) is aborted, which closes its connection, so a half-read response never meets the next
 * request.
 */
import type { UpstreamTls } from "../config/load.ts";
import type { Logger } from "../core/log.ts";
import type { ProviderLabel } from "../core/types.ts";
import { providerError } from "./errors.ts";
import { clientResponseHeaders } from "./headers.ts";
import { type HostPool, isHttp2Refused } from "./pool.ts";

export interface Timers {
  /** Until response headers arrive (connect + TLS + upstream think time), ms. */
  headersMs: number;
  /** Longest silence between two body chunks, ms. */
  idleMs: number;
  /** Whole exchange, ms. */
  totalMs: number;
}

/** A provider's `upstream` base URL (which may carry a path prefix) joined with the client's path and query. */
export function upstreamUrl(base: string, pathAndQuery: string): URL {
  let root = roots.get(base);
  if (root === undefined) {
    const b = new URL(base);
    root = `${b.origin}${b.pathname.replace(/\/+$/, "")}`;
    if (roots.size >= 64) roots.clear();
    roots.set(base, root);
  }
  return new URL(`${root}${pathAndQuery}`);
}

/** Each configured upstream's origin and path prefix, worked out once rather than per request. */
const roots = new Map<string, string>();

/** The timers derived from `proxy.timeout` (seconds). */
export function timersFor(timeoutSeconds: number): Timers {
  const ms = timeoutSeconds * 1000;
  return { headersMs: ms, idleMs: ms, totalMs: ms * 5 };
}

export interface ForwardInput {
  provider: ProviderLabel;
  url: URL;
  method: string;
  headers: Headers;
  /** Buffered bytes (replayable) or a stream (bodies above max_body_size: no retry). */
  body: Uint8Array | ReadableStream<Uint8Array> | null;
  /**
   * The client asked for a stream: no pool slot, chunked relay; its connection is reused when the
   * pool's `reuseStreams` is on, else a fresh one is closed after use.
   */
  streaming: boolean;
  clientSignal: AbortSignal;
  timers: Timers;
  retries: number;
  tls: UpstreamTls;
  pool: HostPool;
  log: Logger;
}

export interface ForwardOutcome {
  status: number | null;
  /** Why it failed (`upstream timeout`, `ECONNRESET`, `client closed`), null when it completed. */
  error: string | null;
  responseBytes: number;
}

export interface ForwardResult {
  response: Response;
  /** Settles when the response body has been fully relayed (or failed). */
  done: Promise<ForwardOutcome>;
  /** Set when sluice answered itself because the upstream could not be reached or timed out. */
  failure?: string;
  /**
   * With `failure`: whether the request may have reached the upstream. False only when no connection
   * was made (refused, unresolvable, unreachable), so nothing was sent; a reset, a timeout or a cut
   * response leave it unknown. Sending the request elsewhere is safe only when this is false.
   */
  maybeSent?: boolean;
}

const NOTHING_SENT = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);
const STALE = new Set(["ECONNRESET", "ConnectionClosed", "EPIPE", "UND_ERR_SOCKET"]);

class TimeoutError extends Error {
  constructor(readonly which: "headers" | "idle" | "total") {
    super(`upstream ${which} timeout`);
  }
}

function errCode(e: unknown): string {
  const err = e as { code?: string; name?: string; message?: string };
  return err?.code ?? err?.name ?? "error";
}

/** One request upstream, from slot to relayed answer: the timers, the retry and the relay share its state, hence its length. */
export async function forward(input: ForwardInput): Promise<ForwardResult> {
  const { provider, timers, log } = input;
  const host = input.url.host;
  const replayable = !(input.body instanceof ReadableStream);
  const pool = input.pool;
  /** Non-streaming requests take a slot; any request may reuse a kept-alive connection. */
  const useSlot = !input.streaming;
  const reuse = useSlot || pool.reuseStreams;
  /** Set after a stale pooled connection failed: the retry runs on a fresh one, outside the pool. */
  let bypass = false;
  let release: (() => void) | null = null;
  let attempt = 0;
  let upstreamRes: Response | null = null;
  let ctl!: AbortController;
  let timeoutHit: TimeoutError | null = null;
  const started = Date.now();
  const onClientAbort = () => ctl?.abort(new Error("client closed"));
  input.clientSignal.addEventListener("abort", onClientAbort);
  /** Abort the exchange after `ms`, remembering which timer fired. */
  const abortAfter = (which: TimeoutError["which"], ms: number) =>
    setTimeout(() => {
      timeoutHit = new TimeoutError(which);
      ctl.abort(timeoutHit);
    }, ms);
  /** What is left of the total timer (at least 1 ms). */
  const totalLeft = () => Math.max(1, timers.totalMs - (Date.now() - started));

  const fail = (status: number, message: string, error: string): ForwardResult => {
    release?.();
    input.clientSignal.removeEventListener("abort", onClientAbort);
    const kind = status === 504 ? "timeout" : "bad_gateway";
    return {
      response: providerError(provider, status, message, kind),
      done: Promise.resolve({ status: null, error, responseBytes: 0 }),
      failure: error,
      maybeSent: !NOTHING_SENT.has(error),
    };
  };

  pool.noteRequest(input.url);
  for (;;) {
    ctl = new AbortController();
    timeoutHit = null;
    if (input.clientSignal.aborted) return fail(502, "client closed the request", "client closed");
    if (useSlot && !bypass && !release) release = await pool.acquire(host);
    const warm = reuse && !bypass && pool.hasWarmConnection(host);
    // Pooled connections idle for longer than 2 × timeout are evicted: start on a fresh one.
    const fresh = !reuse || bypass || pool.idleExpired(host);
    const protocol = pool.protocolFor(host);
    const headersTimer = abortAfter("headers", Math.min(timers.headersMs, totalLeft()));
    try {
      upstreamRes = await fetch(input.url, {
        method: input.method,
        headers: input.headers,
        body: input.body as BodyInit | null,
        redirect: "manual",
        signal: ctl.signal,
        keepalive: !fresh,
        decompress: false,
        tls: input.tls,
        ...(protocol ? { protocol } : {}),
      } as RequestInit);
      clearTimeout(headersTimer);
      break;
    } catch (e) {
      clearTimeout(headersTimer);
      if (input.clientSignal.aborted) return fail(502, "client closed the request", "client closed");
      // The upstream did not select HTTP/2: nothing was sent; ask again over HTTP/1.1 (no retry spent).
      if (protocol === "http2" && isHttp2Refused(e) && replayable) {
        pool.noteHttp2Refused(host);
        continue;
      }
      if (timeoutHit)
        return fail(
          504,
          `sluice: upstream ${host} sent no response headers within ${timers.headersMs / 1000} s`,
          "upstream timeout",
        );
      const code = errCode(e);
      const nothingSent = NOTHING_SENT.has(code);
      const stale = warm && STALE.has(code);
      if (attempt < input.retries && replayable && (nothingSent || stale)) {
        attempt++;
        log.info(`retrying upstream request to ${host} after ${code}`, { attempt, bypass_pool: stale });
        if (stale) {
          release?.();
          release = null;
          bypass = true; // the retry bypasses the pool: a fresh connection
        }
        continue;
      }
      log.warn(`upstream ${host} failed: ${code}`, { provider });
      return fail(502, `sluice: could not reach upstream ${host} (${code})`, code);
    }
  }

  const res = upstreamRes!;
  const headers = clientResponseHeaders(res.headers);
  const eventStream = (res.headers.get("content-type") ?? "").includes("text/event-stream");
  const status = res.status;

  // Non-streaming: read the whole body under the total timer, then answer with the same bytes.
  if (!input.streaming && !eventStream) {
    const totalTimer = abortAfter("total", totalLeft());
    try {
      const bytes = res.body ? new Uint8Array(await res.arrayBuffer()) : null;
      clearTimeout(totalTimer);
      release?.();
      input.clientSignal.removeEventListener("abort", onClientAbort);
      return {
        response: new Response(bytes, { status, statusText: res.statusText, headers }),
        done: Promise.resolve({ status, error: null, responseBytes: bytes?.byteLength ?? 0 }),
      };
    } catch (e) {
      clearTimeout(totalTimer);
      if (timeoutHit)
        return fail(504, `sluice: upstream ${host} did not finish its response in time`, "upstream timeout");
      return fail(
        502,
        `sluice: upstream ${host} closed the connection mid-response (${errCode(e)})`,
        errCode(e),
      );
    }
  }

  // Streaming: relay each chunk as it arrives; the idle timer is reset by every chunk.
  release?.();
  release = null;
  let settle!: (o: ForwardOutcome) => void;
  const done = new Promise<ForwardOutcome>((r) => (settle = r));
  let bytes = 0;
  let finished = false;
  /** Settle once. A clean end leaves the connection in the pool; anything else aborts (closes) it. */
  const finish = (error: string | null) => {
    if (finished) return;
    finished = true;
    clearTimeout(idleTimer);
    clearTimeout(totalTimer);
    input.clientSignal.removeEventListener("abort", onClientAbort);
    if (error === null) {
      if (reuse && !bypass) pool.touch(host);
    } else ctl.abort(new Error(error));
    settle({ status, error, responseBytes: bytes });
  };
  const idleTimer = abortAfter("idle", timers.idleMs);
  const totalTimer = abortAfter("total", totalLeft());
  if (!res.body) {
    finish(null);
    return { response: new Response(null, { status, statusText: res.statusText, headers }), done };
  }
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        try {
          const { done: end, value } = await reader.read();
          if (end) {
            finish(null);
            c.close();
            return;
          }
          idleTimer.refresh();
          bytes += value.byteLength;
          c.enqueue(value);
        } catch (e) {
          const why = timeoutHit
            ? timeoutHit.message
            : input.clientSignal.aborted
              ? "client closed"
              : errCode(e);
          if (timeoutHit) log.warn(`cut stream from ${host}: ${why}`, { provider });
          finish(why);
          c.error(e);
        }
      },
      cancel() {
        ctl.abort(new Error("client closed"));
        reader.cancel().catch(() => {});
        finish("client closed");
      },
    },
    { highWaterMark: 0 },
  );
  return { response: new Response(body, { status, statusText: res.statusText, headers }), done };
}

/**
 * Upstream connections per host: the policy around Bun's fetch keep-alive pool, which holds the
 * sockets themselves and has no API to list or evict them (docs/upstream-connections.md).
 *
 * - Slots: a non-streaming request takes one of `max_connections` slots per host; later ones queue
 *   and a warning is logged. Streams take no slot (one can last minutes).
 * - Reuse: every request may run on a kept-alive connection. A stream that ends cleanly leaves its
 *   connection for the next request (`reuseStreams`); one cut short closes it (`forward` aborts it).
 *   With `reuseStreams` off, streams use a fresh connection that is closed after use.
 * - Idle eviction: a host idle for more than 2 × timeout is not trusted: its next request opens a
 *   fresh connection. A stale socket that is still reused later fails with a reset, which `forward`
 *   retries once on a fresh connection.
 * - Warm connections (`warmConnections`): when an HTTPS host's connections idle out, and at start for
 *   the upstreams the runtime names, a `HEAD /` opens (or proves alive) one kept-alive connection, so
 *   the next turn does not pay for TCP and TLS. Hosts are kept warm for an hour after their last
 *   request. (Plain-HTTP hosts, such as the local engine in split mode, are not warmed.)
 * - Protocol: HTTP/1.1 keep-alive, or HTTP/2 to upstreams that select it when `http2` is on; a host
 *   that refuses HTTP/2 is remembered and gets HTTP/1.1.
 */
import type { UpstreamTls } from "../config/load.ts";
import type { Logger } from "../core/log.ts";

/** How long after its last request a host is kept warm. */
export const WARM_WINDOW_MS = 60 * 60 * 1000;
/** Longest a warm-up may take (a half-open socket answers nothing): then it is abandoned. */
const WARM_TIMEOUT_MS = 10_000;

interface HostState {
  busy: number;
  queue: (() => void)[];
  /** When a connection to this host was last left in the pool (ms epoch); 0 = never. */
  lastUsed: number;
  lastWarn: number;
  /** `https://host[:port]`, known once a request or warm-up went there. */
  origin: string | null;
  /** When the last real request (not a warm-up) went to this host. */
  lastRequest: number;
  warming: Promise<boolean> | null;
  /** Fires when the host's connections idle out (warm-ups only). */
  idleTimer: ReturnType<typeof setTimeout> | null;
  /** The host refused HTTP/2 (it selected HTTP/1.1 in ALPN). */
  noHttp2: boolean;
}

export interface PoolOptions {
  /** Streams that end cleanly leave their connection in the pool (`proxy.reuse_stream_connections`). */
  reuseStreams?: boolean;
  /** Keep a connection open to upstreams with recent traffic (`proxy.warm_connections`). */
  warmConnections?: boolean;
  /** HTTP/2 to upstreams that select it (`proxy.upstream_http2`). */
  http2?: boolean;
  /** The TLS settings every upstream request uses (warm-ups must match them to share the pool). */
  tls?: () => UpstreamTls;
}

/** Whether an error says the upstream did not select HTTP/2 (nothing was sent). */
export function isHttp2Refused(e: unknown): boolean {
  return (e as { code?: string })?.code === "HTTP2Unsupported";
}

export class HostPool {
  #hosts = new Map<string, HostState>();
  #sweep: ReturnType<typeof setInterval> | null = null;
  #closed = false;
  /** Aborts warm-ups in flight when the pool closes. */
  #closing = new AbortController();
  reuseStreams: boolean;
  warmConnections: boolean;
  http2: boolean;
  #tls: () => UpstreamTls;

  constructor(
    public maxConnections: number,
    /** Idle eviction threshold in ms (2 × proxy.timeout). */
    public idleEvictMs: number,
    private log: Logger,
    opts: PoolOptions = {},
  ) {
    this.reuseStreams = opts.reuseStreams ?? true;
    this.warmConnections = opts.warmConnections ?? false;
    this.http2 = opts.http2 ?? false;
    this.#tls = opts.tls ?? (() => ({ rejectUnauthorized: true }));
  }

  #state(host: string): HostState {
    let s = this.#hosts.get(host);
    if (!s)
      this.#hosts.set(
        host,
        (s = {
          busy: 0,
          queue: [],
          lastUsed: 0,
          lastWarn: 0,
          origin: null,
          lastRequest: 0,
          warming: null,
          idleTimer: null,
          noHttp2: false,
        }),
      );
    return s;
  }

  /** True when a kept-alive connection to `host` is probably in the pool (used within the idle window). */
  hasWarmConnection(host: string, now = Date.now()): boolean {
    const s = this.#hosts.get(host);
    return !!s && s.lastUsed > 0 && now - s.lastUsed <= this.idleEvictMs;
  }

  /**
   * True when `host`'s pooled connections have been idle longer than the eviction threshold: the next
   * request must not trust them and opens a fresh connection instead.
   */
  idleExpired(host: string, now = Date.now()): boolean {
    const s = this.#hosts.get(host);
    return !!s && s.lastUsed > 0 && now - s.lastUsed > this.idleEvictMs;
  }

  /** A request is about to go to `url`'s host: remember where it is and that it has traffic. */
  noteRequest(url: URL): void {
    const s = this.#state(url.host);
    s.origin = url.origin;
    s.lastRequest = Date.now();
  }

  /** A connection to `host` was left in the pool in working order (a clean response, a warm-up). */
  touch(host: string): void {
    const s = this.#state(host);
    s.lastUsed = Date.now();
    this.#armIdle(s);
  }

  /** The fetch `protocol` for `host`: HTTP/2 when enabled and not refused, else Bun's HTTP/1.1. */
  protocolFor(host: string): "http2" | "http1.1" | undefined {
    if (!this.http2) return undefined;
    return this.#hosts.get(host)?.noHttp2 ? "http1.1" : "http2";
  }

  /** `host` selected HTTP/1.1 when offered HTTP/2 only: use HTTP/1.1 from now on. */
  noteHttp2Refused(host: string): void {
    const s = this.#state(host);
    if (!s.noHttp2) this.log.info(`upstream ${host} does not offer HTTP/2; using HTTP/1.1`);
    s.noHttp2 = true;
  }

  /** Take a slot; resolves with its release function. Queues (and warns) when all slots are busy. */
  async acquire(host: string): Promise<() => void> {
    const s = this.#state(host);
    if (s.busy >= this.maxConnections) {
      const now = Date.now();
      if (now - s.lastWarn > 5000) {
        s.lastWarn = now;
        this.log.warn(
          `all ${this.maxConnections} upstream connections to ${host} are busy; requests are queued`,
          {
            queued: s.queue.length + 1,
          },
        );
      }
      await new Promise<void>((resolve) => s.queue.push(resolve));
    }
    s.busy++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      s.busy--;
      s.lastUsed = Date.now();
      this.#armIdle(s);
      const next = s.queue.shift();
      if (next) next();
    };
  }

  /** (Re)start the timer that warms `host` again once its connections idle out. */
  #armIdle(s: HostState): void {
    if (!this.warmConnections || this.#closed) return;
    if (s.idleTimer) {
      s.idleTimer.refresh();
      return;
    }
    s.idleTimer = setTimeout(() => {
      s.idleTimer = null;
      if (!this.warmConnections || this.#closed || !s.origin?.startsWith("https:")) return;
      if (s.busy > 0) return; // in use: its release starts the timer again
      if (Date.now() - s.lastRequest > WARM_WINDOW_MS) return;
      void this.warm(s.origin);
    }, this.idleEvictMs + 1);
    s.idleTimer.unref?.();
  }

  /**
   * Open (or prove alive) one kept-alive connection to `origin` with a `HEAD /`, so that the next
   * request finds it in the pool. No credentials are sent. Resolves true when it worked; a second
   * attempt follows a failure (the first may have met a stale pooled socket, which is closed now).
   */
  warm(origin: string): Promise<boolean> {
    const url = new URL("/", origin);
    if (url.protocol !== "https:" || this.#closed) return Promise.resolve(false);
    const s = this.#state(url.host);
    s.origin ??= url.origin;
    if (s.lastRequest === 0) s.lastRequest = Date.now(); // warmed at start: the window starts now
    if (s.warming) return s.warming;
    const run = async (): Promise<boolean> => {
      for (let attempt = 0; attempt < 2 && !this.#closed; attempt++) {
        const t0 = performance.now();
        try {
          const res = await fetch(url, {
            method: "HEAD",
            headers: { "user-agent": "sluice (connection warm-up)" },
            redirect: "manual",
            keepalive: true,
            decompress: false,
            tls: this.#tls(),
            signal: AbortSignal.any([
              this.#closing.signal,
              AbortSignal.timeout(Math.min(WARM_TIMEOUT_MS, this.idleEvictMs)),
            ]),
            protocol: this.protocolFor(url.host),
          } as RequestInit);
          await res.arrayBuffer();
          this.touch(url.host);
          this.log.debug(`warm connection to ${url.host} (HEAD / answered ${res.status})`, {
            ms: Math.round(performance.now() - t0),
          });
          return true;
        } catch (e) {
          if (this.#closed) break;
          if (isHttp2Refused(e)) {
            this.noteHttp2Refused(url.host);
            attempt--;
            continue;
          }
          const code = (e as { code?: string; name?: string }).code ?? (e as Error).name;
          this.log.info(`could not open a warm connection to ${url.host}: ${code}`, { attempt: attempt + 1 });
        }
      }
      return false;
    };
    s.warming = run().finally(() => {
      s.warming = null;
    });
    return s.warming;
  }

  /** Resolves when no warm-up to `host` is in flight (true when the last one left a connection). */
  async warmedUp(host: string): Promise<boolean> {
    const s = this.#hosts.get(host);
    return s?.warming ? s.warming : this.hasWarmConnection(host);
  }

  /**
   * Forget hosts idle for longer than ten times the eviction threshold (their state only; the next
   * request to them starts on a fresh connection either way, see `idleExpired`). Hosts still kept
   * warm stay.
   */
  evictIdle(now = Date.now()): number {
    let n = 0;
    for (const [host, s] of this.#hosts) {
      if (
        s.busy === 0 &&
        s.queue.length === 0 &&
        !s.warming &&
        !s.idleTimer &&
        s.lastUsed > 0 &&
        now - s.lastUsed > this.idleEvictMs * 10
      ) {
        this.#hosts.delete(host);
        n++;
      }
    }
    return n;
  }

  startSweeper(): void {
    if (this.#sweep) return;
    this.#sweep = setInterval(() => this.evictIdle(), Math.max(1000, Math.min(this.idleEvictMs, 60_000)));
    this.#sweep.unref?.();
  }

  /** Close the pool: no more eviction sweeps or warm-ups, queued requests are released to fail fast. */
  close(): void {
    this.#closed = true;
    this.#closing.abort();
    if (this.#sweep) clearInterval(this.#sweep);
    this.#sweep = null;
    for (const s of this.#hosts.values()) {
      if (s.idleTimer) clearTimeout(s.idleTimer);
      for (const q of s.queue.splice(0)) q();
    }
    this.#hosts.clear();
  }

  stats(): Record<string, { busy: number; queued: number }> {
    const out: Record<string, { busy: number; queued: number }> = {};
    for (const [h, s] of this.#hosts) out[h] = { busy: s.busy, queued: s.queue.length };
    return out;
  }
}

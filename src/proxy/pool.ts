/**
 * Per-host upstream connection slots (SPEC §3 Upstream connections, §8). Non-streaming requests take a
 * slot and reuse kept-alive connections (Bun's fetch keeps them); at most `max_connections` run at once
 * per host, later ones queue and a warning is logged. Streaming requests take no slot and use a fresh
 * connection that is closed after use. A host idle for more than 2 × timeout is evicted: its next
 * request opens a fresh connection instead of trusting a socket that may have gone stale. (The sockets
 * themselves live in Bun's fetch keep-alive pool, which has no eviction API; a stale one that is still
 * reused later fails with a reset, which `forward` retries once on a fresh connection.)
 */
import type { Logger } from "../core/log.ts";

interface HostState {
  busy: number;
  queue: (() => void)[];
  /** When the last pooled request on this host finished (ms epoch); 0 = never. */
  lastUsed: number;
  lastWarn: number;
}

export class HostPool {
  #hosts = new Map<string, HostState>();
  #sweep: ReturnType<typeof setInterval> | null = null;

  constructor(
    public maxConnections: number,
    /** Idle eviction threshold in ms (2 × proxy.timeout). */
    public idleEvictMs: number,
    private log: Logger,
  ) {}

  #state(host: string): HostState {
    let s = this.#hosts.get(host);
    if (!s) this.#hosts.set(host, (s = { busy: 0, queue: [], lastUsed: 0, lastWarn: 0 }));
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
      const next = s.queue.shift();
      if (next) next();
    };
  }

  /**
   * Forget hosts idle for longer than ten times the eviction threshold (their state only; the next
   * request to them starts on a fresh connection either way, see `idleExpired`).
   */
  evictIdle(now = Date.now()): number {
    let n = 0;
    for (const [host, s] of this.#hosts) {
      if (
        s.busy === 0 &&
        s.queue.length === 0 &&
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

  /** Close the pool: no more eviction sweeps, queued requests are released to fail fast. */
  close(): void {
    if (this.#sweep) clearInterval(this.#sweep);
    this.#sweep = null;
    for (const s of this.#hosts.values()) for (const q of s.queue.splice(0)) q();
    this.#hosts.clear();
  }

  stats(): Record<string, { busy: number; queued: number }> {
    const out: Record<string, { busy: number; queued: number }> = {};
    for (const [h, s] of this.#hosts) out[h] = { busy: s.busy, queued: s.queue.length };
    return out;
  }
}

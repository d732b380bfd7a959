/**
 * The store's write queue. The bus's listeners run on the request path, so they only push a write
 * onto a bounded in-memory queue (never touching SQLite); a timer drains it in batches inside one
 * transaction. The connection uses `busy_timeout = 0`, so a database locked by another process
 * fails fast (SQLITE_BUSY): the batch stays queued and is retried with a backoff. A full queue drops
 * the write and counts it (`stats().dropped`), logging once a minute.
 */
import type { Database } from "bun:sqlite";
import type { Logger } from "../core/log.ts";
import type { QueueStats } from "./records.ts";
import { isBusy } from "./sql.ts";

export interface WriterOptions {
  /** Queue bound. */
  maxQueue: number;
  /** How often queued writes are drained (ms). */
  intervalMs: number;
  /** Runs before each batch (the audit file's lines are appended there). */
  beforeBatch?: () => void;
}

/** One queued write: runs inside the batch's transaction. */
export type Write = () => void;

/** A batch shares the event loop with the proxy: it stops after this much work (ms) or this many writes. */
const BATCH_BUDGET_MS = 8;
const BATCH_MAX = 2000;

export class Writer {
  readonly stats: QueueStats = {
    queued: 0,
    dropped: 0,
    written: 0,
    errors: 0,
    busy_retries: 0,
    last_error: null,
  };
  #queue: Write[] = [];
  #timer: ReturnType<typeof setTimeout> | null = null;
  #backoff = 0;
  #closed = false;
  #lastDropLog = 0;

  constructor(
    private db: Database,
    private log: Logger,
    private opts: WriterOptions,
  ) {}

  get queued(): number {
    return this.#queue.length;
  }

  enqueue(write: Write): void {
    if (this.#closed) return;
    if (this.#queue.length >= this.opts.maxQueue) {
      this.stats.dropped++;
      const now = Date.now();
      if (now - this.#lastDropLog > 60_000) {
        this.#lastDropLog = now;
        this.log.warn("store: write queue full, events dropped", {
          dropped: this.stats.dropped,
          queue: this.opts.maxQueue,
        });
      }
      return;
    }
    this.#queue.push(write);
    this.#schedule();
  }

  /** An error of a write outside the queue, counted with the queue's. */
  failed(message: string): void {
    this.stats.errors++;
    this.stats.last_error = message;
  }

  #schedule(ms = this.opts.intervalMs): void {
    if (this.#timer || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.drain();
    }, ms);
    this.#timer.unref?.();
  }

  #cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** Write a batch now instead of at the timer's next tick. */
  drainNow(): void {
    this.#cancel();
    this.drain();
  }

  /** Write one batch; the rest waits for the next tick. A busy database keeps everything queued. */
  drain(): void {
    this.opts.beforeBatch?.();
    const queue = this.#queue;
    if (queue.length === 0) return;
    const budgetEnd = performance.now() + BATCH_BUDGET_MS;
    let done = 0;
    try {
      this.db.transaction(() => {
        done = 0;
        for (const write of queue) {
          write();
          done++;
          if (done >= BATCH_MAX || performance.now() > budgetEnd) break;
        }
      })();
      queue.splice(0, done);
      this.stats.written += done;
      this.#backoff = 0;
    } catch (e) {
      if (isBusy(e)) {
        this.stats.busy_retries++;
        this.#backoff = Math.min(2000, this.#backoff ? this.#backoff * 2 : 100);
        this.#schedule(this.#backoff);
        return;
      }
      // A bad write must not wedge the queue: write the batch one by one, skipping failures.
      const batch = queue.splice(0, done + 1);
      for (let i = 0; i < batch.length; i++) {
        try {
          batch[i]!();
          this.stats.written++;
        } catch (err) {
          if (isBusy(err)) {
            queue.unshift(...batch.slice(i));
            break;
          }
          this.failed((err as Error).message);
        }
      }
      this.log.warn("store: write failed", { error: (e as Error).message });
    }
    if (queue.length > 0) this.#schedule(this.#backoff || 0);
  }

  /** Write everything queued, retrying a busy database for at most five seconds (shutdown must not hang). */
  async flush(): Promise<void> {
    this.#cancel();
    const deadline = Date.now() + 5000;
    for (;;) {
      this.drain();
      if (this.#queue.length === 0 || Date.now() > deadline) break;
      this.#cancel();
      await Bun.sleep(20);
    }
    if (this.#queue.length > 0) this.#schedule(this.#backoff || this.opts.intervalMs);
  }

  /** Stop taking writes; what is still queued is reported and dropped. */
  close(): void {
    this.#closed = true;
    this.#cancel();
    if (this.#queue.length > 0)
      this.log.warn("store: closing with unwritten events", { count: this.#queue.length });
  }
}

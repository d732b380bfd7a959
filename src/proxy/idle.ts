/**
 * Work the proxy keeps for a quiet moment. Parsing and scanning a request body leaves garbage (the
 * parsed body, its text segments), and the engine collects it whenever the heap fills: often in the
 * middle of the next request's parse and scan, which then waits for the collection before it can be
 * forwarded. A turn of an AI tool is followed by a pause (the tool runs, the person reads), so once
 * something was scanned and the proxy goes quiet, that pause is used instead: no HTTP request in
 * flight and no WebSocket message relayed for `quietMs`. The work runs once per such burst and never
 * while a request is in flight; with steady traffic there is no quiet moment and it does not run.
 */

/** How long the proxy must have relayed nothing before the idle work runs (ms). */
export const QUIET_MS = 5;

export class IdleWork {
  #due = false;
  #lastActivity = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    /** Whether an HTTP request is in flight. */
    private readonly busy: () => boolean,
    private readonly work: () => void,
    private readonly quietMs = QUIET_MS,
  ) {}

  /** Something was scanned: the work is due at the next quiet moment. */
  scanned(): void {
    this.#due = true;
    this.activity();
    this.#arm(this.quietMs);
  }

  /** A WebSocket message was relayed: not quiet yet. */
  activity(): void {
    this.#lastActivity = performance.now();
  }

  /** An HTTP request settled: the proxy may be quiet now. */
  settled(): void {
    if (this.#due) this.#arm(this.quietMs);
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#due = false;
  }

  #arm(ms: number): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.#check(), ms);
    this.#timer.unref?.();
  }

  #check(): void {
    this.#timer = null;
    if (!this.#due || this.busy()) return; // `settled` arms it again
    const quiet = performance.now() - this.#lastActivity;
    if (quiet < this.quietMs) {
      this.#arm(Math.ceil(this.quietMs - quiet));
      return;
    }
    this.#due = false;
    try {
      this.work();
    } catch {
      /* housekeeping never breaks the proxy */
    }
  }
}

/**
 * Scan worker threads, startable before anything else is loaded: this module imports nothing heavy,
 * so `sluice scan` can start its workers first and let their module loading overlap its own (CLI,
 * config, walk). When its module cannot be loaded, a worker is started again from the next place the
 * module may be (compiled binaries), and what it was sent is sent again.
 */

/**
 * Below this many bytes in total, scanning stays on the main thread. Each thread compiles the rules
 * and warms up its own JIT (~100 ms of CPU, part of it on JIT and GC helper threads), so a worker
 * pays off only on large inputs. On 2 cores (binary, generated source trees, quiet machine): 10 MB
 * 138 ms on one thread / 149 ms on two, 20 MB 228 / 224, 40 MB 358 / 303, 100 MB 863 / 567.
 */
export const PARALLEL_MIN_BYTES = 24 * 1024 * 1024;

export function defaultJobs(): number {
  return Math.max(1, Math.min(navigator.hardwareConcurrency, 8));
}

/**
 * Where the worker module is. From source: beside this file. In a compiled binary (build.ts lists
 * src/scan/worker.ts as a second entrypoint) modules live under `/$bunfs/root/`, relative to the
 * common root of the entrypoints (`src/`, or the repository when other files widen it).
 */
export function workerSpecifiers(): string[] {
  if (import.meta.url.includes("$bunfs")) return ["./scan/worker.ts", "./src/scan/worker.ts"];
  return [new URL("./worker.ts", import.meta.url).href];
}

/** What a worker sends back (see worker.ts). */
export interface WorkerReply {
  type: "ready" | "done" | "failed";
  id?: number;
  results?: unknown[];
  message?: string;
}

export interface WorkerListener {
  message(m: WorkerReply): void;
  /** The worker could not start or died; it will send nothing more. */
  failed(): void;
}

/** Bun's Worker can be unref'd like a timer (the DOM type does not say so). */
type RefWorker = Worker & { ref(): void; unref(): void };

export class ScanWorker {
  #worker: Worker | null = null;
  #candidate = 0;
  #loaded = false;
  #dead = false;
  /** What was sent before the module loaded, to send again if it must be loaded from elsewhere. */
  #sent: unknown[] = [];
  #listener: WorkerListener | null = null;
  readonly #specs: string[];

  /** `specifiers`: where the worker module may be, tried in order (tests pass others). */
  constructor(specifiers: string[] = workerSpecifiers()) {
    this.#specs = specifiers;
    this.#spawn();
  }

  #spawn(): void {
    let w: Worker;
    try {
      w = new Worker(this.#specs[this.#candidate]!);
    } catch {
      this.#fail();
      return;
    }
    this.#worker = w;
    // Idle until listened to: a worker started early must not keep the process alive on its own.
    if (!this.#listener) (w as RefWorker).unref();
    for (const m of this.#sent) w.postMessage(m);
    w.onmessage = (e: MessageEvent) => {
      const m = e.data as WorkerReply | { type: "loaded" };
      if (m.type === "loaded") {
        this.#loaded = true;
        this.#sent = [];
        return;
      }
      this.#listener?.message(m);
    };
    w.onerror = () => {
      // The module was not found where we looked: try the next place before giving up.
      if (!this.#loaded && !this.#dead && this.#candidate + 1 < this.#specs.length) {
        w.terminate();
        this.#candidate++;
        this.#spawn();
        return;
      }
      this.#fail();
    };
  }

  #fail(): void {
    if (this.#dead) return;
    this.#dead = true;
    this.#worker?.terminate();
    this.#listener?.failed();
  }

  /** Sent at once (the worker queues messages until its module has loaded). */
  post(message: unknown): void {
    if (this.#dead) return;
    if (!this.#loaded) this.#sent.push(message);
    this.#worker!.postMessage(message);
  }

  listen(listener: WorkerListener): void {
    this.#listener = listener;
    if (this.#dead) {
      listener.failed();
      return;
    }
    (this.#worker as RefWorker | null)?.ref();
  }

  terminate(): void {
    this.#dead = true;
    this.#listener = null;
    this.#worker?.terminate();
  }
}

/**
 * Scanning many files across cores: a pool of workers, each with its own compiled scanner, fed
 * batches of files from one queue (biggest first). Small jobs stay in-process, where starting
 * workers would cost more than it saves. A worker that fails hands its batch back to the main thread.
 */
import { cpus } from "node:os";
import { makeTextScanner, type ScanSetup } from "./engine.ts";
import { scanFile } from "./file.ts";
import type { FileResult } from "./types.ts";
import type { FileEntry } from "./walk.ts";

/** Below this many bytes in total, scanning stays on the main thread. */
export const PARALLEL_MIN_BYTES = 4 * 1024 * 1024;
const BATCH_BYTES = 1024 * 1024;
const BATCH_FILES = 64;

/**
 * Where the worker module is. From source: beside this file. In a compiled binary (build.ts lists
 * src/scan/worker.ts as a second entrypoint) modules live under `/$bunfs/root/`, relative to the
 * common root of the entrypoints (`src/`, or the repository when other files widen it).
 */
export function workerSpecifiers(): string[] {
  if (import.meta.url.includes("$bunfs")) return ["./scan/worker.ts", "./src/scan/worker.ts"];
  return [new URL("./worker.ts", import.meta.url).href];
}

export function defaultJobs(): number {
  return Math.max(1, Math.min(cpus().length, 8));
}

export interface PoolOptions {
  jobs?: number;
  /** Force workers even for small jobs (tests). */
  forceWorkers?: boolean;
}

export interface PoolStats {
  workers: number;
}

export async function scanFiles(
  files: FileEntry[],
  setup: ScanSetup,
  opts: PoolOptions = {},
  stats: PoolStats = { workers: 0 },
): Promise<FileResult[]> {
  const jobs = opts.jobs ?? defaultJobs();
  const total = files.reduce((n, f) => n + f.size, 0);
  const results = new Array<FileResult | undefined>(files.length);
  const parallel = jobs > 1 && files.length > 1 && (opts.forceWorkers || total >= PARALLEL_MIN_BYTES);
  const leftover: number[] = [];
  if (parallel) {
    const order = files.map((_, i) => i).sort((a, b) => files[b]!.size - files[a]!.size);
    const batches: number[][] = [];
    let cur: number[] = [];
    let curBytes = 0;
    for (const i of order) {
      cur.push(i);
      curBytes += files[i]!.size;
      if (curBytes >= BATCH_BYTES || cur.length >= BATCH_FILES) {
        batches.push(cur);
        cur = [];
        curBytes = 0;
      }
    }
    if (cur.length) batches.push(cur);
    const n = Math.min(jobs, batches.length);
    await new Promise<void>((resolveAll) => {
      let live = n;
      let nextId = 0;
      const done = () => {
        if (--live === 0) resolveAll();
      };
      const specs = workerSpecifiers();
      const start = (candidate: number) => {
        let worker: Worker;
        try {
          worker = new Worker(specs[candidate]!);
        } catch {
          done();
          return;
        }
        let inflight: number[] | null = null;
        let ready = false;
        let finished = false;
        const finish = () => {
          if (finished) return;
          finished = true;
          if (inflight) leftover.push(...inflight);
          inflight = null;
          worker.terminate();
          done();
        };
        const next = () => {
          const batch = batches.shift();
          if (!batch) return finish();
          inflight = batch;
          worker.postMessage({ type: "scan", id: nextId++, files: batch.map((i) => files[i]) });
        };
        worker.onmessage = (e: MessageEvent) => {
          const m = e.data as { type: string; results?: FileResult[] };
          if (m.type === "ready") {
            ready = true;
            stats.workers++;
            return next();
          }
          if (m.type === "done" && inflight) {
            m.results!.forEach((r, k) => {
              results[inflight![k]!] = r;
            });
            inflight = null;
            return next();
          }
          finish();
        };
        worker.onerror = () => {
          // The module was not found where we looked: try the next place before giving up.
          if (!ready && !finished && candidate + 1 < specs.length) {
            finished = true;
            worker.terminate();
            start(candidate + 1);
            return;
          }
          finish();
        };
        worker.postMessage({ type: "init", setup });
      };
      for (let w = 0; w < n; w++) start(0);
    });
    // Batches never picked up (every worker failed) are scanned here.
    for (const b of batches) leftover.push(...b);
  } else {
    for (let i = 0; i < files.length; i++) leftover.push(i);
  }
  if (leftover.length) {
    const scan = makeTextScanner(setup);
    for (const i of leftover.sort((a, b) => a - b)) results[i] = await scanFile(files[i]!, scan);
  }
  return results as FileResult[];
}

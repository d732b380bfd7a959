/**
 * Scanning many files across cores: the main thread and jobs - 1 workers, each with its own
 * compiled scanner, take batches from one queue (biggest first). A very large file is cut at line
 * starts into ranges scanned side by side, each with context on both sides, and the line numbers
 * are joined afterwards. Small jobs stay in-process, where starting workers would cost more than it
 * saves. A worker that fails hands its work back (the main thread scans it).
 */

import {
  isBinary,
  joinRanges,
  planRanges,
  type RangeResult,
  type RangeTask,
  scanFile,
  scanRange,
} from "./file.ts";
import { makeTextScanner, type ScanSetup } from "./setup.ts";
import type { FileResult } from "./types.ts";
import type { FileEntry } from "./walk.ts";
import type { TextScanner } from "./window.ts";
import { defaultJobs, PARALLEL_MIN_BYTES, ScanWorker, type WorkerReply } from "./workers.ts";

export { defaultJobs, PARALLEL_MIN_BYTES, workerSpecifiers } from "./workers.ts";

/** Files above this size are cut into ranges scanned in parallel. */
export const SPLIT_MIN_BYTES = 32 * 1024 * 1024;
const BATCH_BYTES = 1024 * 1024;
const BATCH_FILES = 64;
/** Batches a worker holds: its next one is there when it finishes, even while the main thread scans. */
const WORKER_DEPTH = 2;

export interface PoolOptions {
  /** Threads that scan: the main thread and jobs - 1 workers. */
  jobs?: number;
  /** Workers started early (before the scan was set up); used, or terminated when not needed. */
  workers?: ScanWorker[];
  /**
   * Parallel even for small jobs, and the main thread takes work only once every worker is ready,
   * so that the workers surely scan some (tests).
   */
  forceWorkers?: boolean;
  /** Size above which a file is split into ranges (tests use a small one). */
  splitMinBytes?: number;
}

export interface PoolStats {
  /** Threads put on the scan: the main thread and its workers, less those that failed (0: in-process only). */
  workers: number;
}

/** One unit of work: a whole file, or a range of one. */
export type WorkItem = { kind: "file"; file: FileEntry } | { kind: "range"; range: RangeTask };
export type WorkResult = { kind: "file"; result: FileResult } | { kind: "range"; result: RangeResult };

export async function runItem(item: WorkItem, scan: TextScanner): Promise<WorkResult> {
  if (item.kind === "file") return { kind: "file", result: await scanFile(item.file, scan) };
  return { kind: "range", result: await scanRange(item.range, scan) };
}

async function sniffBinary(abs: string): Promise<boolean> {
  try {
    return isBinary(await Bun.file(abs).slice(0, 8000).bytes());
  } catch {
    return false;
  }
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
  const parallel = jobs > 1 && (opts.forceWorkers || total >= PARALLEL_MIN_BYTES);

  // Work items, with what each one fills in.
  const items: WorkItem[] = [];
  const owner: { file: number; part: number }[] = [];
  const ranges = new Map<number, RangeResult[]>();
  const splitMin = opts.splitMinBytes ?? SPLIT_MIN_BYTES;
  for (let i = 0; i < files.length; i++) {
    const f = files[i]!;
    if (parallel && f.size > splitMin && !(await sniffBinary(f.abs))) {
      const target = Math.max(Math.ceil(splitMin / 2), Math.ceil(f.size / (jobs * 4)));
      const parts = await planRanges(f, target);
      if (parts.length > 1) {
        ranges.set(i, new Array(parts.length));
        parts.forEach((range, part) => {
          items.push({ kind: "range", range });
          owner.push({ file: i, part });
        });
        continue;
      }
    }
    items.push({ kind: "file", file: f });
    owner.push({ file: i, part: 0 });
  }
  const sizeOf = (k: number) => {
    const it = items[k]!;
    return it.kind === "file" ? it.file.size : it.range.end - it.range.start;
  };
  const store = (k: number, r: WorkResult) => {
    const o = owner[k]!;
    if (r.kind === "file") results[o.file] = r.result;
    else ranges.get(o.file)![o.part] = r.result;
  };

  const spare = opts.workers ?? [];
  const batches = parallel && items.length > 1 ? makeBatches(items.length, sizeOf) : [];
  // Workers beside the main thread; none when everything fits one batch.
  const want = Math.min(jobs - 1, batches.length - 1);
  for (const w of spare.slice(Math.max(0, want))) w.terminate();
  if (want < 1) {
    const scan = makeTextScanner(setup);
    for (let k = 0; k < items.length; k++) store(k, await runItem(items[k]!, scan));
  } else {
    const workers = spare.slice(0, want);
    while (workers.length < want) workers.push(new ScanWorker());
    await scanShared(workers, batches, items, setup, store, stats, !!opts.forceWorkers);
  }
  for (const [i, parts] of ranges) results[i] = joinRanges(files[i]!.display, files[i]!.size, parts);
  return results as FileResult[];
}

/** Item indexes, biggest first, in batches of about BATCH_BYTES (at most BATCH_FILES items). */
function makeBatches(count: number, sizeOf: (k: number) => number): number[][] {
  const order = Array.from({ length: count }, (_, k) => k).sort((a, b) => sizeOf(b) - sizeOf(a));
  const batches: number[][] = [];
  let cur: number[] = [];
  let curBytes = 0;
  for (const k of order) {
    cur.push(k);
    curBytes += sizeOf(k);
    if (curBytes >= BATCH_BYTES || cur.length >= BATCH_FILES) {
      batches.push(cur);
      cur = [];
      curBytes = 0;
    }
  }
  if (cur.length) batches.push(cur);
  return batches;
}

/**
 * The main thread and the workers take batches from one queue until it is empty. A worker that
 * fails puts its batches back in the queue; the main thread scans them (or another worker).
 */
async function scanShared(
  workers: ScanWorker[],
  queue: number[][],
  items: WorkItem[],
  setup: ScanSetup,
  store: (k: number, r: WorkResult) => void,
  stats: PoolStats,
  waitForWorkers: boolean,
): Promise<void> {
  let nextId = 0;
  stats.workers += workers.length + 1;
  let live = workers.length;
  let starting = workers.length;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const lanes = workers.map((worker) => {
    const inflight = new Map<number, number[]>();
    let over = false;
    let ready = false;
    const stop = (failed: boolean) => {
      if (over) return;
      over = true;
      if (!ready) starting--;
      if (failed) stats.workers--;
      // Unfinished batches go back to the queue (a failed worker, or one not ready when the rest is done).
      for (const b of inflight.values()) queue.push(b);
      inflight.clear();
      worker.terminate();
      live--;
      poke();
    };
    const feed = () => {
      while (inflight.size < WORKER_DEPTH) {
        const batch = queue.shift();
        if (!batch) break;
        const id = nextId++;
        inflight.set(id, batch);
        worker.post({ type: "scan", id, items: batch.map((k) => items[k]) });
      }
      if (inflight.size === 0) stop(false);
    };
    worker.listen({
      message(m: WorkerReply) {
        if (over) return;
        if (m.type === "ready") {
          ready = true;
          starting--;
          return poke();
        }
        const batch = m.type === "done" ? inflight.get(m.id!) : undefined;
        if (!batch) return stop(true);
        inflight.delete(m.id!);
        (m.results as WorkResult[]).forEach((r, j) => {
          store(batch[j]!, r);
        });
        feed();
      },
      failed: () => stop(true),
    });
    // Work goes with the setup, not after "ready": the main thread may be busy scanning when it
    // comes, and the worker would wait for nothing.
    worker.post({ type: "init", setup });
    feed();
    // Out of work before the worker got ready: the main thread takes its batches back.
    return { idle: () => !ready && stop(false) };
  });
  const sleep = () =>
    new Promise<void>((r) => {
      wake = r;
    });
  if (waitForWorkers) while (starting > 0) await sleep();
  const scan = makeTextScanner(setup);
  for (;;) {
    const batch = queue.shift();
    if (batch) {
      for (const k of batch) store(k, await runItem(items[k]!, scan));
      // Let the workers' messages in (results, requests for more) before the next batch.
      await new Promise((r) => setImmediate(r));
      continue;
    }
    for (const l of lanes) l.idle();
    if (queue.length) continue;
    if (live === 0) break;
    await sleep();
  }
}

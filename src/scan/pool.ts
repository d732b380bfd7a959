/**
 * Scanning many files across cores: a pool of workers, each with its own compiled scanner, fed
 * from one queue (biggest first). A very large file is cut at line starts into ranges that workers
 * scan side by side, each with context on both sides, and the line numbers are joined afterwards.
 * Small jobs stay in-process, where starting workers would cost more than it saves. A worker that
 * fails hands its work back to the main thread.
 */
import { cpus } from "node:os";
import { makeTextScanner, type ScanSetup } from "./engine.ts";
import {
  isBinary,
  joinRanges,
  planRanges,
  type RangeResult,
  type RangeTask,
  scanFile,
  scanRange,
} from "./file.ts";
import type { FileResult } from "./types.ts";
import type { FileEntry } from "./walk.ts";
import type { TextScanner } from "./window.ts";

/** Below this many bytes in total, scanning stays on the main thread. */
export const PARALLEL_MIN_BYTES = 4 * 1024 * 1024;
/** Files above this size are cut into ranges scanned in parallel. */
export const SPLIT_MIN_BYTES = 32 * 1024 * 1024;
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
  /** Size above which a file is split into ranges (tests use a small one). */
  splitMinBytes?: number;
}

export interface PoolStats {
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

  const leftover: number[] = [];
  if (parallel && items.length > 1) {
    const order = items.map((_, k) => k).sort((a, b) => sizeOf(b) - sizeOf(a));
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
          worker.postMessage({ type: "scan", id: nextId++, items: batch.map((k) => items[k]) });
        };
        worker.onmessage = (e: MessageEvent) => {
          const m = e.data as { type: string; results?: WorkResult[] };
          if (m.type === "ready") {
            ready = true;
            stats.workers++;
            return next();
          }
          if (m.type === "done" && inflight) {
            m.results!.forEach((r, j) => {
              store(inflight![j]!, r);
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
    for (let k = 0; k < items.length; k++) leftover.push(k);
  }
  if (leftover.length) {
    const scan = makeTextScanner(setup);
    for (const k of leftover.sort((a, b) => a - b)) store(k, await runItem(items[k]!, scan));
  }
  for (const [i, parts] of ranges) results[i] = joinRanges(files[i]!.display, files[i]!.size, parts);
  return results as FileResult[];
}

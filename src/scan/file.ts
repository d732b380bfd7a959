/**
 * Reading one input (a file or stdin) into the window scanner: binary inputs are skipped, large
 * files are streamed so that memory stays bounded whatever their size.
 */
import { closeSync, openSync, readSync } from "node:fs";
import type { FileResult, ScanFinding } from "./types.ts";
import { DEFAULT_CHUNK, type TextScanner, WindowScanner } from "./window.ts";

/** Files up to this size are read whole; larger ones are streamed. */
export const STREAM_THRESHOLD = 8 * 1024 * 1024;

let readBuffer = new Uint8Array(256 * 1024);

/**
 * A file's bytes, in a buffer this thread reuses from one read to the next: valid until the next
 * call (the text decoded from it is a copy). A fresh buffer per file (readFileSync) costs its pages
 * each time: 100 MB of files read and decoded in ~35 instead of ~50 ms.
 */
function readReused(path: string): Uint8Array {
  const fd = openSync(path, "r");
  try {
    let n = 0;
    for (;;) {
      if (n === readBuffer.length) {
        const grown = new Uint8Array(readBuffer.length * 2);
        grown.set(readBuffer);
        readBuffer = grown;
      }
      const got = readSync(fd, readBuffer, n, readBuffer.length - n, null);
      if (got === 0) return readBuffer.subarray(0, n);
      n += got;
    }
  } finally {
    closeSync(fd);
  }
}
const SNIFF = 8000;
/** One decoder for whole files (a non-streaming decode keeps no state between calls). */
const utf8 = new TextDecoder("utf-8");

/** git's heuristic: a NUL byte in the first 8000 bytes means binary. */
export function isBinary(bytes: Uint8Array): boolean {
  // indexOf is a native byte search: a JavaScript loop over 8000 bytes of each of a few hundred
  // files cost 1-2 ms of a cold scan (it never runs long enough to be compiled).
  return (bytes.length > SNIFF ? bytes.subarray(0, SNIFF) : bytes).indexOf(0) !== -1;
}

export interface ScanInputOptions {
  chunk?: number;
  overlap?: number;
}

/** Scan a byte stream (a large file, stdin). */
export async function scanStream(
  stream: ReadableStream<Uint8Array>,
  display: string,
  scan: TextScanner,
  opts: ScanInputOptions = {},
): Promise<FileResult> {
  const ws = new WindowScanner(scan, display, opts.chunk ?? DEFAULT_CHUNK, opts.overlap);
  const decoder = new TextDecoder("utf-8");
  let bytes = 0;
  let sniffed = 0;
  for await (const chunk of stream) {
    if (sniffed < SNIFF) {
      if (isBinary(chunk.subarray(0, SNIFF - sniffed))) {
        await stream.cancel().catch(() => {});
        return { file: display, bytes: bytes + chunk.length, skipped: "binary", findings: [] };
      }
      sniffed += chunk.length;
    }
    bytes += chunk.length;
    ws.push(decoder.decode(chunk, { stream: true }));
  }
  ws.push(decoder.decode());
  return { file: display, bytes, skipped: null, findings: ws.finish() };
}

/** Scan one file by path. Never throws: an unreadable file comes back with `error: true`. */
export async function scanFile(
  entry: { abs: string; display: string; size: number },
  scan: TextScanner,
  opts: ScanInputOptions = {},
): Promise<FileResult> {
  try {
    if (entry.size > STREAM_THRESHOLD)
      return await scanStream(Bun.file(entry.abs).stream(), entry.display, scan, opts);
    // A synchronous read: ~4 ms for the 250 files of a repository where `await Bun.file().bytes()`
    // took 11-15 ms (a round trip through the thread pool and the event loop per file). The scan of
    // each file is synchronous anyway, and a file here is at most STREAM_THRESHOLD bytes.
    const bytes = readReused(entry.abs);
    if (isBinary(bytes)) return { file: entry.display, bytes: bytes.length, skipped: "binary", findings: [] };
    const ws = new WindowScanner(scan, entry.display, opts.chunk ?? DEFAULT_CHUNK, opts.overlap);
    ws.push(utf8.decode(bytes));
    return { file: entry.display, bytes: bytes.length, skipped: null, findings: ws.finish() };
  } catch (e) {
    return {
      file: entry.display,
      bytes: 0,
      skipped: `cannot read: ${(e as Error).message}`,
      error: true,
      findings: [],
    };
  }
}

/** A byte range of one large file, starting at a line start, scanned by itself (in parallel). */
export interface RangeTask {
  abs: string;
  display: string;
  size: number;
  start: number;
  end: number;
}

export interface RangeResult {
  /** Findings with lines counted from the range's first line (1). */
  findings: ScanFinding[];
  /** Newlines inside [start, end): the next range's first line is this many lines further. */
  newlines: number;
  bytes: number;
  error?: string;
}

/** Context read on each side of a range, so that matches across its edges are seen whole. */
export const RANGE_CONTEXT = 64 * 1024;

function countNewlines(b: Uint8Array): number {
  let n = 0;
  let i = b.indexOf(10);
  while (i !== -1) {
    n++;
    i = b.indexOf(10, i + 1);
  }
  return n;
}

export async function scanRange(
  task: RangeTask,
  scan: TextScanner,
  opts: ScanInputOptions = {},
): Promise<RangeResult> {
  try {
    const file = Bun.file(task.abs);
    const leadFrom = Math.max(0, task.start - RANGE_CONTEXT);
    const lead = new TextDecoder("utf-8").decode(await file.slice(leadFrom, task.start).bytes());
    const ws = new WindowScanner(scan, task.display, opts.chunk ?? DEFAULT_CHUNK, opts.overlap, lead.length);
    ws.push(lead);
    const decoder = new TextDecoder("utf-8");
    let newlines = 0;
    for await (const chunk of file.slice(task.start, task.end).stream()) {
      newlines += countNewlines(chunk);
      ws.push(decoder.decode(chunk, { stream: true }));
    }
    ws.push(decoder.decode());
    ws.limitHere();
    const trailTo = Math.min(task.size, task.end + RANGE_CONTEXT);
    if (trailTo > task.end)
      ws.push(new TextDecoder("utf-8").decode(await file.slice(task.end, trailTo).bytes()));
    return { findings: ws.finish(), newlines, bytes: task.end - task.start };
  } catch (e) {
    return { findings: [], newlines: 0, bytes: 0, error: `cannot read: ${(e as Error).message}` };
  }
}

/**
 * Cut a file into ranges of about `target` bytes, each starting right after a "\n" (so every range
 * begins a line). A stretch with no newline for 1 MiB stays in one range.
 */
export async function planRanges(
  entry: { abs: string; display: string; size: number },
  target: number,
): Promise<RangeTask[]> {
  const file = Bun.file(entry.abs);
  const cuts = [0];
  for (let pos = target; pos < entry.size; pos += target) {
    const last = cuts[cuts.length - 1]!;
    if (pos <= last) continue;
    const probe = await file.slice(pos, Math.min(entry.size, pos + 1024 * 1024)).bytes();
    const nl = probe.indexOf(10);
    if (nl === -1) continue;
    const cut = pos + nl + 1;
    if (cut < entry.size) cuts.push(cut);
  }
  return cuts.map((start, i) => ({ ...entry, start, end: cuts[i + 1] ?? entry.size }));
}

/** Join the results of a file's ranges (in order) into one file result. */
export function joinRanges(display: string, size: number, parts: RangeResult[]): FileResult {
  const findings: ScanFinding[] = [];
  let before = 0;
  const errors = parts.filter((p) => p.error).map((p) => p.error!);
  for (const p of parts) {
    for (const f of p.findings) findings.push({ ...f, line: f.line + before, end_line: f.end_line + before });
    before += p.newlines;
  }
  if (errors.length) return { file: display, bytes: 0, skipped: errors[0]!, error: true, findings: [] };
  return { file: display, bytes: size, skipped: null, findings };
}

/**
 * Reading one input (a file or stdin) into the window scanner: binary inputs are skipped, large
 * files are streamed so that memory stays bounded whatever their size.
 */
import type { FileResult } from "./types.ts";
import { DEFAULT_CHUNK, type TextScanner, WindowScanner } from "./window.ts";

/** Files up to this size are read whole; larger ones are streamed. */
export const STREAM_THRESHOLD = 8 * 1024 * 1024;
const SNIFF = 8000;

/** git's heuristic: a NUL byte in the first 8000 bytes means binary. */
export function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, SNIFF);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
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
    const file = Bun.file(entry.abs);
    if (entry.size > STREAM_THRESHOLD) return await scanStream(file.stream(), entry.display, scan, opts);
    const bytes = await file.bytes();
    if (isBinary(bytes)) return { file: entry.display, bytes: bytes.length, skipped: "binary", findings: [] };
    const ws = new WindowScanner(scan, entry.display, opts.chunk ?? DEFAULT_CHUNK, opts.overlap);
    ws.push(new TextDecoder("utf-8").decode(bytes));
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

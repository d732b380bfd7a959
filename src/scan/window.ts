/**
 * Scanning text of any length in bounded memory. Text arrives in pieces; it is scanned in windows
 * of `chunk` characters, each with `overlap` characters of context on both sides. A finding is kept
 * only by the window whose own region holds its start, so a match that crosses a boundary is found
 * exactly once, as long as it is shorter than `overlap` (64 KiB by default).
 *
 * @example
 * const w = new WindowScanner(scanText, "big.log");
 * for await (const piece of pieces) w.push(piece);
 * const findings = w.finish();
 */
import { type Finding, findingVerdict } from "../core/types.ts";
import type { ScanFinding } from "./types.ts";

/**
 * Scans one window. The strings of its findings must not be cut from the text (a substring keeps
 * all of it alive, and a large file would grow the heap without bound): the payload pipeline builds
 * previews with maskValue, and descriptions and `decoded` are the rules' and the encodings' names.
 */
export type TextScanner = (text: string, path: string) => Finding[];

export const DEFAULT_CHUNK = 4 * 1024 * 1024;
export const DEFAULT_OVERLAP = 64 * 1024;
/**
 * Characters of finished windows between two full collections. Left to itself the collector lets
 * finished windows (and the flattened buffers behind them) pile up: a 1 GiB file peaked at 300+ MB,
 * the more the less garbage the scan itself makes. Collecting after every 16 M characters (four
 * default windows) kept it at ~150 MB a thread for no measurable time.
 */
const COLLECT_EVERY = 16 * 1024 * 1024;

/** Stable, value-free id of a finding: rule, file and masked preview. */
export function fingerprintOf(rule: string, file: string, preview: string): string {
  return Bun.SHA256.hash(`${rule}\0${file}\0${preview}`, "hex").slice(0, 32);
}

/** Offsets of every "\n" in text[from, to). */
function newlines(text: string, from: number, to: number): number[] {
  const out: number[] = [];
  let i = text.indexOf("\n", from);
  while (i !== -1 && i < to) {
    out.push(i);
    i = text.indexOf("\n", i + 1);
  }
  return out;
}

/** Number of entries of the sorted array `a` that are < x. */
function countBelow(a: number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class WindowScanner {
  readonly findings: ScanFinding[] = [];
  /** Characters seen so far. */
  chars = 0;
  #buf = "";
  #bufStart = 0;
  #own = 0;
  /** Line number at `#own`, and the absolute offset where that line starts. */
  #line = 1;
  #sinceCollected = 0;
  #lineStart = 0;
  readonly #scan: TextScanner;
  readonly #file: string;
  readonly #chunk: number;
  readonly #overlap: number;
  /** Findings must start before this offset (trailing context of a range is not reported). */
  #limit = Number.POSITIVE_INFINITY;

  /**
   * `lead`: characters of leading context that come first and are not reported (a range of a file
   * scanned on its own: the context ends at a line start, so line 1 is the range's first line).
   */
  constructor(scan: TextScanner, file: string, chunk = DEFAULT_CHUNK, overlap = DEFAULT_OVERLAP, lead = 0) {
    if (chunk < 1 || overlap < 0) throw new RangeError("chunk must be >= 1 and overlap >= 0");
    this.#scan = scan;
    this.#file = file;
    this.#chunk = chunk;
    this.#overlap = overlap;
    this.#own = lead;
    this.#lineStart = lead;
  }

  /** From now on, text is trailing context only: nothing starting at or after this offset is reported. */
  limitHere(): void {
    this.#limit = this.chars;
  }

  push(piece: string): void {
    if (!piece) return;
    this.#buf += piece;
    this.chars += piece.length;
    while (this.#bufStart + this.#buf.length - this.#own >= this.#chunk + this.#overlap) {
      this.#window(this.#own + this.#chunk);
    }
  }

  finish(): ScanFinding[] {
    const end = this.#bufStart + this.#buf.length;
    if (end > this.#own || this.chars === 0) this.#window(end, true);
    this.#buf = "";
    return this.findings;
  }

  #window(ownEnd: number, last = false): void {
    const text = this.#buf.slice(0, ownEnd + this.#overlap - this.#bufStart);
    const rel = this.#own - this.#bufStart;
    const relEnd = ownEnd - this.#bufStart;
    const stop = Math.min(Math.max(relEnd, 1), this.#limit - this.#bufStart);
    const found = this.#scan(text, this.#file).filter((f) => f.start >= rel && f.start < stop);
    if (found.length > 0) {
      let maxEnd = 0;
      for (const f of found) if (f.end > maxEnd) maxEnd = f.end;
      const nl = newlines(text, rel, maxEnd);
      const pos = (o: number): [number, number] => {
        const n = countBelow(nl, o);
        if (n === 0) return [this.#line, this.#bufStart + o - this.#lineStart + 1];
        return [this.#line + n, o - nl[n - 1]!];
      };
      for (const f of found.sort((a, b) => a.start - b.start)) {
        const [line, column] = pos(f.start);
        const [end_line, end_column] = pos(Math.max(f.end, f.start));
        this.findings.push({
          file: this.#file,
          line,
          column,
          end_line,
          end_column,
          // Copied, not cut from the window (a substring would keep all of it alive).
          ...findingVerdict(f),
          fingerprint: fingerprintOf(f.rule, this.#file, f.preview),
          content_hash: f.content_hash,
        });
      }
    }
    if (last) return;
    this.#sinceCollected += text.length;
    if (this.#sinceCollected >= COLLECT_EVERY) {
      this.#sinceCollected = 0;
      Bun.gc(true);
    }
    // Advance the line counter over the own region, then drop what no later window needs.
    const nl = newlines(text, rel, relEnd);
    if (nl.length > 0) {
      this.#line += nl.length;
      this.#lineStart = this.#bufStart + nl[nl.length - 1]! + 1;
    }
    this.#own = ownEnd;
    const keepFrom = Math.max(this.#bufStart, ownEnd - this.#overlap);
    this.#buf = this.#buf.slice(keepFrom - this.#bufStart);
    this.#bufStart = keepFrom;
  }
}

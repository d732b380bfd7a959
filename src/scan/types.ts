/**
 * What `sluice scan` reports. A finding here is the pipeline's Finding placed in a file (line and
 * column, 1-based, UTF-16 columns, end exclusive) and stripped of hashes that could be brute-forced:
 * `content_hash` stays in memory for the baseline and is never printed.
 */
import type { Action, FindingVerdict } from "../core/types.ts";

export interface ScanFinding extends FindingVerdict {
  file: string;
  line: number;
  column: number;
  end_line: number;
  end_column: number;
  /** Stable id of the finding for CI tools: sha256 of rule, file and masked preview (no raw value). */
  fingerprint: string;
  /** sha256 of the matched value, in memory only (baseline matching). Never serialised. */
  content_hash: string;
}

export interface FileResult {
  file: string;
  bytes: number;
  /** Why the file was not scanned ("binary", or an error message). */
  skipped: string | null;
  error?: boolean;
  findings: ScanFinding[];
}

/** Exit codes of `sluice scan`: the strongest action after allowlists and baseline. */
export const EXIT = { clean: 0, block: 1, alert: 2, log: 3, error: 4 } as const;

export function exitCodeFor(action: Action | null): number {
  switch (action) {
    case "block":
    case "redact":
      return EXIT.block;
    case "alert":
      return EXIT.alert;
    case "log":
      return EXIT.log;
    default:
      return EXIT.clean;
  }
}

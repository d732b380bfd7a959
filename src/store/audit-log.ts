/**
 * The JSONL audit trail under `--log-dir` (default `{config_dir}/audit`): one line per proxied
 * request, never a body, never a raw value, never `api_key_hash` (SPEC §1 Scanning behaviour 7).
 * Directory 0700, files 0600, rotated at `logging.max_file_bytes` keeping `logging.max_files`.
 */
import { appendFileSync, chmodSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { RequestEvent } from "../core/bus.ts";
import { maskPathCredentials, rotate, sanitizeLine } from "../core/log.ts";

export const AUDIT_FILE = "audit.jsonl";

/** Keys an audit line may carry; anything else an event holds is left out. */
export const AUDIT_KEYS = [
  "ts",
  "request_id",
  "provider",
  "client",
  "model",
  "method",
  "path",
  "action",
  "finding_count",
  "bytes",
  "duration_ms",
  "upstream_status",
  "session_id",
  "account_id",
  "mode",
  "error",
  "login",
  "unscanned",
] as const;

/** A URL path as it may be stored or shown: credentials in the query string are masked. */
export function maskPath(path: string): string {
  return sanitizeLine(maskPathCredentials(path));
}

/** One JSONL line for a request; `path` is its masked path when the caller has it already. */
export function auditLine(ev: RequestEvent, path = maskPath(String(ev.path ?? ""))): string {
  const out: Record<string, unknown> = {};
  for (const k of AUDIT_KEYS) out[k] = ev[k] ?? null;
  out.path = path;
  return sanitizeLine(JSON.stringify(out));
}

export class AuditLog {
  readonly file: string;
  #dirReady = false;
  constructor(
    readonly dir: string,
    readonly limits: () => { maxFileBytes: number; maxFiles: number },
  ) {
    this.file = join(dir, AUDIT_FILE);
  }

  /** Append lines; rotation happens before a write that would pass the size limit. Throws on I/O errors. */
  append(lines: string[]): void {
    if (lines.length === 0) return;
    if (!this.#dirReady) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      chmodSync(this.dir, 0o700);
      this.#dirReady = true;
    }
    const { maxFileBytes, maxFiles } = this.limits();
    const text = `${lines.join("\n")}\n`;
    let size = 0;
    try {
      size = statSync(this.file).size;
    } catch {
      /* no file yet */
    }
    if (size > 0 && size + Buffer.byteLength(text) > maxFileBytes)
      rotate(this.file, Math.max(1, maxFiles - 1));
    appendFileSync(this.file, text, { mode: 0o600 });
    chmodSync(this.file, 0o600);
  }
}

/**
 * The JSONL audit trail under `--log-dir` (default `{config_dir}/audit`): one line per proxied
 * request, never a body, never a raw value, never `api_key_hash`.
 * Directory 0700, files 0600, rotated at `logging.max_file_bytes` keeping `logging.max_files`.
 */

import { appendFileSync, chmodSync, mkdirSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import type { RequestEvent } from "../core/bus.ts";
import type { Logger } from "../core/log.ts";
import { maskPathCredentials, rotate, sanitizeLine } from "../core/log.ts";
import type { AuditStats } from "./records.ts";

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
  "rules",
  "action_source",
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

export interface AuditLogOptions {
  /** Rotation limits, read before every append (reloads apply). */
  limits: () => { maxFileBytes: number; maxFiles: number };
  log: Logger;
  /** Lines kept while the file cannot be written; past this the oldest are dropped (and counted). */
  maxPending: number;
}

/** While appends keep failing, the application log says so at most this often. */
const FAILURE_LOG_EVERY_MS = 60_000;

/**
 * The audit file and the lines on their way to it. An append that fails keeps its lines for the
 * next try (bounded by `maxPending`) and is never silent: the first failure of a run is logged at
 * once, then at most once a minute while it lasts, and the recovery is logged with what was lost;
 * `stats` counts it all. A failed append leaves no partial line behind (the file is cut back).
 */
export class AuditLog {
  readonly file: string;
  readonly stats: AuditStats = {
    written: 0,
    pending: 0,
    dropped: 0,
    errors: 0,
    last_error: null,
    failing_since: null,
  };
  #pending: string[] = [];
  #dirReady = false;
  #lastFailureLog = 0;
  /** Lines dropped since the current run of failures began (said when it ends). */
  #droppedInRun = 0;

  constructor(
    readonly dir: string,
    readonly opts: AuditLogOptions,
  ) {
    this.file = join(dir, AUDIT_FILE);
  }

  /** Queue one line for the next `flush`. */
  add(line: string): void {
    this.#pending.push(line);
    if (this.#pending.length > this.opts.maxPending) this.#drop(this.#pending.length - this.opts.maxPending);
    this.stats.pending = this.#pending.length;
  }

  /** Append every pending line. False when the append failed: the lines stay pending. Never throws. */
  flush(): boolean {
    if (this.#pending.length === 0) return true;
    try {
      this.#append(this.#pending);
    } catch (e) {
      this.#failed(e as NodeJS.ErrnoException);
      return false;
    }
    this.stats.written += this.#pending.length;
    this.#pending = [];
    this.stats.pending = 0;
    if (this.stats.failing_since) this.#recovered();
    return true;
  }

  /** The last flush, at shutdown: what cannot be written is dropped, counted and said. Returns that count. */
  close(): number {
    if (this.flush()) return 0;
    const lost = this.#pending.length;
    this.#drop(lost);
    this.stats.pending = 0;
    this.opts.log.error(
      `audit log: ${lost} line(s) could not be written to ${this.file} before shutdown and are lost (${this.stats.last_error}); ${this.stats.dropped} lost in all`,
    );
    return lost;
  }

  #drop(n: number): void {
    this.#pending.splice(0, n);
    this.stats.dropped += n;
    this.#droppedInRun += n;
  }

  #failed(e: NodeJS.ErrnoException): void {
    this.stats.errors++;
    this.stats.last_error = e.code && !e.message.startsWith(e.code) ? `${e.code}: ${e.message}` : e.message;
    const now = Date.now();
    const first = this.stats.failing_since === null;
    if (first) this.stats.failing_since = new Date(now).toISOString();
    if (first || now - this.#lastFailureLog >= FAILURE_LOG_EVERY_MS) {
      this.#lastFailureLog = now;
      this.opts.log.error(
        `audit log: cannot write to ${this.file} (${this.stats.last_error}); ${this.#pending.length} line(s) pending (kept up to ${this.opts.maxPending}), ${this.stats.dropped} lost so far`,
      );
    }
  }

  #recovered(): void {
    const since = Date.parse(this.stats.failing_since!);
    this.opts.log.warn(
      `audit log: writing to ${this.file} again after ${Math.round((Date.now() - since) / 1000)} s of failures; ${this.#droppedInRun} line(s) were lost meanwhile`,
    );
    this.stats.failing_since = null;
    this.#droppedInRun = 0;
    this.#lastFailureLog = 0;
  }

  /** Append lines; rotation happens before a write that would pass the size limit. Throws on I/O errors. */
  #append(lines: string[]): void {
    if (!this.#dirReady) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      chmodSync(this.dir, 0o700);
      this.#dirReady = true;
    }
    const { maxFileBytes, maxFiles } = this.opts.limits();
    const text = `${lines.join("\n")}\n`;
    let size = 0;
    try {
      size = statSync(this.file).size;
    } catch {
      /* no file yet */
    }
    if (size > 0 && size + Buffer.byteLength(text) > maxFileBytes) {
      rotate(this.file, Math.max(1, maxFiles - 1));
      size = 0;
    }
    try {
      appendFileSync(this.file, text, { mode: 0o600 });
    } catch (e) {
      // A full disk can take part of the text: cut the file back so the retry adds whole lines only.
      try {
        if (statSync(this.file).size > size) truncateSync(this.file, size);
      } catch {
        /* nothing was written, or the file is not ours to cut */
      }
      throw e;
    }
    chmodSync(this.file, 0o600);
  }
}

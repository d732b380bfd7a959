/**
 * The application log: levelled, text or JSON lines, to stderr and optionally a file, with a ring
 * buffer of recent lines for `/api/v1/logs/tail`. Every line passes `sanitizeLine` first.
 */
import { appendFileSync, chmodSync, mkdirSync, renameSync, statSync } from "node:fs";
import { dirname } from "node:path";
import pc from "picocolors";

export const LEVELS = ["debug", "info", "warning", "error"] as const;
export type Level = (typeof LEVELS)[number];
const RANK: Record<Level, number> = { debug: 0, info: 1, warning: 2, error: 3 };

/** Defence in depth: mask anything in a log line that looks like a credential. */
export function sanitizeLine(line: string): string {
  return line
    .replace(
      /\b(sk-ant-|sk-|AKIA|ASIA|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abposr]-|hf_|npm_|pypi-|AIza)[A-Za-z0-9_-]{6,}/g,
      (m) => `${m.slice(0, 4)}****`,
    )
    .replace(/\b[A-Za-z0-9+/_-]{40,}={0,2}/g, (m) => (/^[0-9a-f]{64}$/.test(m) ? m : `${m.slice(0, 4)}****`))
    .replace(/(\/\/[^:/\s]+:)[^@/\s]+@/g, "$1****@")
    .replace(/(password|passwd|secret|token|api[_-]?key)(["']?\s*[:=]\s*["']?)[^\s"',}]+/gi, "$1$2****");
}

/** Query parameters whose values are credentials (Gemini's `?key=`, signed URLs, tokens). */
const SECRET_QUERY_PARAM =
  /([?&](?:key|api[_-]?key|apikey|access[_-]?token|token|auth|authorization|signature|sig|secret|password)=)[^&#]*/gi;

/**
 * A URL path safe to log, store or show: credential-like query values become `****`, everything
 * else is left exactly as it was. The request itself is always forwarded with the original query.
 */
export function maskPathCredentials(path: string): string {
  return path.replace(SECRET_QUERY_PARAM, "$1****");
}

export interface LoggerOptions {
  level?: Level;
  format?: "text" | "json";
  color?: boolean;
  file?: string | null;
  maxFileBytes?: number;
  maxFiles?: number;
  /** Write to stderr (default true). */
  stderr?: boolean;
}

export class Logger {
  level: Level;
  format: "text" | "json";
  color: boolean;
  file: string | null;
  maxFileBytes: number;
  maxFiles: number;
  stderr: boolean;
  readonly recent: string[] = [];
  #listeners = new Set<(line: string) => void>();

  constructor(opts: LoggerOptions = {}) {
    this.level = opts.level ?? "warning";
    this.format = opts.format ?? "text";
    this.color = opts.color ?? !!process.stderr.isTTY;
    this.file = opts.file ?? null;
    this.maxFileBytes = opts.maxFileBytes ?? 10 * 1024 * 1024;
    this.maxFiles = opts.maxFiles ?? 5;
    this.stderr = opts.stderr ?? true;
    if (this.file) {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    }
  }

  /** Follow new lines (the dashboard's live log tail). Returns an unsubscribe function. */
  follow(fn: (line: string) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  debug(msg: string, fields?: Record<string, unknown>) {
    this.log("debug", msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>) {
    this.log("info", msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>) {
    this.log("warning", msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>) {
    this.log("error", msg, fields);
  }

  log(level: Level, msg: string, fields?: Record<string, unknown>) {
    if (RANK[level] < RANK[this.level]) return;
    const ts = new Date().toISOString();
    const plain =
      this.format === "json"
        ? JSON.stringify({ ts, level, msg, ...fields })
        : `${ts} ${level.toUpperCase().padEnd(7)} ${msg}${fields && Object.keys(fields).length ? ` ${formatFields(fields)}` : ""}`;
    const line = sanitizeLine(plain);
    this.recent.push(line);
    if (this.recent.length > 1000) this.recent.splice(0, this.recent.length - 1000);
    if (this.stderr)
      process.stderr.write(`${this.color && this.format === "text" ? colorize(level, line) : line}\n`);
    if (this.file) this.#writeFile(line);
    for (const fn of this.#listeners) {
      try {
        fn(line);
      } catch {
        /* a follower never breaks logging */
      }
    }
  }

  #writeFile(line: string) {
    const file = this.file!;
    try {
      try {
        if (statSync(file).size > this.maxFileBytes) rotate(file, this.maxFiles);
      } catch {
        /* no file yet */
      }
      appendFileSync(file, `${line}\n`, { mode: 0o600 });
      chmodSync(file, 0o600);
    } catch {
      /* logging must never break sluice */
    }
  }
}

/** file -> file.1 -> file.2 … keeping `keep` old files. */
export function rotate(file: string, keep: number) {
  for (let i = keep - 1; i >= 1; i--) {
    try {
      renameSync(`${file}.${i}`, `${file}.${i + 1}`);
    } catch {
      /* missing generation */
    }
  }
  try {
    renameSync(file, `${file}.1`);
  } catch {
    /* nothing to rotate */
  }
}

function formatFields(fields: Record<string, unknown>): string {
  return Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === "string" && !/\s/.test(v) ? v : JSON.stringify(v)}`)
    .join(" ");
}

function colorize(level: Level, line: string): string {
  switch (level) {
    case "debug":
      return pc.dim(line);
    case "info":
      return line;
    case "warning":
      return pc.yellow(line);
    case "error":
      return pc.red(line);
  }
}

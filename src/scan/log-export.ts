/**
 * `sluice logs export --sanitize`: the JSONL audit log and the application log in one JSON Lines
 * file that is safe to attach to a bug report. Nothing in it can give back a secret:
 * - hashes (`value_hash`, `api_key_hash`, `content_hash`, any `*_hash`, any long hex run) become
 *   tags keyed with a random salt that is thrown away, so equal values still look equal inside
 *   one export but cannot be brute-forced;
 * - credential-looking keys (authorization, cookie, password, token, secret, api key) are masked;
 * - fields that could hold content (value, match, body, text, content, snippet…) are removed;
 * - every string passes the application log's `sanitizeLine`, e-mail addresses are masked, and
 *   query parameters such as `key=` or `token=` lose their values.
 */
import { createHmac, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/schema.ts";
import { sanitizeLine } from "../core/log.ts";

export interface LogExportOptions {
  auditDir: string;
  appLogFile: string;
  version: string;
  /** The configuration in force: summarised in the header without allowlist entries or patterns. */
  config?: Config;
  /** Fixed salt for tests; random (and discarded) otherwise. */
  salt?: Buffer;
}

export interface LogExportResult {
  text: string;
  auditFiles: string[];
  appLogFiles: string[];
  auditEntries: number;
  appLogLines: number;
}

const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-goog-api-key|api[_-]?key|password|passwd|token|access_token|refresh_token|secret|client_secret|dashboard_password|csrf_token)$/i;
const CONTENT_KEY =
  /^(value|raw|raw_value|match|matched|matched_value|body|request_body|response_body|text|content|snippet|prompt|secret_value)$/i;
const HASH_KEY = /(^|_)hash$|^fingerprint$/i;

export class Sanitizer {
  readonly #salt: Buffer;
  constructor(salt: Buffer = randomBytes(32)) {
    this.#salt = salt;
  }

  /** A per-export tag for a hash-like value: equal inputs give equal tags within one export only. */
  tag(v: string): string {
    return `tag:${createHmac("sha256", this.#salt).update(v).digest("hex").slice(0, 12)}`;
  }

  string(s: string): string {
    return sanitizeLine(s)
      .replace(/\b(?:sha256:)?[0-9a-fA-F]{32,}\b/g, (m) => this.tag(m))
      .replace(/\bfp:[0-9a-zA-Z_-]{8,}/g, (m) => this.tag(m))
      .replace(
        /([?&;](?:key|api_key|apikey|token|access_token|auth|sig|signature|password|secret)=)[^&\s"';]+/gi,
        "$1****",
      )
      .replace(/\b([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9.-]+\.[A-Za-z]{2,})\b/g, "$1***@$2")
      .replace(/(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, "$1 ****");
  }

  value(v: unknown, key = ""): unknown {
    if (key && SECRET_KEY.test(key)) return v === null || v === undefined || v === "" ? v : "****";
    if (key && HASH_KEY.test(key)) return typeof v === "string" && v ? this.tag(v) : v;
    if (typeof v === "string") return this.string(v);
    if (Array.isArray(v)) return v.map((x) => this.value(x));
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (CONTENT_KEY.test(k)) continue;
        out[k] = this.value(x, k);
      }
      return out;
    }
    return v;
  }

  /** One log line: JSON lines are sanitized field by field, text lines as text. */
  line(line: string): { entry?: unknown; line?: string } {
    const t = line.trim();
    if (t.startsWith("{")) {
      try {
        return { entry: this.value(JSON.parse(t)) };
      } catch {
        /* not JSON after all */
      }
    }
    return { line: this.string(line) };
  }
}

/**
 * The configuration for a bug report: everything that shapes behaviour, nothing a user typed that
 * could be sensitive (allowlist entries, rule patterns, proprietary keywords, the dashboard password).
 */
export function configSummary(config: Config, s: Sanitizer): unknown {
  const c = structuredClone(config) as unknown as Record<string, unknown>;
  const dash = c.dashboard as Record<string, unknown>;
  dash.password_set = !!dash.password;
  delete dash.password;
  const allow = config.allowlists;
  c.allowlists = { secrets: allow.secrets.length, pii: allow.pii.length, paths: allow.paths.length };
  c.proprietary = {
    keywords: config.proprietary.keywords.length,
    file_patterns: config.proprietary.file_patterns.length,
  };
  c.custom_rules = config.custom_rules.map((r) => ({
    name: r.name,
    detector: r.detector,
    severity: r.severity,
    action: r.action,
  }));
  return s.value(c);
}

/** `base`, `base.1`, `base.2`… that exist, oldest first (rotation moves base to base.1). */
export function rotatedFiles(base: string): string[] {
  const dir = join(base, "..");
  const name = base.slice(dir.length + 1);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const gens = names
    .map((n) => (n === name ? 0 : n.startsWith(`${name}.`) ? Number(n.slice(name.length + 1)) : Number.NaN))
    .filter((g) => Number.isInteger(g) && g >= 0)
    .sort((a, b) => b - a);
  return gens.map((g) => (g === 0 ? base : `${base}.${g}`)).filter((f) => existsSync(f));
}

function readLines(file: string): string[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "");
  } catch {
    return [];
  }
}

export function exportLogs(opts: LogExportOptions): LogExportResult {
  const s = new Sanitizer(opts.salt);
  const out: string[] = [];
  const auditFiles = rotatedFiles(join(opts.auditDir, "audit.jsonl"));
  const appLogFiles = rotatedFiles(opts.appLogFile);
  out.push(
    JSON.stringify({
      type: "header",
      format: "sluice-log-export/v1",
      sluice_version: opts.version,
      created_at: new Date().toISOString(),
      platform: `${process.platform}-${process.arch}`,
      bun: Bun.version,
      sanitized: true,
      note: "Raw values, keys and credentials are removed; hashes are replaced by tags salted per export (salt discarded).",
      config: opts.config ? configSummary(opts.config, s) : null,
      audit_files: auditFiles.map((f) => f.slice(opts.auditDir.length + 1)),
      app_log_files: appLogFiles.map((f) => f.split(/[\\/]/).pop()),
    }),
  );
  /** Every line of `files`, sanitized, as records of `type`; returns how many. */
  const append = (type: "audit" | "app_log", files: string[]): number => {
    let n = 0;
    for (const f of files) {
      const source = f.split(/[\\/]/).pop();
      for (const l of readLines(f)) {
        const r = s.line(l);
        out.push(
          JSON.stringify({
            type,
            source,
            ...(r.entry !== undefined ? { entry: r.entry } : { line: r.line }),
          }),
        );
        n++;
      }
    }
    return n;
  };
  const auditEntries = append("audit", auditFiles);
  const appLogLines = append("app_log", appLogFiles);
  return { text: `${out.join("\n")}\n`, auditFiles, appLogFiles, auditEntries, appLogLines };
}

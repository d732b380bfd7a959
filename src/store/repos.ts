/**
 * Repositories over `sluice.db`, one per resource. Only this file and index.ts write SQL, so another
 * engine can stand behind the same interfaces later. Rows never hold a raw matched value.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { RuleDef } from "../core/types.ts";
import { AUDIT_KEYS } from "./audit-log.ts";

type Row = Record<string, unknown>;
type Params = SQLQueryBindings[];

const DAY_MS = 86_400_000;

/** Start of the UTC day `days - 1` days before today (days=1 → today). */
export function sinceDays(days: number, now = Date.now()): number {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return today - (days - 1) * DAY_MS;
}

// ---------------------------------------------------------------- findings

export interface FindingFilter {
  severity?: string;
  detector?: string;
  action?: string;
  finding_type?: string;
  provider?: string;
  client?: string;
  session_id?: string;
  account_id?: string;
  rule?: string;
  days?: number;
  /** Text search over finding_type, rule, path, preview-free columns. */
  q?: string;
  since_id?: number;
}

/** A finding's columns as the API lists them and exports write them, in order. */
export const FINDING_FIELDS = [
  "id",
  "ts",
  "last_seen",
  "severity",
  "detector",
  "finding_type",
  "rule",
  "action",
  "provider",
  "client",
  "path",
  "start",
  "end",
  "preview",
  "description",
  "decoded",
  "request_id",
  "transport",
  "session_id",
  "account_id",
  "device_id",
  "source_ip",
  "working_directory",
  "git_branch",
  "os_platform",
  "client_name",
  "model",
  "seen_count",
  "content_hash",
  "value_hash",
];
const FINDING_COLUMNS = FINDING_FIELDS.map((c) => (c === "end" ? '"end"' : c)).join(", ");

function findingWhere(f: FindingFilter, now = Date.now()): { sql: string; params: Params } {
  const { parts, params } = equalities(f, [
    "severity",
    "detector",
    "action",
    "finding_type",
    "provider",
    "client",
    "session_id",
    "account_id",
    "rule",
  ]);
  if (f.days !== undefined) {
    parts.push("ts_ms >= ?");
    params.push(sinceDays(f.days, now));
  }
  if (f.since_id !== undefined) {
    parts.push("id > ?");
    params.push(f.since_id);
  }
  if (f.q) {
    parts.push(
      "(finding_type LIKE ? ESCAPE '\\' OR rule LIKE ? ESCAPE '\\' OR path LIKE ? ESCAPE '\\' OR description LIKE ? ESCAPE '\\')",
    );
    const like = `%${likeEscape(f.q)}%`;
    params.push(like, like, like, like);
  }
  return { sql: parts.length ? `WHERE ${parts.join(" AND ")}` : "", params };
}

export class FindingsRepo {
  constructor(private db: Database) {}

  list(f: FindingFilter, limit: number, offset: number): { findings: Row[]; total: number } {
    const { sql, params } = findingWhere(f);
    const total = (this.db.query(`SELECT COUNT(*) AS n FROM findings ${sql}`).get(...params) as { n: number })
      .n;
    const findings = this.db
      .query(`SELECT ${FINDING_COLUMNS} FROM findings ${sql} ORDER BY ts_ms DESC, id DESC LIMIT ? OFFSET ?`)
      .all(...params, limit, offset) as Row[];
    return { findings, total };
  }

  /** Every matching finding, newest first, a page at a time (exports stream this). */
  iterate(f: FindingFilter, pageSize = 1000): Generator<Row> {
    return newestFirst(this.db, `SELECT ${FINDING_COLUMNS} FROM findings`, findingWhere(f), pageSize);
  }

  get(id: number): Row | null {
    return (
      (this.db.query(`SELECT ${FINDING_COLUMNS}, api_key_hash FROM findings WHERE id = ?`).get(id) as Row) ??
      null
    );
  }

  /** Rows written by other processes (the `sluice mcp` process) after `afterId`. */
  fromOtherProcesses(afterId: number, pid: number, limit = 200): Row[] {
    return this.db
      .query(
        `SELECT ${FINDING_COLUMNS}, origin_pid FROM findings WHERE id > ? AND origin_pid != ? ORDER BY id LIMIT ?`,
      )
      .all(afterId, pid, limit) as Row[];
  }

  maxId(): number {
    return (this.db.query("SELECT COALESCE(MAX(id), 0) AS n FROM findings").get() as { n: number }).n;
  }

  count(): number {
    return (this.db.query("SELECT COUNT(*) AS n FROM findings").get() as { n: number }).n;
  }

  /** Sum of the `finding_rollup` counters of one dimension, per key (since `sinceDay` when given). */
  #rollup(dim: string, sinceDay?: number): Row[] {
    const where = sinceDay === undefined ? "" : "AND day >= ?";
    const p: Params = sinceDay === undefined ? [dim] : [dim, sinceDay];
    return this.db
      .query(
        `SELECT key, SUM(n) AS n FROM finding_rollup WHERE dim = ? ${where} GROUP BY key HAVING SUM(n) > 0`,
      )
      .all(...p) as Row[];
  }

  #rollupByDay(dim: string, sinceDay: number): Row[] {
    return this.db
      .query(
        "SELECT day, key, SUM(n) AS n FROM finding_rollup WHERE dim = ? AND day >= ? GROUP BY day, key HAVING SUM(n) > 0",
      )
      .all(dim, sinceDay) as Row[];
  }

  #group(dim: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.#rollup(dim)) {
      const k = r.key === "" ? "unknown" : String(r.key);
      out[k] = (out[k] ?? 0) + (r.n as number);
    }
    return out;
  }

  /** `/api/v1/stats`: totals and breakdowns all-time, `daily_trend` over `days`. Reads the rollup counters. */
  stats(days: number, now = Date.now()) {
    const today = Math.floor(now / DAY_MS);
    const start = sinceDays(days, now) / DAY_MS;
    const perDay = new Map<number, number>();
    for (const r of this.#rollupByDay("all", start)) perDay.set(r.day as number, r.n as number);
    const daily_trend: { date: string; count: number }[] = [];
    for (let d = start; d <= today; d++)
      daily_trend.push({ date: isoDate(d * DAY_MS), count: perDay.get(d) ?? 0 });
    const total = this.#rollup("all")[0]?.n ?? 0;
    const last = this.db.query("SELECT ts FROM findings ORDER BY ts_ms DESC LIMIT 1").get() as {
      ts: string;
    } | null;
    const types = this.#rollup("type")
      .map((r) => ({ finding_type: String(r.key), count: r.n as number }))
      .sort((a, b) => b.count - a.count || (a.finding_type < b.finding_type ? -1 : 1))
      .slice(0, 10);
    return {
      total_findings: total as number,
      today_count: perDay.get(today) ?? 0,
      last_finding_time: last?.ts ?? null,
      by_client: this.#group("client"),
      by_severity: this.#group("severity"),
      by_detector: this.#group("detector"),
      by_action: this.#group("action"),
      by_provider: this.#group("provider"),
      by_model: this.#group("model"),
      top_finding_types: types,
      daily_trend,
    };
  }

  /** `/api/v1/stats/advanced` over `days`. */
  advanced(days: number, now = Date.now()) {
    const today = Math.floor(now / DAY_MS);
    const start = sinceDays(days, now) / DAY_MS;
    const trend = new Map<number, Record<string, number>>();
    for (const r of this.#rollupByDay("action", start)) {
      const t = trend.get(r.day as number) ?? {};
      t[r.key as string] = r.n as number;
      trend.set(r.day as number, t);
    }
    const action_trend: { date: string; block: number; redact: number; alert: number; log: number }[] = [];
    for (let d = start; d <= today; d++) {
      const t = trend.get(d) ?? {};
      action_trend.push({
        date: isoDate(d * DAY_MS),
        block: t.block ?? 0,
        redact: t.redact ?? 0,
        alert: t.alert ?? 0,
        log: t.log ?? 0,
      });
    }
    const matrix = Array.from({ length: 7 }, (_, weekday) => ({
      weekday,
      hours: new Array<number>(24).fill(0),
    }));
    for (const r of this.#rollupByDay("hour", start)) {
      // 1970-01-01 was a Thursday (weekday 4, Sunday = 0).
      const weekday = ((r.day as number) + 4) % 7;
      matrix[weekday]!.hours[Number(r.key)]! += r.n as number;
    }
    const top = (dim: string, field: string) =>
      this.#rollup(dim, start)
        .filter((r) => r.key !== "")
        .map((r) => ({ [field]: String(r.key), count: r.n as number }))
        .sort((a, b) => b.count - a.count || (String(a[field]) < String(b[field]) ? -1 : 1))
        .slice(0, 10);
    return {
      action_trend,
      activity_matrix: matrix,
      top_accounts: top("account", "account_id"),
      top_projects: top("project", "working_directory"),
    };
  }

  /** Counts per detector and of decoded findings (pipeline stage finding_count). */
  pipelineCounts(): { byDetector: Record<string, number>; decoded: number; total: number } {
    const byDetector = this.#group("detector");
    const decoded = this.#group("decoded")["1"] ?? 0;
    const total = (this.#rollup("all")[0]?.n as number | undefined) ?? 0;
    return { byDetector, decoded, total };
  }
}

export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------- sessions

const SESSION_COLUMNS =
  "session_id, first_seen, last_seen, finding_count, request_count, provider, model, client, account_id, device_id, working_directory, git_branch";

export class SessionsRepo {
  constructor(private db: Database) {}

  list(limit: number, offset: number): { sessions: Row[]; total: number } {
    const total = (this.db.query("SELECT COUNT(*) AS n FROM sessions").get() as { n: number }).n;
    const sessions = this.db
      .query(`SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY last_ms DESC LIMIT ? OFFSET ?`)
      .all(limit, offset) as Row[];
    return { sessions, total };
  }

  /** Sessions active since `sinceMs`, with the per-severity breakdown. */
  active(sinceMs: number, limit: number): { sessions: Row[]; total: number } {
    const total = (
      this.db.query("SELECT COUNT(*) AS n FROM sessions WHERE last_ms >= ?").get(sinceMs) as { n: number }
    ).n;
    const rows = this.db
      .query(
        `SELECT ${SESSION_COLUMNS}, sev_critical, sev_high, sev_warning, sev_info FROM sessions WHERE last_ms >= ? ORDER BY last_ms DESC LIMIT ?`,
      )
      .all(sinceMs, limit) as Row[];
    const sessions = rows.map(({ sev_critical, sev_high, sev_warning, sev_info, ...rest }) => ({
      ...rest,
      severity: { critical: sev_critical, high: sev_high, warning: sev_warning, info: sev_info },
    }));
    return { sessions, total };
  }

  get(id: string): Row | null {
    return (
      (this.db.query(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = ?`).get(id) as Row) ?? null
    );
  }

  /** Distinct clients seen, with when (the client catalog's `seen`). */
  clientsSeen(): { client: string; last_seen: string }[] {
    return this.db
      .query(
        "SELECT client, MAX(last_seen) AS last_seen FROM sessions WHERE client IS NOT NULL AND client != '' GROUP BY client",
      )
      .all() as { client: string; last_seen: string }[];
  }
}

// ---------------------------------------------------------------- audit

export interface AuditFilter {
  action?: string;
  provider?: string;
  client?: string;
  session_id?: string;
  search?: string;
  days?: number;
}

/** An audit row's columns: its id, then the keys of an audit line. */
export const AUDIT_FIELDS = ["id", ...AUDIT_KEYS];
const AUDIT_COLUMNS = AUDIT_FIELDS.join(", ");

function auditWhere(f: AuditFilter): { sql: string; params: Params } {
  const { parts, params } = equalities(f, ["action", "provider", "client", "session_id"]);
  if (f.days !== undefined) {
    parts.push("ts_ms >= ?");
    params.push(sinceDays(f.days));
  }
  if (f.search) {
    const like = `%${likeEscape(f.search)}%`;
    parts.push(
      "(path LIKE ? ESCAPE '\\' OR model LIKE ? ESCAPE '\\' OR client LIKE ? ESCAPE '\\' OR request_id LIKE ? ESCAPE '\\' OR session_id LIKE ? ESCAPE '\\')",
    );
    params.push(like, like, like, like, like);
  }
  return { sql: parts.length ? `WHERE ${parts.join(" AND ")}` : "", params };
}

export class AuditRepo {
  constructor(private db: Database) {}

  list(f: AuditFilter, limit: number, offset: number): { entries: Row[]; total: number } {
    const { sql, params } = auditWhere(f);
    const total = (this.db.query(`SELECT COUNT(*) AS n FROM audit ${sql}`).get(...params) as { n: number }).n;
    const entries = this.db
      .query(`SELECT ${AUDIT_COLUMNS} FROM audit ${sql} ORDER BY id DESC LIMIT ? OFFSET ?`)
      .all(...params, limit, offset) as Row[];
    return { entries, total };
  }

  iterate(f: AuditFilter, pageSize = 1000): Generator<Row> {
    return newestFirst(this.db, `SELECT ${AUDIT_COLUMNS} FROM audit`, auditWhere(f), pageSize);
  }

  count(): number {
    return (this.db.query("SELECT COUNT(*) AS n FROM audit").get() as { n: number }).n;
  }

  clientsSeen(): { client: string; last_seen: string }[] {
    return this.db
      .query(
        "SELECT client, MAX(ts) AS last_seen FROM audit WHERE client IS NOT NULL AND client != '' GROUP BY client",
      )
      .all() as { client: string; last_seen: string }[];
  }
}

// ---------------------------------------------------------------- rules

export interface RuleFilter {
  search?: string;
  detector?: string;
  tier?: string;
  severity?: string;
  enabled?: boolean;
  tag?: string;
  source?: string;
}

export type RuleRecord = RuleDef & { hit_count: number; created_at: string; updated_at: string };

function jsonOrNull<T>(v: unknown): T | null {
  if (typeof v !== "string") return null;
  try {
    return JSON.parse(v) as T;
  } catch {
    return null;
  }
}

export function ruleFromRow(r: Row): RuleRecord {
  const rule: RuleRecord = {
    name: r.name as string,
    pattern: r.pattern as string,
    detector: r.detector as RuleDef["detector"],
    severity: r.severity as RuleDef["severity"],
    action: r.action as RuleDef["action"],
    enabled: r.enabled === 1,
    tier: r.tier as RuleDef["tier"],
    source: r.source as RuleDef["source"],
    description: r.description as string,
    tags: jsonOrNull<string[]>(r.tags) ?? [],
    validator: (r.validator as RuleDef["validator"]) ?? null,
    keywords: jsonOrNull<string[]>(r.keywords),
    entropy: (r.entropy as number | null) ?? null,
    hit_count: r.hit_count as number,
    created_at: r.created_at as string,
    updated_at: r.updated_at as string,
  };
  const ex = jsonOrNull<string[]>(r.examples);
  if (ex) rule.examples = ex;
  const nex = jsonOrNull<string[]>(r.negative_examples);
  if (nex) rule.negative_examples = nex;
  return rule;
}

export class RulesRepo {
  #enabled: RuleDef[] | null = null;
  #listeners = new Set<() => void>();
  constructor(private db: Database) {}

  onChanged(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Invalidate caches and tell listeners (the runtime bumps its rules version). */
  changed(): void {
    this.#enabled = null;
    for (const fn of this.#listeners) {
      try {
        fn();
      } catch {
        /* a listener never breaks a rule edit */
      }
    }
  }

  enabled(): RuleDef[] {
    if (!this.#enabled)
      this.#enabled = (
        this.db.query("SELECT * FROM rules WHERE enabled = 1 ORDER BY name").all() as Row[]
      ).map(ruleFromRow);
    return this.#enabled;
  }

  all(): RuleRecord[] {
    return (this.db.query("SELECT * FROM rules ORDER BY name").all() as Row[]).map(ruleFromRow);
  }

  list(f: RuleFilter, limit: number, offset: number): { rules: RuleRecord[]; total: number } {
    const { parts, params } = equalities(f, ["detector", "tier", "severity", "source"]);
    if (f.enabled !== undefined) {
      parts.push("enabled = ?");
      params.push(f.enabled ? 1 : 0);
    }
    if (f.tag !== undefined) {
      parts.push("EXISTS (SELECT 1 FROM json_each(rules.tags) WHERE json_each.value = ?)");
      params.push(f.tag);
    }
    const terms = (f.search ?? "")
      .split(",")
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean);
    if (terms.length) {
      parts.push(
        `(${terms.map(() => "(lower(name) LIKE ? ESCAPE '\\' OR lower(description) LIKE ? ESCAPE '\\')").join(" OR ")})`,
      );
      for (const t of terms) {
        const like = `%${likeEscape(t)}%`;
        params.push(like, like);
      }
    }
    const where = parts.length ? `WHERE ${parts.join(" AND ")}` : "";
    const total = (this.db.query(`SELECT COUNT(*) AS n FROM rules ${where}`).get(...params) as { n: number })
      .n;
    const rules = (
      this.db
        .query(`SELECT * FROM rules ${where} ORDER BY name LIMIT ? OFFSET ?`)
        .all(...params, limit, offset) as Row[]
    ).map(ruleFromRow);
    return { rules, total };
  }

  get(name: string): RuleRecord | null {
    const r = this.db.query("SELECT * FROM rules WHERE name = ?").get(name) as Row | null;
    return r ? ruleFromRow(r) : null;
  }

  /** Insert a rule; returns false when the name exists. Does not notify (callers batch). */
  insert(rule: RuleDef): boolean {
    const now = new Date().toISOString();
    const res = this.db
      .query(
        `INSERT OR IGNORE INTO rules (name, pattern, detector, severity, action, enabled, tier, source, description, tags, validator, keywords, entropy, examples, negative_examples, hit_count, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        rule.name,
        rule.pattern,
        rule.detector,
        rule.severity,
        rule.action,
        rule.enabled ? 1 : 0,
        rule.tier,
        rule.source,
        rule.description ?? "",
        JSON.stringify(rule.tags ?? []),
        rule.validator ?? null,
        rule.keywords ? JSON.stringify(rule.keywords) : null,
        rule.entropy ?? null,
        rule.examples ? JSON.stringify(rule.examples) : null,
        rule.negative_examples ? JSON.stringify(rule.negative_examples) : null,
        rule.hit_count ?? 0,
        now,
        now,
      );
    return res.changes > 0;
  }

  /** Apply a partial update (already validated). Returns false when the rule does not exist. */
  update(name: string, patch: Partial<RuleDef>): boolean {
    const cols: string[] = [];
    const params: Params = [];
    const set = (col: string, v: SQLQueryBindings) => {
      cols.push(`${col} = ?`);
      params.push(v);
    };
    if (patch.pattern !== undefined) set("pattern", patch.pattern);
    if (patch.detector !== undefined) set("detector", patch.detector);
    if (patch.severity !== undefined) set("severity", patch.severity);
    if (patch.action !== undefined) set("action", patch.action);
    if (patch.enabled !== undefined) set("enabled", patch.enabled ? 1 : 0);
    if (patch.description !== undefined) set("description", patch.description);
    if (patch.tags !== undefined) set("tags", JSON.stringify(patch.tags));
    if (patch.validator !== undefined) set("validator", patch.validator ?? null);
    if (patch.keywords !== undefined) set("keywords", patch.keywords ? JSON.stringify(patch.keywords) : null);
    if (patch.source !== undefined) set("source", patch.source);
    if (patch.tier !== undefined) set("tier", patch.tier);
    set("updated_at", new Date().toISOString());
    const res = this.db.query(`UPDATE rules SET ${cols.join(", ")} WHERE name = ?`).run(...params, name);
    return res.changes > 0;
  }

  delete(name: string): boolean {
    return this.db.query("DELETE FROM rules WHERE name = ?").run(name).changes > 0;
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  addHits(hits: Map<string, number>): void {
    const q = this.db.query("UPDATE rules SET hit_count = hit_count + ? WHERE name = ?");
    this.db.transaction(() => {
      for (const [name, n] of hits) q.run(n, name);
    })();
  }

  stats() {
    const rules = this.all();
    const count = (key: (r: RuleRecord) => string) => {
      const out: Record<string, number> = {};
      for (const r of rules) out[key(r)] = (out[key(r)] ?? 0) + 1;
      return out;
    };
    const tags = new Map<string, number>();
    for (const r of rules) for (const t of r.tags) tags.set(t, (tags.get(t) ?? 0) + 1);
    const enabled = rules.filter((r) => r.enabled).length;
    return {
      total: rules.length,
      enabled,
      disabled: rules.length - enabled,
      by_tier: count((r) => r.tier),
      by_detector: count((r) => r.detector),
      by_severity: count((r) => r.severity),
      by_source: count((r) => r.source),
      tags: [...tags]
        .map(([tag, count]) => ({ tag, count }))
        .sort((a, b) => b.count - a.count || (a.tag < b.tag ? -1 : 1)),
    };
  }
}

// ---------------------------------------------------------------- allowlists

export const ALLOWLIST_TYPES = ["secrets", "pii", "paths"] as const;
export type AllowlistType = (typeof ALLOWLIST_TYPES)[number];
export interface AllowlistEntry {
  id: number;
  list_type: AllowlistType;
  pattern: string;
  source: "api";
  created_at: string;
}

export class AllowlistsRepo {
  constructor(private db: Database) {}
  list(): AllowlistEntry[] {
    return this.db.query("SELECT * FROM allowlists ORDER BY id").all() as AllowlistEntry[];
  }
  /** null when the same (type, pattern) exists. */
  add(type: AllowlistType, pattern: string): AllowlistEntry | null {
    const res = this.db
      .query(
        "INSERT OR IGNORE INTO allowlists (list_type, pattern, source, created_at) VALUES (?, ?, 'api', ?)",
      )
      .run(type, pattern, new Date().toISOString());
    if (res.changes === 0) return null;
    return this.get(Number(res.lastInsertRowid));
  }
  get(id: number): AllowlistEntry | null {
    return (this.db.query("SELECT * FROM allowlists WHERE id = ?").get(id) as AllowlistEntry) ?? null;
  }
  delete(id: number): boolean {
    return this.db.query("DELETE FROM allowlists WHERE id = ?").run(id).changes > 0;
  }
  /** Patterns per type, for merging into the configuration the scanner sees. */
  byType(): Record<AllowlistType, string[]> {
    const out: Record<AllowlistType, string[]> = { secrets: [], pii: [], paths: [] };
    for (const e of this.list()) out[e.list_type]?.push(e.pattern);
    return out;
  }
}

// ---------------------------------------------------------------- websocket connections

const WS_COLUMNS =
  "connection_id, opened_at, closed_at, state, target_url, origin, provider, session_id, duration_ms, frames_in, frames_out, findings, close_code";

export class WsRepo {
  constructor(private db: Database) {}
  list(limit: number, offset: number, session_id?: string): { connections: Row[]; total: number } {
    const where = session_id !== undefined ? "WHERE session_id = ?" : "";
    const p: Params = session_id !== undefined ? [session_id] : [];
    const total = (
      this.db.query(`SELECT COUNT(*) AS n FROM ws_connections ${where}`).get(...p) as { n: number }
    ).n;
    const connections = this.db
      .query(`SELECT ${WS_COLUMNS} FROM ws_connections ${where} ORDER BY opened_ms DESC LIMIT ? OFFSET ?`)
      .all(...p, limit, offset) as Row[];
    return { connections, total };
  }
  get(id: string): Row | null {
    return (
      (this.db.query(`SELECT ${WS_COLUMNS} FROM ws_connections WHERE connection_id = ?`).get(id) as Row) ??
      null
    );
  }
  stats() {
    const r = this.db
      .query(
        `SELECT COUNT(*) AS total, COALESCE(SUM(state = 'open'), 0) AS open, COALESCE(SUM(state = 'closed'), 0) AS closed,
         COALESCE(SUM(frames_in), 0) AS frames_in, COALESCE(SUM(frames_out), 0) AS frames_out, COALESCE(SUM(findings), 0) AS findings,
         COALESCE(AVG(CASE WHEN state = 'closed' THEN duration_ms END), 0) AS avg_duration_ms FROM ws_connections`,
      )
      .get() as Row;
    const by_close_code: Record<string, number> = {};
    for (const c of this.db
      .query(
        "SELECT close_code AS k, COUNT(*) AS n FROM ws_connections WHERE close_code IS NOT NULL GROUP BY close_code",
      )
      .all() as Row[])
      by_close_code[String(c.k)] = c.n as number;
    return { ...r, by_close_code };
  }
}

// ---------------------------------------------------------------- MCP

export interface McpBaseline {
  server_id: string;
  tool_name: string;
  sha256: string;
  definition: unknown;
  first_seen: string;
  last_seen: string;
}

export class McpRepo {
  constructor(private db: Database) {}

  events(limit: number, offset: number): { events: Row[]; total: number } {
    const total = (this.db.query("SELECT COUNT(*) AS n FROM mcp_events").get() as { n: number }).n;
    const events = (
      this.db
        .query(
          "SELECT id, ts, kind, server, message, severity, data FROM mcp_events ORDER BY id DESC LIMIT ? OFFSET ?",
        )
        .all(limit, offset) as Row[]
    ).map((e) => ({ ...e, data: jsonOrNull(e.data) ?? {} }));
    return { events, total };
  }

  eventsFromOtherProcesses(afterId: number, pid: number, limit = 200): Row[] {
    return (
      this.db
        .query(
          "SELECT id, ts, kind, server, message, severity, data FROM mcp_events WHERE id > ? AND origin_pid != ? ORDER BY id LIMIT ?",
        )
        .all(afterId, pid, limit) as Row[]
    ).map((e) => ({ ...e, data: jsonOrNull(e.data) ?? {} }));
  }

  maxEventId(): number {
    return (this.db.query("SELECT COALESCE(MAX(id), 0) AS n FROM mcp_events").get() as { n: number }).n;
  }

  /** The stored baseline of one tool, or null the first time it is seen. */
  getBaseline(server_id: string, tool_name: string): McpBaseline | null {
    const r = this.db
      .query("SELECT * FROM mcp_tool_baselines WHERE server_id = ? AND tool_name = ?")
      .get(server_id, tool_name) as Row | null;
    return r ? ({ ...r, definition: jsonOrNull(r.definition) } as McpBaseline) : null;
  }

  /**
   * Record the current definition of a tool. Returns the previous baseline (null when new). When the
   * hash changed the baseline is replaced (the caller reports the drift first).
   */
  putBaseline(server_id: string, tool_name: string, sha256: string, definition: unknown): McpBaseline | null {
    const prev = this.getBaseline(server_id, tool_name);
    const now = new Date().toISOString();
    this.db
      .query(
        `INSERT INTO mcp_tool_baselines (server_id, tool_name, sha256, definition, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (server_id, tool_name) DO UPDATE SET sha256 = excluded.sha256, definition = excluded.definition, last_seen = excluded.last_seen`,
      )
      .run(server_id, tool_name, sha256, JSON.stringify(definition ?? null), now, now);
    return prev;
  }

  baselines(server_id?: string): Omit<McpBaseline, "definition">[] {
    const where = server_id !== undefined ? "WHERE server_id = ?" : "";
    const p: Params = server_id !== undefined ? [server_id] : [];
    return this.db
      .query(
        `SELECT server_id, tool_name, sha256, first_seen, last_seen FROM mcp_tool_baselines ${where} ORDER BY server_id, tool_name`,
      )
      .all(...p) as Omit<McpBaseline, "definition">[];
  }
}

/** A LIKE operand that matches `text` literally (`%`, `_` and `\` escaped; used with ESCAPE '\'). */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

type Where = { parts: string[]; params: Params };

/** `key = ?` for each of `keys` that `f` sets. */
function equalities<F extends object>(f: F, keys: (keyof F & string)[]): Where {
  const parts: string[] = [];
  const params: Params = [];
  for (const k of keys) {
    const v = f[k];
    if (v !== undefined) {
      parts.push(`${k} = ?`);
      params.push(v as SQLQueryBindings);
    }
  }
  return { parts, params };
}

/** Every row of `select` (`SELECT … FROM t`) under `where`, by descending id, a page at a time. */
function* newestFirst(
  db: Database,
  select: string,
  { sql, params }: { sql: string; params: Params },
  pageSize: number,
): Generator<Row> {
  const q = db.query(`${select} ${sql ? `${sql} AND` : "WHERE"} id < ? ORDER BY id DESC LIMIT ?`);
  let beforeId = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const rows = q.all(...params, beforeId, pageSize) as Row[];
    if (rows.length === 0) return;
    yield* rows;
    beforeId = rows[rows.length - 1]!.id as number;
    if (rows.length < pageSize) return;
  }
}

/**
 * The findings table: one row per value per session (seen again: `seen_count`), written from the
 * bus's `finding` events, read by the API with filters, pages and exports, and counted through the
 * trigger-kept `finding_rollup` (migrations.ts), so that stats do not depend on the table's size.
 * Rows hold a masked preview and hashes, never a raw matched value.
 */
import type { Database } from "bun:sqlite";
import type { FindingEvent } from "../core/bus.ts";
import { FindingRecord, fieldsOf } from "./records.ts";
import {
  columnList,
  containsAny,
  countOf,
  DAY_MS,
  equalities,
  insertSql,
  isoDate,
  newestFirst,
  type Params,
  type Prunable,
  type Row,
  sinceDays,
  whereSql,
} from "./sql.ts";

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
export const FINDING_FIELDS = fieldsOf(FindingRecord);
const FINDING_COLUMNS = columnList(FINDING_FIELDS);

/** The columns a new finding writes (named parameters of `record`). */
const INSERT_COLUMNS = [
  "ts",
  "ts_ms",
  "last_seen",
  "severity",
  "detector",
  "finding_type",
  "rule",
  "action",
  "action_source",
  "matched_rules",
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
  "api_key_hash",
  "model",
  "content_hash",
  "value_hash",
  "origin_pid",
] as const;
type FindingInsert = Record<(typeof INSERT_COLUMNS)[number], string | number | null>;

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
  if (f.q) containsAny({ parts, params }, ["finding_type", "rule", "path", "description"], f.q);
  return whereSql({ parts, params });
}

/** A stored row as the API gives it: `matched_rules` as a list of rule names. */
function findingRow(r: Row): Row {
  if (typeof r.matched_rules === "string") r.matched_rules = JSON.parse(r.matched_rules) as string[];
  else if (r.matched_rules === null && "matched_rules" in r) r.matched_rules = r.rule ? [r.rule] : [];
  return r;
}

function* findingRows(rows: Iterable<Row>): Generator<Row> {
  for (const r of rows) yield findingRow(r);
}

export class FindingsRepo implements Prunable {
  #insert;
  constructor(private db: Database) {
    this.#insert = db.query(
      insertSql(
        "findings",
        INSERT_COLUMNS,
        `ON CONFLICT (content_hash, session_id) DO UPDATE SET seen_count = seen_count + 1, last_seen = excluded.last_seen
         RETURNING seen_count`,
      ),
    );
  }

  /**
   * Write a finding of the bus at `ts` (ms) by process `pid`. The same value in the same session is
   * one row, seen again: returns its `seen_count` (1 for a new row).
   */
  record(ev: FindingEvent, ts: number, pid: number): number {
    const { finding: f, session: s } = ev;
    const iso = new Date(ts).toISOString();
    const row: FindingInsert = {
      ts: iso,
      ts_ms: ts,
      last_seen: iso,
      severity: f.severity,
      detector: f.detector,
      finding_type: f.finding_type,
      rule: f.rule ?? "",
      action: f.action,
      action_source: f.action_source ?? "",
      matched_rules: JSON.stringify(f.matched_rules ?? (f.rule ? [f.rule] : [])),
      provider: ev.provider,
      client: s.client ?? "",
      path: f.path ?? "",
      start: f.start ?? 0,
      end: f.end ?? 0,
      preview: f.preview ?? "",
      description: f.description ?? "",
      decoded: f.decoded ?? null,
      request_id: ev.request_id ?? "",
      transport: ev.transport,
      session_id: s.session_id ?? "",
      account_id: s.account_id,
      device_id: s.device_id,
      source_ip: s.source_ip,
      working_directory: s.working_directory,
      git_branch: s.git_branch,
      os_platform: s.os_platform,
      client_name: s.client_name,
      api_key_hash: s.api_key_hash,
      model: s.model,
      content_hash: f.content_hash,
      value_hash: f.value_hash,
      origin_pid: pid,
    };
    return (this.#insert.get(row) as { seen_count: number }).seen_count;
  }

  prune(cutoffMs: number): number {
    return this.db.query("DELETE FROM findings WHERE ts_ms < ?").run(cutoffMs).changes;
  }

  list(f: FindingFilter, limit: number, offset: number): { findings: Row[]; total: number } {
    const { sql, params } = findingWhere(f);
    const total = countOf(this.db, `findings ${sql}`, params);
    const findings = this.db
      .query(`SELECT ${FINDING_COLUMNS} FROM findings ${sql} ORDER BY ts_ms DESC, id DESC LIMIT ? OFFSET ?`)
      .all(...params, limit, offset) as Row[];
    return { findings: findings.map(findingRow), total };
  }

  /** Every matching finding, newest first, a page at a time (exports stream this). */
  iterate(f: FindingFilter, pageSize = 1000): Generator<Row> {
    return findingRows(
      newestFirst(this.db, `SELECT ${FINDING_COLUMNS} FROM findings`, findingWhere(f), pageSize),
    );
  }

  get(id: number): Row | null {
    const r = this.db.query(`SELECT ${FINDING_COLUMNS}, api_key_hash FROM findings WHERE id = ?`).get(id);
    return r ? findingRow(r as Row) : null;
  }

  /** Rows written by other processes (the `sluice mcp` process) after `afterId`. */
  fromOtherProcesses(afterId: number, pid: number, limit = 200): Row[] {
    return (
      this.db
        .query(
          `SELECT ${FINDING_COLUMNS}, origin_pid FROM findings WHERE id > ? AND origin_pid != ? ORDER BY id LIMIT ?`,
        )
        .all(afterId, pid, limit) as Row[]
    ).map(findingRow);
  }

  maxId(): number {
    return (this.db.query("SELECT COALESCE(MAX(id), 0) AS n FROM findings").get() as { n: number }).n;
  }

  count(): number {
    return countOf(this.db, "findings");
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

  /** Findings of one type, all time (from the rollup counters). */
  countOfType(findingType: string): number {
    return this.#group("type")[findingType] ?? 0;
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

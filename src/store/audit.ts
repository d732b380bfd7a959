/**
 * The audit table: one row per proxied request (the same keys as a line of the JSONL audit file,
 * audit-log.ts), never a body and never `api_key_hash`.
 */
import type { Database } from "bun:sqlite";
import type { RequestEvent } from "../core/bus.ts";
import type { Action } from "../core/types.ts";
import { AUDIT_KEYS } from "./audit-log.ts";
import {
  type ActionCounts,
  type ActionWindow,
  AuditRecord,
  fieldsOf,
  type RequestActions,
} from "./records.ts";
import {
  containsAny,
  countOf,
  DAY_MS,
  equalities,
  insertSql,
  type Named,
  newestFirst,
  type Params,
  type Prunable,
  type Row,
  sinceDays,
  whereSql,
} from "./sql.ts";

/** The actions that stop or flag a request: what the Overview counts as "what sluice stopped". */
export const ACTED_ACTIONS = ["block", "redact", "alert"] as const satisfies readonly Action[];
export type ActedAction = (typeof ACTED_ACTIONS)[number];

/** At most this many tools and projects are listed per window (most requests first). */
export const ACTION_BREAKDOWN_MAX = 50;

export interface AuditFilter {
  action?: string;
  provider?: string;
  client?: string;
  session_id?: string;
  search?: string;
  days?: number;
}

/** An audit row's columns: its id, then the keys of an audit line (`AUDIT_KEYS`). */
export const AUDIT_FIELDS = fieldsOf(AuditRecord);
const AUDIT_COLUMNS = AUDIT_FIELDS.join(", ");

function auditWhere(f: AuditFilter): { sql: string; params: Params } {
  const { parts, params } = equalities(f, ["action", "provider", "client", "session_id"]);
  if (f.days !== undefined) {
    parts.push("ts_ms >= ?");
    params.push(sinceDays(f.days));
  }
  if (f.search)
    containsAny({ parts, params }, ["path", "model", "client", "request_id", "session_id"], f.search);
  return whereSql({ parts, params });
}

export class AuditRepo implements Prunable {
  #insert;
  constructor(private db: Database) {
    this.#insert = db.query(insertSql("audit", ["ts_ms", ...AUDIT_KEYS]));
  }

  /** Write a request of the bus; `path` is its masked path (as the audit file has it). */
  record(ev: RequestEvent, path: string): void {
    const row: Named = { ts_ms: Date.parse(ev.ts) || Date.now() };
    for (const k of AUDIT_KEYS) row[k] = ev[k] ?? null;
    row.path = path;
    row.client = ev.client ?? "";
    row.session_id = ev.session_id ?? "";
    this.#insert.run(row);
  }

  /** Requests before `cutoffMs` go; the per-day counts stay for the week they are shown. */
  prune(cutoffMs: number): number {
    this.db.query("DELETE FROM request_rollup WHERE day < ?").run(sinceDays(7) / DAY_MS);
    return this.db.query("DELETE FROM audit WHERE ts_ms < ?").run(cutoffMs).changes;
  }

  list(f: AuditFilter, limit: number, offset: number): { entries: Row[]; total: number } {
    const { sql, params } = auditWhere(f);
    const total = countOf(this.db, `audit ${sql}`, params);
    const entries = this.db
      .query(`SELECT ${AUDIT_COLUMNS} FROM audit ${sql} ORDER BY id DESC LIMIT ? OFFSET ?`)
      .all(...params, limit, offset) as Row[];
    return { entries, total };
  }

  iterate(f: AuditFilter, pageSize = 1000): Generator<Row> {
    return newestFirst(this.db, `SELECT ${AUDIT_COLUMNS} FROM audit`, auditWhere(f), pageSize);
  }

  count(): number {
    return countOf(this.db, "audit");
  }

  /**
   * Requests blocked, redacted and alerted today and over the last 7 days, per tool and per
   * project. Each audit row is one request under the one action decided for it, so a request with
   * several findings counts once; its project is its session's working directory when it was
   * written. Read from `request_rollup` (a trigger on the audit table keeps it, migrations.ts), a
   * few rows per day however many requests there were.
   */
  requestActions(now = Date.now()): RequestActions {
    const todayMs = sinceDays(1, now);
    const weekMs = sinceDays(7, now);
    const rows = this.db
      .query("SELECT day, action, client, project, n FROM request_rollup WHERE day >= ?")
      .all(weekMs / DAY_MS) as {
      day: number;
      action: ActedAction;
      client: string;
      project: string;
      n: number;
    }[];
    const today = new ActionTally(todayMs);
    const week = new ActionTally(weekMs);
    for (const r of rows) {
      const project = r.project === "" ? null : r.project;
      week.add(r.action, r.client, project, r.n);
      if (r.day * DAY_MS >= todayMs) today.add(r.action, r.client, project, r.n);
    }
    return { today: today.window(), week: week.window() };
  }

  clientsSeen(): { client: string; last_seen: string }[] {
    return this.db
      .query(
        "SELECT client, MAX(ts) AS last_seen FROM audit WHERE client IS NOT NULL AND client != '' GROUP BY client",
      )
      .all() as { client: string; last_seen: string }[];
  }
}

const noActions = (): ActionCounts => ({ block: 0, redact: 0, alert: 0 });

/** Sums of one window: in total, per tool and per project. */
class ActionTally {
  #total = noActions();
  #clients = new Map<string, ActionCounts>();
  #projects = new Map<string | null, ActionCounts>();
  constructor(private sinceMs: number) {}

  add(action: ActedAction, client: string, project: string | null, n: number): void {
    this.#total[action] += n;
    bump(this.#clients, client, action, n);
    bump(this.#projects, project, action, n);
  }

  window(): ActionWindow {
    return {
      since: new Date(this.sinceMs).toISOString(),
      ...this.#total,
      by_client: ranked(this.#clients).map(([client, c]) => ({ client, ...c })),
      by_project: ranked(this.#projects).map(([project, c]) => ({ project, ...c })),
    };
  }
}

function bump<K>(map: Map<K, ActionCounts>, key: K, action: ActedAction, n: number): void {
  const c = map.get(key) ?? noActions();
  c[action] += n;
  map.set(key, c);
}

/** Most requests first, then by name (none last); at most `ACTION_BREAKDOWN_MAX`. */
function ranked<K extends string | null>(m: Map<K, ActionCounts>): [K, ActionCounts][] {
  const sum = (c: ActionCounts) => c.block + c.redact + c.alert;
  const byName = (a: K, b: K) => (a === null ? 1 : b === null ? -1 : a < b ? -1 : a > b ? 1 : 0);
  return [...m].sort(([ka, a], [kb, b]) => sum(b) - sum(a) || byName(ka, kb)).slice(0, ACTION_BREAKDOWN_MAX);
}

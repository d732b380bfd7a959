/**
 * The audit table: one row per proxied request (the same keys as a line of the JSONL audit file,
 * audit-log.ts), never a body and never `api_key_hash`.
 */
import type { Database } from "bun:sqlite";
import type { RequestEvent } from "../core/bus.ts";
import { AUDIT_KEYS } from "./audit-log.ts";
import {
  containsAny,
  countOf,
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

  prune(cutoffMs: number): number {
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

  clientsSeen(): { client: string; last_seen: string }[] {
    return this.db
      .query(
        "SELECT client, MAX(ts) AS last_seen FROM audit WHERE client IS NOT NULL AND client != '' GROUP BY client",
      )
      .all() as { client: string; last_seen: string }[];
  }
}

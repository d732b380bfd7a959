/** The ws_connections table: one row per WebSocket connection relayed, updated when it closes. */
import type { Database } from "bun:sqlite";
import type { WsConnectionEvent } from "../core/bus.ts";
import { fieldsOf, WsConnectionRecord } from "./records.ts";
import { countOf, insertSql, type Params, type Prunable, type Row } from "./sql.ts";

const WS_COLUMNS = fieldsOf(WsConnectionRecord).join(", ");

const WRITE_COLUMNS = [
  "connection_id",
  "opened_at",
  "opened_ms",
  "closed_at",
  "state",
  "target_url",
  "origin",
  "provider",
  "session_id",
  "duration_ms",
  "frames_in",
  "frames_out",
  "findings",
  "close_code",
] as const;

export class WsRepo implements Prunable {
  #upsert;
  constructor(private db: Database) {
    this.#upsert = db.query(
      insertSql(
        "ws_connections",
        WRITE_COLUMNS,
        `ON CONFLICT (connection_id) DO UPDATE SET closed_at = excluded.closed_at, state = excluded.state,
         duration_ms = excluded.duration_ms, frames_in = excluded.frames_in, frames_out = excluded.frames_out,
         findings = excluded.findings, close_code = excluded.close_code`,
      ),
    );
  }

  /** Write a connection's opening, or its closing over the row its opening wrote, at `ts` (ms). */
  record(e: WsConnectionEvent, ts: number): void {
    const opened = e.phase === "open" ? ts : ts - (e.duration_ms ?? 0);
    const row: Record<(typeof WRITE_COLUMNS)[number], string | number | null> = {
      connection_id: e.connection_id,
      opened_at: new Date(opened).toISOString(),
      opened_ms: opened,
      closed_at: e.phase === "close" ? new Date(ts).toISOString() : null,
      state: e.phase === "close" ? "closed" : "open",
      target_url: e.target_url,
      origin: e.origin,
      provider: e.provider,
      session_id: e.session_id ?? "",
      duration_ms: e.duration_ms ?? 0,
      frames_in: e.frames_in ?? 0,
      frames_out: e.frames_out ?? 0,
      findings: e.findings ?? 0,
      close_code: e.close_code,
    };
    this.#upsert.run(row);
  }

  prune(cutoffMs: number): number {
    return this.db.query("DELETE FROM ws_connections WHERE opened_ms < ?").run(cutoffMs).changes;
  }

  list(limit: number, offset: number, session_id?: string): { connections: Row[]; total: number } {
    const where = session_id !== undefined ? "WHERE session_id = ?" : "";
    const p: Params = session_id !== undefined ? [session_id] : [];
    const total = countOf(this.db, `ws_connections ${where}`, p);
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

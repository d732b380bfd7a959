/**
 * The MCP tables: events of `sluice mcp` (poisoning, drift, blocked calls; written by whichever
 * process runs it, with its pid) and each server's tool baselines, which drift is checked against.
 */
import type { Database } from "bun:sqlite";
import type { BusEvents } from "../core/bus.ts";
import { countOf, insertSql, jsonOrNull, type Params, type Prunable, type Row } from "./sql.ts";

export interface McpBaseline {
  server_id: string;
  tool_name: string;
  sha256: string;
  definition: unknown;
  first_seen: string;
  last_seen: string;
}

export class McpRepo implements Prunable {
  #insertEvent;
  constructor(private db: Database) {
    this.#insertEvent = db.query(
      insertSql("mcp_events", ["ts", "ts_ms", "kind", "server", "message", "severity", "data", "origin_pid"]),
    );
  }

  /** Write an `mcp-event` of the bus at `ts` (ms) by process `pid`; its other keys go into `data`. */
  recordEvent(ev: BusEvents["mcp-event"], ts: number, pid: number): void {
    const { kind, server, message, severity, ...data } = ev;
    this.#insertEvent.run({
      ts: new Date(ts).toISOString(),
      ts_ms: ts,
      kind: String(kind),
      server: String(server),
      message: String(message),
      severity: String(severity),
      data: JSON.stringify(data),
      origin_pid: pid,
    });
  }

  /** Events older than the cutoff; tool baselines are kept (they are what drift is checked against). */
  prune(cutoffMs: number): number {
    return this.db.query("DELETE FROM mcp_events WHERE ts_ms < ?").run(cutoffMs).changes;
  }

  events(limit: number, offset: number): { events: Row[]; total: number } {
    const total = countOf(this.db, "mcp_events");
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

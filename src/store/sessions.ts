/**
 * The sessions table: one row per session id, folded from every finding and request of the session
 * (counts, per-severity counts of new findings, the latest client, model and project).
 */
import type { Database } from "bun:sqlite";
import { fieldsOf, SessionRecord } from "./records.ts";
import { countOf, type Prunable, type Row } from "./sql.ts";

const SESSION_COLUMNS = fieldsOf(SessionRecord).join(", ");

/** What one event tells about a session (named parameters of `touch`). */
export interface SessionTouch {
  session_id: string;
  /** When, as ISO time and ms. */
  seen: string;
  ms: number;
  /** 1 for a new finding of the session, else 0; its severity then, else null. */
  findings: number;
  severity: string | null;
  /** 1 for a request, else 0. */
  requests: number;
  provider: string | null;
  model: string | null;
  client: string | null;
  account_id: string | null;
  device_id: string | null;
  working_directory: string | null;
  git_branch: string | null;
}

export class SessionsRepo implements Prunable {
  #touch;
  constructor(private db: Database) {
    this.#touch = db.query(
      `INSERT INTO sessions (session_id, first_seen, last_seen, last_ms, finding_count, request_count, provider, model, client,
        account_id, device_id, working_directory, git_branch, sev_critical, sev_high, sev_warning, sev_info)
       VALUES ($session_id, $seen, $seen, $ms, $findings, $requests, $provider, $model, $client, $account_id, $device_id,
        $working_directory, $git_branch, $severity IS 'critical', $severity IS 'high', $severity IS 'warning', $severity IS 'info')
       ON CONFLICT (session_id) DO UPDATE SET
        last_seen = CASE WHEN excluded.last_ms > last_ms THEN excluded.last_seen ELSE last_seen END,
        last_ms = MAX(last_ms, excluded.last_ms),
        finding_count = finding_count + excluded.finding_count,
        request_count = request_count + excluded.request_count,
        provider = COALESCE(excluded.provider, provider), model = COALESCE(excluded.model, model),
        client = COALESCE(excluded.client, client), account_id = COALESCE(excluded.account_id, account_id),
        device_id = COALESCE(excluded.device_id, device_id),
        working_directory = COALESCE(excluded.working_directory, working_directory),
        git_branch = COALESCE(excluded.git_branch, git_branch),
        sev_critical = sev_critical + excluded.sev_critical, sev_high = sev_high + excluded.sev_high,
        sev_warning = sev_warning + excluded.sev_warning, sev_info = sev_info + excluded.sev_info`,
    );
  }

  /** Create the session or fold what an event tells about it into its row. */
  touch(t: SessionTouch): void {
    this.#touch.run({ ...t });
  }

  prune(cutoffMs: number): number {
    return this.db.query("DELETE FROM sessions WHERE last_ms < ?").run(cutoffMs).changes;
  }

  list(limit: number, offset: number): { sessions: Row[]; total: number } {
    const total = countOf(this.db, "sessions");
    const sessions = this.db
      .query(`SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY last_ms DESC LIMIT ? OFFSET ?`)
      .all(limit, offset) as Row[];
    return { sessions, total };
  }

  /** Sessions active since `sinceMs`, with the per-severity breakdown. */
  active(sinceMs: number, limit: number): { sessions: Row[]; total: number } {
    const total = countOf(this.db, "sessions WHERE last_ms >= ?", [sinceMs]);
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

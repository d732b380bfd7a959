/**
 * Per client (tool): when sluice last saw its traffic in each sign-in mode, and per day what of it
 * sluice could not read. Both tables are kept by a trigger on `audit` inserts (migration 4), so these reads stay a
 * few rows long; `sluice doctor` reads them from a read-only connection while `sluice serve` writes.
 */
import type { Database } from "bun:sqlite";
import type { Prunable } from "./sql.ts";

export interface ClientTrafficRow {
  client: string;
  /** The sign-in mode (see LOGINS), "" for requests recorded before sign-in modes were. */
  login: string;
  provider: string;
  first_seen: string;
  last_seen: string;
  requests: number;
}

export interface ClientUnscannedRow {
  client: string;
  reason: string;
  count: number;
  last_seen: string;
  /** The (masked) path of the last such request. */
  last_path: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class ClientTrafficRepo implements Prunable {
  constructor(private db: Database) {}

  /** Days of unread traffic expire with the audit rows they count; when traffic was seen stays. */
  prune(cutoffMs: number): number {
    return this.db.query("DELETE FROM client_unscanned WHERE day < ?").run(Math.floor(cutoffMs / 86_400_000))
      .changes;
  }

  /** Every client, sign-in mode and provider seen, most recent first. */
  traffic(): ClientTrafficRow[] {
    const rows = this.db
      .query(
        "SELECT client, login, provider, first_ms, last_ms, requests FROM client_traffic ORDER BY last_ms DESC",
      )
      .all() as {
      client: string;
      login: string;
      provider: string;
      first_ms: number;
      last_ms: number;
      requests: number;
    }[];
    return rows.map((r) => ({
      client: r.client,
      login: r.login,
      provider: r.provider,
      first_seen: iso(r.first_ms),
      last_seen: iso(r.last_ms),
      requests: r.requests,
    }));
  }

  /** What could not be read in the last `days` days, per client and reason, most recent first. */
  unscanned(days: number): ClientUnscannedRow[] {
    const since = Math.floor((Date.now() - days * 86_400_000) / 86_400_000);
    const rows = this.db
      .query(
        `SELECT client, reason, SUM(n) AS count, MAX(last_ms) AS last_ms,
           (SELECT last_path FROM client_unscanned u2 WHERE u2.client = u.client AND u2.reason = u.reason
              AND u2.day >= ?1 ORDER BY last_ms DESC LIMIT 1) AS last_path
         FROM client_unscanned u WHERE day >= ?1 GROUP BY client, reason ORDER BY last_ms DESC`,
      )
      .all(since) as { client: string; reason: string; count: number; last_ms: number; last_path: string }[];
    return rows.map((r) => ({
      client: r.client,
      reason: r.reason,
      count: r.count,
      last_seen: iso(r.last_ms),
      last_path: r.last_path,
    }));
  }
}

/** The allowlists table: patterns added through the API, merged into the configuration's lists. */
import type { Database } from "bun:sqlite";

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

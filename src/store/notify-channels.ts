/**
 * Notification channels made through the API, and the enabled switch of channels from the config
 * file. A row holds the channel's plain settings as JSON and its secret fields already sealed
 * (`sealed`: field name to sealed value); sealing and opening are the notification module's, so
 * this file never sees a secret in the clear.
 */
import type { Database } from "bun:sqlite";

export interface NotifyChannelRow {
  name: string;
  type: string;
  /** Every field except the secret ones. */
  settings: Record<string, unknown>;
  /** Secret field name to its sealed value. */
  sealed: Record<string, string>;
  created_at: string;
  updated_at: string;
}

interface RawRow {
  name: string;
  type: string;
  settings: string;
  sealed: string;
  created_at: string;
  updated_at: string;
}

const parse = (r: RawRow): NotifyChannelRow => ({
  ...r,
  settings: JSON.parse(r.settings) as Record<string, unknown>,
  sealed: JSON.parse(r.sealed) as Record<string, string>,
});

export class NotifyChannelsRepo {
  constructor(private db: Database) {}

  list(): NotifyChannelRow[] {
    return (this.db.query("SELECT * FROM notify_channels ORDER BY name").all() as RawRow[]).map(parse);
  }

  get(name: string): NotifyChannelRow | null {
    const r = this.db.query("SELECT * FROM notify_channels WHERE name = ?").get(name) as RawRow | null;
    return r ? parse(r) : null;
  }

  /** false when a channel of that name exists. */
  insert(row: Omit<NotifyChannelRow, "created_at" | "updated_at">): boolean {
    const now = new Date().toISOString();
    return (
      this.db
        .query(
          `INSERT OR IGNORE INTO notify_channels (name, type, settings, sealed, created_at, updated_at)
           VALUES ($name, $type, $settings, $sealed, $now, $now)`,
        )
        .run({
          name: row.name,
          type: row.type,
          settings: JSON.stringify(row.settings),
          sealed: JSON.stringify(row.sealed),
          now,
        }).changes > 0
    );
  }

  /** false when there is no channel of that name. */
  update(row: Omit<NotifyChannelRow, "created_at" | "updated_at">): boolean {
    return (
      this.db
        .query(
          "UPDATE notify_channels SET settings = $settings, sealed = $sealed, updated_at = $now WHERE name = $name",
        )
        .run({
          name: row.name,
          settings: JSON.stringify(row.settings),
          sealed: JSON.stringify(row.sealed),
          now: new Date().toISOString(),
        }).changes > 0
    );
  }

  delete(name: string): boolean {
    return this.db.query("DELETE FROM notify_channels WHERE name = ?").run(name).changes > 0;
  }

  /** The enabled switch set through the API for channels from the config file, by name. */
  toggles(): Map<string, boolean> {
    const rows = this.db.query("SELECT name, enabled FROM notify_toggles").all() as {
      name: string;
      enabled: number;
    }[];
    return new Map(rows.map((r) => [r.name, r.enabled === 1]));
  }

  setToggle(name: string, enabled: boolean): void {
    this.db
      .query(
        "INSERT INTO notify_toggles (name, enabled) VALUES ($name, $enabled) ON CONFLICT (name) DO UPDATE SET enabled = excluded.enabled",
      )
      .run({ name, enabled: enabled ? 1 : 0 });
  }
}

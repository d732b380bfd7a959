/**
 * The settings table: small key/value state that outlives a restart (the proxy mode, whether the
 * community rules were imported). Read once at open and kept in memory; `read` asks the database,
 * since another process (`sluice serve`) may have changed a value since.
 */
import type { Database } from "bun:sqlite";

export class SettingsRepo {
  #cache = new Map<string, string>();
  #put;
  constructor(private db: Database) {
    for (const r of db.query("SELECT key, value FROM settings").all() as { key: string; value: string }[])
      this.#cache.set(r.key, r.value);
    this.#put = db.query(
      "INSERT INTO settings (key, value) VALUES ($key, $value) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    );
  }

  /** The value as this process last read or wrote it. */
  get(key: string): string | null {
    return this.#cache.get(key) ?? null;
  }

  /** The value the database holds now. */
  read(key: string): string | null {
    return (
      (this.db.query("SELECT value FROM settings WHERE key = ?").get(key) as { value: string } | null)
        ?.value ?? null
    );
  }

  /** Remember the value at once; write it (throws when the database is busy: the caller queues `write`). */
  set(key: string, value: string): void {
    this.#cache.set(key, value);
    this.write(key, value);
  }

  write(key: string, value: string): void {
    this.#put.run({ key, value });
  }
}

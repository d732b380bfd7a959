/**
 * What every repository shares: row and parameter types, the statement builders, filters and
 * paging. Statements bind named parameters (`$column`, from an object whose keys are the column
 * names; the database is opened with `strict: true`, so a missing parameter is an error, never a
 * silent NULL).
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";

export type Row = Record<string, unknown>;
export type Params = SQLQueryBindings[];
/** A value one parameter binds. */
export type Value = string | bigint | number | boolean | null;
/** Named parameters: column name → value. */
export type Named = Record<string, Value>;

export const DAY_MS = 86_400_000;

/** Start of the UTC day `days - 1` days before today (days=1 → today). */
export function sinceDays(days: number, now = Date.now()): number {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return today - (days - 1) * DAY_MS;
}

export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A column name as SQL needs it (`end` is a keyword). */
const quoted = (c: string) => (c === "end" ? '"end"' : c);

/** `a, b, "end"`: a column list for SELECT. */
export function columnList(columns: readonly string[]): string {
  return columns.map(quoted).join(", ");
}

/** `INSERT INTO table (a, b) VALUES ($a, $b)`, followed by `tail` (ON CONFLICT, RETURNING). */
export function insertSql(table: string, columns: readonly string[], tail = ""): string {
  return `INSERT INTO ${table} (${columnList(columns)}) VALUES (${columns.map((c) => `$${c}`).join(", ")}) ${tail}`;
}

/** Whether an error is SQLite saying the database is busy or locked (by another process). */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: string })?.code ?? "";
  return code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED");
}

export function jsonOrNull<T>(v: unknown): T | null {
  if (typeof v !== "string") return null;
  try {
    return JSON.parse(v) as T;
  } catch {
    return null;
  }
}

/** A LIKE operand that matches `text` literally (`%`, `_` and `\` escaped; used with ESCAPE '\'). */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export type Where = { parts: string[]; params: Params };

/** `key = ?` for each of `keys` that `f` sets. */
export function equalities<F extends object>(f: F, keys: (keyof F & string)[]): Where {
  const parts: string[] = [];
  const params: Params = [];
  for (const k of keys) {
    const v = f[k];
    if (v !== undefined) {
      parts.push(`${k} = ?`);
      params.push(v as SQLQueryBindings);
    }
  }
  return { parts, params };
}

/** `(a LIKE ? OR b LIKE ? …)` over `columns`, each matching `text` anywhere; pushed onto `where`. */
export function containsAny(where: Where, columns: readonly string[], text: string): void {
  where.parts.push(`(${columns.map((c) => `${c} LIKE ? ESCAPE '\\'`).join(" OR ")})`);
  const like = `%${likeEscape(text)}%`;
  for (const _ of columns) where.params.push(like);
}

export function whereSql({ parts, params }: Where): { sql: string; params: Params } {
  return { sql: parts.length ? `WHERE ${parts.join(" AND ")}` : "", params };
}

/** Every row of `select` (`SELECT … FROM t`) under `where`, by descending id, a page at a time. */
export function* newestFirst(
  db: Database,
  select: string,
  { sql, params }: { sql: string; params: Params },
  pageSize: number,
): Generator<Row> {
  const q = db.query(`${select} ${sql ? `${sql} AND` : "WHERE"} id < ? ORDER BY id DESC LIMIT ?`);
  let beforeId = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const rows = q.all(...params, beforeId, pageSize) as Row[];
    if (rows.length === 0) return;
    yield* rows;
    beforeId = rows[rows.length - 1]!.id as number;
    if (rows.length < pageSize) return;
  }
}

/** `SELECT COUNT(*)` of a statement's rows. */
export function countOf(db: Database, sql: string, params: Params = []): number {
  return (db.query(`SELECT COUNT(*) AS n FROM ${sql}`).get(...params) as { n: number }).n;
}

/**
 * What a repository over a table of timed rows offers the store: deleting rows older than the
 * retention cutoff (the store runs it at open and hourly). Returns the rows deleted.
 */
export interface Prunable {
  prune(cutoffMs: number): number;
}

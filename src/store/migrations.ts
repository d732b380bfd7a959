/**
 * Versioned schema of `sluice.db`. Each migration runs once, in order, inside a transaction; the
 * applied version is kept in `PRAGMA user_version`. Append new migrations, never edit old ones.
 * A migration is SQL, or a function when it needs more than SQL (bun:sqlite has no user-defined
 * SQL functions, so rewriting values row by row is done in JavaScript).
 *
 * Longer than most files, and growing by design: a migration is never edited or removed once
 * released, so the file is the schema's whole history, in order.
 */
import type { Database } from "bun:sqlite";
import { shownTarget } from "../core/request-url.ts";
import { loadBuiltinRules } from "../detect/builtin.ts";
import { keyDigest } from "../policy/mask.ts";
import { sinceDays } from "./sql.ts";

export interface MigrationContext {
  /** The installation key stored hashes are keyed with (loaded or created on first call). */
  hmacKey(): Uint8Array;
  /** Run `fn` once the migration's transaction has committed. */
  afterCommit(fn: () => void): void;
}

type Migration = string | ((db: Database, ctx: MigrationContext) => void);

/**
 * Key the hashes stored before hashes were keyed. `content_hash` and `api_key_hash` held plain
 * SHA-256 digests of the matched value and of the client's credential: a short value (an SSN, a card
 * number, an email address) could be recovered by hashing guesses. The values themselves were never
 * stored, so a row cannot be hashed afresh; instead its digest is keyed: `HMAC(key, old digest)`, which
 * is exactly what new rows hold for the same value (mask.ts computes `content_hash` as the keyed
 * digest), so deduplication carries on across the upgrade and no plain digest is left. `value_hash`
 * was keyed already. Rows that other processes' system findings keyed by their own text (scan
 * errors, MCP events) are keyed too; they only lose their match with later rows of the same text.
 */
function keyStoredHashes(db: Database, ctx: MigrationContext): void {
  const count = (db.query("SELECT COUNT(*) AS n FROM findings").get() as { n: number }).n;
  if (count === 0) return;
  const key = ctx.hmacKey();
  const read = db.query(
    "SELECT id, content_hash, api_key_hash FROM findings WHERE id > ? ORDER BY id LIMIT 1000",
  );
  const write = db.query("UPDATE findings SET content_hash = ?, api_key_hash = ? WHERE id = ?");
  let last = 0;
  for (;;) {
    const rows = read.all(last) as { id: number; content_hash: string; api_key_hash: string | null }[];
    if (rows.length === 0) break;
    for (const r of rows) {
      const apiKey = r.api_key_hash === null ? null : keyDigest(r.api_key_hash, key).slice(0, 16);
      write.run(keyDigest(r.content_hash, key), apiKey, r.id);
    }
    last = rows[rows.length - 1]!.id;
  }
  ctx.afterCommit(() => {
    // Rewriting index entries moves cells between pages and leaves the old digests in the unused
    // space of pages (secure_delete does not reach it): rebuild the file, then empty the write-ahead
    // log, so that no plain digest stays on disk. Once, at the upgrade.
    db.run("VACUUM");
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  });
}

/**
 * Policy provenance. `rules.action_by_user`: whether the user set the action of a rule (then it beats
 * `detectors.<name>.action`); the action of a rule that was not shipped is the user's, and a shipped
 * rule whose stored action differs from what ships was changed by the user. `findings.action_source`
 * says where a finding's action came from, `findings.matched_rules` every rule that matched its place.
 */
function recordActionProvenance(db: Database): void {
  db.run(`
    ALTER TABLE rules ADD COLUMN action_by_user INTEGER NOT NULL DEFAULT 0;
    UPDATE rules SET action_by_user = 1 WHERE source != 'builtin' AND action != '';
    ALTER TABLE findings ADD COLUMN action_source TEXT NOT NULL DEFAULT '';
    ALTER TABLE findings ADD COLUMN matched_rules TEXT;
  `);
  const shipped = new Map(loadBuiltinRules().map((r) => [r.name, r.action]));
  const changed = db.query("UPDATE rules SET action_by_user = 1 WHERE name = ?");
  for (const r of db.query("SELECT name, action FROM rules WHERE source = 'builtin'").all() as {
    name: string;
    action: string;
  }[]) {
    const def = shipped.get(r.name);
    if (def !== undefined && def !== r.action && r.action !== "") changed.run(r.name);
  }
}

export const MIGRATIONS: Migration[] = [
  // 1: initial schema
  `
  CREATE TABLE findings (
    id INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    ts_ms INTEGER NOT NULL,
    last_seen TEXT NOT NULL,
    severity TEXT NOT NULL,
    detector TEXT NOT NULL,
    finding_type TEXT NOT NULL,
    rule TEXT NOT NULL DEFAULT '',
    action TEXT NOT NULL,
    provider TEXT NOT NULL DEFAULT 'unknown',
    client TEXT NOT NULL DEFAULT '',
    path TEXT NOT NULL DEFAULT '',
    start INTEGER NOT NULL DEFAULT 0,
    "end" INTEGER NOT NULL DEFAULT 0,
    preview TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    decoded TEXT,
    request_id TEXT NOT NULL DEFAULT '',
    transport TEXT NOT NULL DEFAULT 'http',
    session_id TEXT NOT NULL DEFAULT '',
    account_id TEXT,
    device_id TEXT,
    source_ip TEXT,
    working_directory TEXT,
    git_branch TEXT,
    os_platform TEXT,
    client_name TEXT,
    api_key_hash TEXT,
    model TEXT,
    seen_count INTEGER NOT NULL DEFAULT 1,
    content_hash TEXT NOT NULL,
    value_hash TEXT,
    origin_pid INTEGER NOT NULL DEFAULT 0,
    UNIQUE (content_hash, session_id)
  );
  CREATE INDEX findings_ts ON findings (ts_ms);
  CREATE INDEX findings_severity ON findings (severity, ts_ms);
  CREATE INDEX findings_detector ON findings (detector, ts_ms);
  CREATE INDEX findings_action ON findings (action, ts_ms);
  CREATE INDEX findings_type ON findings (finding_type, ts_ms);
  CREATE INDEX findings_provider ON findings (provider, ts_ms);
  CREATE INDEX findings_client ON findings (client, ts_ms);
  CREATE INDEX findings_model ON findings (model);
  CREATE INDEX findings_session ON findings (session_id, ts_ms);
  CREATE INDEX findings_account ON findings (account_id, ts_ms);
  CREATE INDEX findings_wd ON findings (working_directory);
  CREATE INDEX findings_rule ON findings (rule);

  CREATE TABLE sessions (
    session_id TEXT PRIMARY KEY,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    last_ms INTEGER NOT NULL,
    finding_count INTEGER NOT NULL DEFAULT 0,
    request_count INTEGER NOT NULL DEFAULT 0,
    provider TEXT,
    model TEXT,
    client TEXT,
    account_id TEXT,
    device_id TEXT,
    working_directory TEXT,
    git_branch TEXT,
    sev_critical INTEGER NOT NULL DEFAULT 0,
    sev_high INTEGER NOT NULL DEFAULT 0,
    sev_warning INTEGER NOT NULL DEFAULT 0,
    sev_info INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX sessions_last ON sessions (last_ms);

  CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    ts_ms INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    client TEXT NOT NULL DEFAULT '',
    model TEXT,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    action TEXT NOT NULL,
    finding_count INTEGER NOT NULL DEFAULT 0,
    bytes INTEGER NOT NULL DEFAULT 0,
    duration_ms REAL NOT NULL DEFAULT 0,
    upstream_status INTEGER,
    session_id TEXT NOT NULL DEFAULT '',
    account_id TEXT,
    mode TEXT NOT NULL DEFAULT 'active',
    error TEXT
  );
  CREATE INDEX audit_ts ON audit (ts_ms);
  CREATE INDEX audit_action ON audit (action, ts_ms);
  CREATE INDEX audit_provider ON audit (provider, ts_ms);
  CREATE INDEX audit_client ON audit (client);

  CREATE TABLE rules (
    name TEXT PRIMARY KEY,
    pattern TEXT NOT NULL,
    detector TEXT NOT NULL,
    severity TEXT NOT NULL,
    action TEXT NOT NULL DEFAULT '',
    enabled INTEGER NOT NULL DEFAULT 1,
    tier TEXT NOT NULL,
    source TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    validator TEXT,
    keywords TEXT,
    entropy REAL,
    examples TEXT,
    negative_examples TEXT,
    hit_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );

  CREATE TABLE allowlists (
    id INTEGER PRIMARY KEY,
    list_type TEXT NOT NULL,
    pattern TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'api',
    created_at TEXT NOT NULL,
    UNIQUE (list_type, pattern)
  );

  CREATE TABLE ws_connections (
    connection_id TEXT PRIMARY KEY,
    opened_at TEXT NOT NULL,
    opened_ms INTEGER NOT NULL,
    closed_at TEXT,
    state TEXT NOT NULL,
    target_url TEXT NOT NULL,
    origin TEXT,
    provider TEXT NOT NULL DEFAULT 'unknown',
    session_id TEXT NOT NULL DEFAULT '',
    duration_ms REAL NOT NULL DEFAULT 0,
    frames_in INTEGER NOT NULL DEFAULT 0,
    frames_out INTEGER NOT NULL DEFAULT 0,
    findings INTEGER NOT NULL DEFAULT 0,
    close_code INTEGER
  );
  CREATE INDEX ws_opened ON ws_connections (opened_ms);

  CREATE TABLE mcp_events (
    id INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    ts_ms INTEGER NOT NULL,
    kind TEXT NOT NULL,
    server TEXT NOT NULL,
    message TEXT NOT NULL,
    severity TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{}',
    origin_pid INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX mcp_events_ts ON mcp_events (ts_ms);

  CREATE TABLE mcp_tool_baselines (
    server_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    definition TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    PRIMARY KEY (server_id, tool_name)
  );

  CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  // 2: per-day counters per dimension, kept by triggers, so stats stay fast over many findings
  `
  CREATE TABLE finding_rollup (
    day INTEGER NOT NULL,
    dim TEXT NOT NULL,
    key TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (dim, day, key)
  ) WITHOUT ROWID;
  CREATE TRIGGER findings_rollup_insert AFTER INSERT ON findings BEGIN
    INSERT INTO finding_rollup (day, dim, key, n) VALUES
      (NEW.ts_ms / 86400000, 'all', '', 1),
      (NEW.ts_ms / 86400000, 'severity', NEW.severity, 1),
      (NEW.ts_ms / 86400000, 'detector', NEW.detector, 1),
      (NEW.ts_ms / 86400000, 'action', NEW.action, 1),
      (NEW.ts_ms / 86400000, 'provider', NEW.provider, 1),
      (NEW.ts_ms / 86400000, 'client', COALESCE(NEW.client, ''), 1),
      (NEW.ts_ms / 86400000, 'model', COALESCE(NEW.model, ''), 1),
      (NEW.ts_ms / 86400000, 'type', NEW.finding_type, 1),
      (NEW.ts_ms / 86400000, 'hour', CAST((NEW.ts_ms / 3600000) % 24 AS TEXT), 1),
      (NEW.ts_ms / 86400000, 'account', COALESCE(NEW.account_id, ''), 1),
      (NEW.ts_ms / 86400000, 'project', COALESCE(NEW.working_directory, ''), 1),
      (NEW.ts_ms / 86400000, 'decoded', CASE WHEN NEW.decoded IS NULL THEN '' ELSE '1' END, 1)
    ON CONFLICT (dim, day, key) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER findings_rollup_delete AFTER DELETE ON findings BEGIN
    UPDATE finding_rollup SET n = n - 1
      WHERE day = OLD.ts_ms / 86400000 AND (
        (dim = 'all' AND key = '')
        OR (dim = 'severity' AND key = OLD.severity)
        OR (dim = 'detector' AND key = OLD.detector)
        OR (dim = 'action' AND key = OLD.action)
        OR (dim = 'provider' AND key = OLD.provider)
        OR (dim = 'client' AND key = COALESCE(OLD.client, ''))
        OR (dim = 'model' AND key = COALESCE(OLD.model, ''))
        OR (dim = 'type' AND key = OLD.finding_type)
        OR (dim = 'hour' AND key = CAST((OLD.ts_ms / 3600000) % 24 AS TEXT))
        OR (dim = 'account' AND key = COALESCE(OLD.account_id, ''))
        OR (dim = 'project' AND key = COALESCE(OLD.working_directory, ''))
        OR (dim = 'decoded' AND key = CASE WHEN OLD.decoded IS NULL THEN '' ELSE '1' END)
      );
  END;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'all', '', COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'severity', severity, COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'detector', detector, COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'action', action, COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'provider', provider, COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'client', COALESCE(client, ''), COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'model', COALESCE(model, ''), COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'type', finding_type, COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'hour', CAST((ts_ms / 3600000) % 24 AS TEXT), COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'account', COALESCE(account_id, ''), COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'project', COALESCE(working_directory, ''), COUNT(*) FROM findings GROUP BY 1, 3;
  INSERT INTO finding_rollup (day, dim, key, n) SELECT ts_ms / 86400000, 'decoded', CASE WHEN decoded IS NULL THEN '' ELSE '1' END, COUNT(*) FROM findings GROUP BY 1, 3;
  `,
  // 3: stored hashes keyed with the installation key
  keyStoredHashes,
  // 4: how each request's client signed in and whether sluice could read it; per client and sign-in
  // mode when traffic was last seen, and per day what could not be read (kept by a trigger, so
  // `sluice doctor` and the Overview read a few rows however long the audit table is)
  `
  ALTER TABLE audit ADD COLUMN login TEXT;
  ALTER TABLE audit ADD COLUMN unscanned TEXT;
  CREATE TABLE client_traffic (
    client TEXT NOT NULL,
    login TEXT NOT NULL,
    provider TEXT NOT NULL,
    first_ms INTEGER NOT NULL,
    last_ms INTEGER NOT NULL,
    requests INTEGER NOT NULL,
    PRIMARY KEY (client, login, provider)
  ) WITHOUT ROWID;
  CREATE TABLE client_unscanned (
    day INTEGER NOT NULL,
    client TEXT NOT NULL,
    reason TEXT NOT NULL,
    n INTEGER NOT NULL,
    last_ms INTEGER NOT NULL,
    last_path TEXT NOT NULL,
    PRIMARY KEY (day, client, reason)
  ) WITHOUT ROWID;
  CREATE TRIGGER audit_client_traffic AFTER INSERT ON audit BEGIN
    INSERT INTO client_traffic (client, login, provider, first_ms, last_ms, requests)
      VALUES (NEW.client, COALESCE(NEW.login, ''), NEW.provider, NEW.ts_ms, NEW.ts_ms, 1)
      ON CONFLICT (client, login, provider) DO UPDATE SET
        first_ms = MIN(first_ms, excluded.first_ms), last_ms = MAX(last_ms, excluded.last_ms),
        requests = requests + 1;
    INSERT INTO client_unscanned (day, client, reason, n, last_ms, last_path)
      SELECT NEW.ts_ms / 86400000, NEW.client, NEW.unscanned, 1, NEW.ts_ms, NEW.path WHERE NEW.unscanned IS NOT NULL
      ON CONFLICT (day, client, reason) DO UPDATE SET n = n + 1,
        last_path = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last_path ELSE last_path END,
        last_ms = MAX(last_ms, excluded.last_ms);
  END;
  INSERT INTO client_traffic (client, login, provider, first_ms, last_ms, requests)
    SELECT client, '', provider, MIN(ts_ms), MAX(ts_ms), COUNT(*) FROM audit GROUP BY client, provider;
  `,
  // 5: where a finding's action came from, and whether the user set a rule's action
  recordActionProvenance,
  // 6: WebSocket targets recorded with credentials in their URL lose them
  stripWsTargetCredentials,
  // 7: notification channels made through the API (secret fields sealed, see notify/secret-box.ts)
  //    and the enabled switch of channels from the config file
  `
  CREATE TABLE IF NOT EXISTS notify_channels (
    name TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    settings TEXT NOT NULL,
    sealed TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS notify_toggles (
    name TEXT PRIMARY KEY,
    enabled INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // 8: the rules that decided each request's action, so the audit says why a request was blocked
  addAuditRules,
  // 9: and where that action came from (a rule's own action, the detector's, the default)
  addAuditActionSource,
  // 10: requests blocked, redacted and alerted per day, tool and project, kept by a trigger, so
  //     that the Overview's counts do not depend on the audit table's size
  addRequestRollup,
];

/**
 * `request_rollup`: per UTC day, acted action, tool and project (the session's working directory
 * when the request was written; '' for none), how many requests. Filled from the audit rows of the
 * last 7 days, then by a trigger on each acted audit row.
 */
function addRequestRollup(db: Database): void {
  db.run(`
  CREATE TABLE IF NOT EXISTS request_rollup (
    day INTEGER NOT NULL,
    action TEXT NOT NULL,
    client TEXT NOT NULL,
    project TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (day, action, client, project)
  ) WITHOUT ROWID`);
  db.run(`
  CREATE TRIGGER IF NOT EXISTS audit_request_rollup AFTER INSERT ON audit
    WHEN NEW.action IN ('block', 'redact', 'alert') BEGIN
    INSERT INTO request_rollup (day, action, client, project, n)
      VALUES (NEW.ts_ms / 86400000, NEW.action, NEW.client, COALESCE((SELECT working_directory FROM sessions
        WHERE NEW.session_id != '' AND session_id = NEW.session_id), ''), 1)
      ON CONFLICT (day, action, client, project) DO UPDATE SET n = n + 1;
  END`);
  db.query(
    `INSERT OR REPLACE INTO request_rollup (day, action, client, project, n)
     SELECT a.ts_ms / 86400000, a.action, a.client, COALESCE(s.working_directory, ''), COUNT(*)
     FROM audit a LEFT JOIN sessions s ON a.session_id != '' AND s.session_id = a.session_id
     WHERE a.action IN ('block', 'redact', 'alert') AND a.ts_ms >= ?
     GROUP BY 1, 2, 3, 4`,
  ).run(sinceDays(7));
}

/** `audit.action_source` (idempotent, as `addAuditRules`). */
function addAuditActionSource(db: Database): void {
  const columns = db.query("PRAGMA table_info(audit)").all() as { name: string }[];
  if (!columns.some((c) => c.name === "action_source"))
    db.run("ALTER TABLE audit ADD COLUMN action_source TEXT");
}

/** `audit.rules` (idempotent: a database rebuilt from a newer one may have it already). */
function addAuditRules(db: Database): void {
  const columns = db.query("PRAGMA table_info(audit)").all() as { name: string }[];
  if (!columns.some((c) => c.name === "rules")) db.run("ALTER TABLE audit ADD COLUMN rules TEXT");
}

/**
 * `/ws?url=` targets were recorded as the client wrote them, so `ws://user:token@host/` kept its
 * credentials in `ws_connections.target_url` (and the API returned them). Rows are rewritten as the
 * proxy records targets now: scheme, host, port and path only.
 */
function stripWsTargetCredentials(db: Database): void {
  const rows = db
    .query("SELECT connection_id, target_url FROM ws_connections WHERE target_url LIKE '%@%'")
    .all() as { connection_id: string; target_url: string }[];
  const write = db.query("UPDATE ws_connections SET target_url = ? WHERE connection_id = ?");
  for (const row of rows) {
    const url = URL.parse(row.target_url);
    write.run(url ? shownTarget(url) : "(unreadable URL)", row.connection_id);
  }
}

/** Bring the database to the newest schema. Returns the version it started from. */
export function migrate(db: Database, keys: Pick<MigrationContext, "hmacKey">): number {
  const row = db.query("PRAGMA user_version").get() as { user_version: number };
  const from = row.user_version;
  if (from > MIGRATIONS.length) {
    throw new Error(
      `sluice.db has schema version ${from}, newer than this sluice (${MIGRATIONS.length}); upgrade sluice`,
    );
  }
  for (let v = from; v < MIGRATIONS.length; v++) {
    const after: (() => void)[] = [];
    db.transaction(() => {
      const m = MIGRATIONS[v]!;
      if (typeof m === "string") db.run(m);
      else m(db, { ...keys, afterCommit: (fn) => after.push(fn) });
      db.run(`PRAGMA user_version = ${v + 1}`);
    })();
    for (const fn of after) fn();
  }
  return from;
}

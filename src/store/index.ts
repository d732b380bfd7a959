/**
 * The store: SQLite at `{config_dir}/sluice.db` (WAL), one repository per table, written off the
 * request path. `openStore` opens and migrates the database, makes the repositories, and subscribes
 * to the bus: each event becomes a queued write (writer.ts), the audit file gets its line, rule hit
 * counts are summed in memory and written every minute, old rows are pruned hourly.
 *
 * Other processes (`sluice mcp`) call `openStore()` on the same file with their own Bus; their rows
 * carry their pid (`origin_pid`), so the dashboard's live stream can pick them up.
 *
 * A new table: its migration (migrations.ts), its repository in a file of its own (writes with
 * named parameters; `Prunable` when its rows expire with `store.retention_days`), and one line in
 * `repositories` below.
 */
import { Database } from "bun:sqlite";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Config, type CustomRuleConfig, customRuleDef, defaultConfig } from "../config/schema.ts";
import type { Bus } from "../core/bus.ts";
import type { Logger } from "../core/log.ts";
import type { RuleDef } from "../core/types.ts";
import { loadOrCreateHmacKey } from "../policy/hmac-key.ts";
import { AllowlistsRepo } from "./allowlists.ts";
import { AuditRepo } from "./audit.ts";
import { AuditLog } from "./audit-log.ts";
import { ClientTrafficRepo } from "./client-traffic.ts";
import { FindingsRepo } from "./findings.ts";
import { listen } from "./listen.ts";
import { McpRepo } from "./mcp.ts";
import { migrate } from "./migrations.ts";
import { NotifyChannelsRepo } from "./notify-channels.ts";
import type { AuditStats, QueueStats } from "./records.ts";
import { RulesRepo } from "./rules.ts";
import { SessionsRepo } from "./sessions.ts";
import { SettingsRepo } from "./settings.ts";
import { isBusy, type Prunable } from "./sql.ts";
import { Writer } from "./writer.ts";
import { WsRepo } from "./ws.ts";

export type { AuditStats, QueueStats } from "./records.ts";

export interface StoreOptions {
  configDir: string;
  bus: Bus;
  log: Logger;
  /** Database file; default `{configDir}/sluice.db`. ":memory:" for tests. */
  path?: string;
  /** Audit JSONL directory; default `{configDir}/audit`. */
  auditDir?: string;
  /** The configuration in force (retention, audit rotation limits); defaults until given. */
  config?: () => Config;
  /** Queue bound (default 10,000 events). */
  maxQueue?: number;
  /** How often queued events are written (default 50 ms). */
  flushIntervalMs?: number;
  /** How often rule hit counts are written (default 60 s). */
  hitFlushIntervalMs?: number;
  /** The installation key stored hashes are keyed with; default `{configDir}/hmac.key`. */
  hmacKey?: Uint8Array;
}

/** Every repository of the store, by the name the store exposes it under. */
function repositories(db: Database) {
  return {
    findings: new FindingsRepo(db),
    sessions: new SessionsRepo(db),
    audit: new AuditRepo(db),
    rules: new RulesRepo(db),
    allowlists: new AllowlistsRepo(db),
    ws: new WsRepo(db),
    mcp: new McpRepo(db),
    settings: new SettingsRepo(db),
    clients: new ClientTrafficRepo(db),
    notifyChannels: new NotifyChannelsRepo(db),
  };
}
export type Repositories = Readonly<ReturnType<typeof repositories>>;

export interface Store extends Repositories {
  readonly path: string;
  readonly auditDir: string;
  readonly db: Database;
  /** Enabled rules in force: imported community rules, YAML custom_rules and dashboard rules. */
  enabledRules(): RuleDef[];
  /** Imports the community rules the first time only (returns how many were imported; 0 after). */
  importDefaultRules(rules: RuleDef[]): number;
  /** YAML `custom_rules` are authoritative: add, update, and remove stale config-sourced rules. */
  reconcileConfigRules(rules: CustomRuleConfig[]): void;
  /** Called whenever the rule set changes (API edits, imports); the runtime bumps its rules version. */
  onRulesChanged(fn: () => void): void;
  getSetting(key: string): string | null;
  /** A setting as the database holds it now: another process (`sluice serve`) may have changed it since open. */
  readSetting(key: string): string | null;
  setSetting(key: string, value: string): void;
  /** Give the store the configuration in force (retention, audit rotation). */
  setConfigSource(fn: () => Config): void;
  queueStats(): QueueStats;
  /** What the JSONL audit trail wrote and lost. */
  auditStats(): AuditStats;
  /** Delete rows older than `store.retention_days` (runs at open and hourly). Returns rows deleted. */
  prune(now?: number): number;
  /** Write pending rule hit counts now (also every 60 s). */
  flushHits(): void;
  /** Write everything queued. */
  flush(): Promise<void>;
  /**
   * Write a batch of what is queued now, the audit file's lines with it, rather than at the write
   * timer's next tick (the proxy calls it when it goes quiet between turns).
   */
  writeNow(): void;
  close(): Promise<void>;
}

/** The database file, created 0600 in a 0700 directory, in WAL mode, migrated to the newest schema. */
function openDatabase(path: string, hmacKey: () => Uint8Array): Database {
  if (path !== ":memory:") mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  const db = new Database(path, { create: true, strict: true });
  if (path !== ":memory:") {
    // Another process may hold the database at this instant: give startup a moment.
    db.run("PRAGMA busy_timeout = 2000");
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = NORMAL");
    try {
      chmodSync(path, 0o600);
    } catch {
      /* not ours to chmod */
    }
  }
  migrate(db, { hmacKey });
  // From here on a locked database fails at once: the writer retries, the event loop never waits.
  db.run("PRAGMA busy_timeout = 0");
  return db;
}

const isPrunable = (repo: object): repo is Prunable => typeof (repo as Prunable).prune === "function";

/** Delete every repository's rows older than `days` days before `now`, in one transaction. */
function pruneAll(db: Database, repos: Repositories, days: number, now: number): number {
  const cutoff = now - days * 86_400_000;
  let n = 0;
  db.transaction(() => {
    for (const repo of Object.values(repos)) if (isPrunable(repo)) n += repo.prune(cutoff);
  })();
  return n;
}

/**
 * Open the store. The one place where its parts meet: the database, the repositories, the write
 * queue with the audit file's lines, the bus listeners, the hit-count and pruning timers, and the
 * Store they make up (one or two lines each, which is why this function is longer than most).
 */
export function openStore(opts: StoreOptions): Store {
  const path = opts.path ?? join(opts.configDir, "sluice.db");
  const auditDir = opts.auditDir ?? join(opts.configDir, "audit");
  const { log, bus } = opts;
  let config: () => Config = opts.config ?? (() => defaultConfig());
  const maxQueue = opts.maxQueue ?? 10_000;
  const db = openDatabase(path, () => opts.hmacKey ?? loadOrCreateHmacKey(opts.configDir));
  const repos = repositories(db);
  const { rules, settings } = repos;

  const audit = new AuditLog(auditDir, {
    limits: () => ({ maxFileBytes: config().logging.max_file_bytes, maxFiles: config().logging.max_files }),
    log,
    maxPending: maxQueue,
  });
  const writer: Writer = new Writer(db, log, {
    maxQueue,
    intervalMs: opts.flushIntervalMs ?? 50,
    beforeBatch: () => void audit.flush(),
  });
  const hits = new Map<string, number>();
  const unsub = listen(bus, { repos, writer, audit, hits, pid: process.pid });

  const flushHits = () => {
    if (hits.size === 0) return;
    try {
      rules.addHits(new Map(hits));
      hits.clear();
    } catch (e) {
      if (isBusy(e)) return; // kept for the next time
      hits.clear();
      writer.failed((e as Error).message);
    }
  };
  const prune = (now = Date.now()): number => {
    const days = config().store.retention_days;
    try {
      return days ? pruneAll(db, repos, days, now) : 0;
    } catch (e) {
      if (!isBusy(e)) log.warn("store: retention pruning failed", { error: (e as Error).message });
      return 0;
    }
  };
  const timers = [
    setInterval(flushHits, opts.hitFlushIntervalMs ?? 60_000),
    setInterval(() => prune(), 3_600_000),
  ];
  for (const t of timers) t.unref?.();
  prune();

  let closed = false;
  const store: Store = {
    ...repos,
    path,
    auditDir,
    db,
    enabledRules: () => rules.enabled(),
    importDefaultRules: (defs) => rules.importOnce(defs, settings),
    reconcileConfigRules(custom) {
      rules.reconcileConfig(custom.map(customRuleDef), (rule, source) =>
        log.warn("custom_rules: a rule with this name exists already and is kept", { rule, source }),
      );
    },
    onRulesChanged: (fn) => void rules.onChanged(fn),
    getSetting: (k) => settings.get(k),
    readSetting: (k) => settings.read(k),
    setSetting(k, v) {
      try {
        settings.set(k, v);
      } catch (e) {
        if (!isBusy(e)) throw e;
        writer.enqueue(() => settings.write(k, v));
      }
    },
    setConfigSource: (fn) => void (config = fn),
    queueStats: () => ({ ...writer.stats, queued: writer.queued }),
    auditStats: () => ({ ...audit.stats }),
    prune,
    flushHits,
    async flush() {
      await writer.flush();
      flushHits();
    },
    writeNow: () => writer.drainNow(),
    async close() {
      if (closed) return;
      for (const u of unsub) u();
      await store.flush();
      audit.close();
      closed = true;
      writer.close();
      for (const t of timers) clearInterval(t);
      try {
        db.close();
      } catch {
        /* already closed */
      }
    },
  };
  return store;
}

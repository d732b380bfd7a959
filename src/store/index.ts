/**
 * The store: SQLite at `{config_dir}/sluice.db`. Subscribes to the bus and writes off the request path.
 * SEAM (owned by store/dashboard): the Store members below are what the runtime relies on; more may be added.
 *
 * Writes: bus listeners only push onto a bounded in-memory queue (never touching SQLite), a timer
 * drains it in batches inside one transaction. The connection uses `busy_timeout = 0`, so a database
 * locked by another process fails fast (SQLITE_BUSY): the batch stays queued and is retried with a
 * backoff; a full queue drops the event and counts it (`queueStats().dropped`) and logs once a minute.
 *
 * Other processes (`sluice mcp`) call `openStore()` on the same file with their own Bus; their rows
 * carry their pid (`origin_pid`), so the dashboard's live stream can pick them up.
 */
import { Database } from "bun:sqlite";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Config, type CustomRuleConfig, customRuleDef, defaultConfig } from "../config/schema.ts";
import type { Bus, BusEvents, FindingEvent, RequestEvent, WsConnectionEvent } from "../core/bus.ts";
import type { Logger } from "../core/log.ts";
import type { RuleDef } from "../core/types.ts";
import { AuditLog, auditLine, maskPath } from "./audit-log.ts";
import { migrate } from "./migrations.ts";
import {
  AllowlistsRepo,
  AuditRepo,
  FindingsRepo,
  McpRepo,
  RulesRepo,
  SessionsRepo,
  WsRepo,
} from "./repos.ts";

export type { AllowlistEntry, AllowlistType, FindingFilter, RuleRecord } from "./repos.ts";
export { ALLOWLIST_TYPES, isoDate, ruleFromRow, sinceDays } from "./repos.ts";

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
  /** How often rule hit counts are written (default 60 s, SPEC §8). */
  hitFlushIntervalMs?: number;
}

export interface QueueStats {
  queued: number;
  dropped: number;
  written: number;
  errors: number;
  /** Batches deferred because the database was busy/locked. */
  busy_retries: number;
  last_error: string | null;
}

export interface Store {
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
  /** Write everything queued. */
  flush(): Promise<void>;
  close(): Promise<void>;

  // ---- added by the store/dashboard work
  readonly path: string;
  readonly auditDir: string;
  readonly db: Database;
  readonly findings: FindingsRepo;
  readonly sessions: SessionsRepo;
  readonly audit: AuditRepo;
  readonly rules: RulesRepo;
  readonly allowlists: AllowlistsRepo;
  readonly ws: WsRepo;
  readonly mcp: McpRepo;
  /** Give the store the configuration in force (retention, audit rotation). */
  setConfigSource(fn: () => Config): void;
  queueStats(): QueueStats;
  /** Delete rows older than `store.retention_days` (runs at open and hourly). Returns rows deleted. */
  prune(now?: number): number;
  /** Write pending rule hit counts now (also every 60 s). */
  flushHits(): void;
}

type QueueItem =
  | { kind: "finding"; ts: number; ev: FindingEvent }
  | { kind: "request"; ev: RequestEvent; path: string }
  | { kind: "ws"; ts: number; ev: WsConnectionEvent }
  | { kind: "mcp"; ts: number; ev: BusEvents["mcp-event"] }
  | { kind: "setting"; key: string; value: string };

const isBusy = (e: unknown) => {
  const code = (e as { code?: string })?.code ?? "";
  return code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED");
};

export function openStore(opts: StoreOptions): Store {
  const path = opts.path ?? join(opts.configDir, "sluice.db");
  const auditDir = opts.auditDir ?? join(opts.configDir, "audit");
  const log = opts.log;
  let config: () => Config = opts.config ?? (() => defaultConfig());
  const maxQueue = opts.maxQueue ?? 10_000;
  const pid = process.pid;

  if (path !== ":memory:") {
    mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  }
  const db = new Database(path, { create: true });
  db.run("PRAGMA busy_timeout = 0");
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
  migrate(db);
  db.run("PRAGMA busy_timeout = 0");

  const findings = new FindingsRepo(db);
  const sessions = new SessionsRepo(db);
  const audit = new AuditRepo(db);
  const rules = new RulesRepo(db);
  const allowlists = new AllowlistsRepo(db);
  const ws = new WsRepo(db);
  const mcp = new McpRepo(db);
  const auditLog = new AuditLog(auditDir, () => ({
    maxFileBytes: config().logging.max_file_bytes,
    maxFiles: config().logging.max_files,
  }));

  const settings = new Map<string, string>();
  for (const r of db.query("SELECT key, value FROM settings").all() as { key: string; value: string }[])
    settings.set(r.key, r.value);

  // ------------------------------------------------------------ write queue
  const queue: QueueItem[] = [];
  const pendingAudit: string[] = [];
  const stats: QueueStats = {
    queued: 0,
    dropped: 0,
    written: 0,
    errors: 0,
    busy_retries: 0,
    last_error: null,
  };
  const hits = new Map<string, number>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let backoff = 0;
  let closed = false;
  let lastDropLog = 0;
  const interval = opts.flushIntervalMs ?? 50;

  const schedule = (ms = interval) => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = null;
      drain();
    }, ms);
    timer.unref?.();
  };

  const enqueue = (item: QueueItem) => {
    if (closed) return;
    if (queue.length >= maxQueue) {
      stats.dropped++;
      const now = Date.now();
      if (now - lastDropLog > 60_000) {
        lastDropLog = now;
        log.warn("store: write queue full, events dropped", { dropped: stats.dropped, queue: maxQueue });
      }
      return;
    }
    queue.push(item);
    schedule();
  };

  const insertFinding = db.query(
    `INSERT INTO findings (ts, ts_ms, last_seen, severity, detector, finding_type, rule, action, provider, client, path, start, "end",
      preview, description, decoded, request_id, transport, session_id, account_id, device_id, source_ip, working_directory,
      git_branch, os_platform, client_name, api_key_hash, model, seen_count, content_hash, value_hash, origin_pid)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
     ON CONFLICT (content_hash, session_id) DO UPDATE SET seen_count = seen_count + 1, last_seen = excluded.last_seen
     RETURNING seen_count`,
  );
  const upsertSession = db.query(
    `INSERT INTO sessions (session_id, first_seen, last_seen, last_ms, finding_count, request_count, provider, model, client,
      account_id, device_id, working_directory, git_branch, sev_critical, sev_high, sev_warning, sev_info)
     VALUES (?1, ?2, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
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
  const insertAudit = db.query(
    `INSERT INTO audit (ts, ts_ms, request_id, provider, client, model, method, path, action, finding_count, bytes, duration_ms,
      upstream_status, session_id, account_id, mode, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const upsertWs = db.query(
    `INSERT INTO ws_connections (connection_id, opened_at, opened_ms, closed_at, state, target_url, origin, provider, session_id,
      duration_ms, frames_in, frames_out, findings, close_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (connection_id) DO UPDATE SET closed_at = excluded.closed_at, state = excluded.state,
      duration_ms = excluded.duration_ms, frames_in = excluded.frames_in, frames_out = excluded.frames_out,
      findings = excluded.findings, close_code = excluded.close_code`,
  );
  const insertMcp = db.query(
    "INSERT INTO mcp_events (ts, ts_ms, kind, server, message, severity, data, origin_pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const putSetting = db.query(
    "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  );

  const sev = (s: string) => [
    s === "critical" ? 1 : 0,
    s === "high" ? 1 : 0,
    s === "warning" ? 1 : 0,
    s === "info" ? 1 : 0,
  ];

  const writeItem = (item: QueueItem) => {
    switch (item.kind) {
      case "finding": {
        const { finding: f, session: s, provider } = item.ev;
        const iso = new Date(item.ts).toISOString();
        const row = insertFinding.get(
          iso,
          item.ts,
          iso,
          f.severity,
          f.detector,
          f.finding_type,
          f.rule ?? "",
          f.action,
          provider,
          s.client ?? "",
          f.path ?? "",
          f.start ?? 0,
          f.end ?? 0,
          f.preview ?? "",
          f.description ?? "",
          f.decoded ?? null,
          item.ev.request_id ?? "",
          item.ev.transport,
          s.session_id ?? "",
          s.account_id,
          s.device_id,
          s.source_ip,
          s.working_directory,
          s.git_branch,
          s.os_platform,
          s.client_name,
          s.api_key_hash,
          s.model,
          f.content_hash,
          f.value_hash,
          pid,
        ) as { seen_count: number };
        if (s.session_id && item.ev.transport !== "system") {
          const isNew = row.seen_count === 1;
          upsertSession.run(
            s.session_id,
            iso,
            item.ts,
            isNew ? 1 : 0,
            0,
            provider === "unknown" ? null : provider,
            s.model,
            s.client || null,
            s.account_id,
            s.device_id,
            s.working_directory,
            s.git_branch,
            ...(isNew ? sev(f.severity) : [0, 0, 0, 0]),
          );
        }
        return;
      }
      case "request": {
        const e = item.ev;
        const ms = Date.parse(e.ts) || Date.now();
        insertAudit.run(
          e.ts,
          ms,
          e.request_id,
          e.provider,
          e.client ?? "",
          e.model,
          e.method,
          item.path,
          e.action,
          e.finding_count,
          e.bytes,
          e.duration_ms,
          e.upstream_status,
          e.session_id ?? "",
          e.account_id,
          e.mode,
          e.error,
        );
        if (e.session_id)
          upsertSession.run(
            e.session_id,
            new Date(ms).toISOString(),
            ms,
            0,
            1,
            e.provider === "unknown" ? null : e.provider,
            e.model,
            e.client || null,
            e.account_id,
            null,
            null,
            null,
            0,
            0,
            0,
            0,
          );
        return;
      }
      case "ws": {
        const e = item.ev;
        const opened = e.phase === "open" ? item.ts : item.ts - (e.duration_ms ?? 0);
        upsertWs.run(
          e.connection_id,
          new Date(opened).toISOString(),
          opened,
          e.phase === "close" ? new Date(item.ts).toISOString() : null,
          e.phase === "close" ? "closed" : "open",
          e.target_url,
          e.origin,
          e.provider,
          e.session_id ?? "",
          e.duration_ms ?? 0,
          e.frames_in ?? 0,
          e.frames_out ?? 0,
          e.findings ?? 0,
          e.close_code,
        );
        return;
      }
      case "mcp": {
        const { kind, server, message, severity, ...data } = item.ev;
        insertMcp.run(
          new Date(item.ts).toISOString(),
          item.ts,
          String(kind),
          String(server),
          String(message),
          String(severity),
          JSON.stringify(data),
          pid,
        );
        return;
      }
      case "setting":
        putSetting.run(item.key, item.value);
        return;
    }
  };

  const writeAuditFile = () => {
    if (pendingAudit.length === 0) return;
    try {
      auditLog.append(pendingAudit);
      pendingAudit.length = 0;
    } catch (e) {
      stats.errors++;
      stats.last_error = `audit log: ${(e as Error).message}`;
      if (pendingAudit.length > maxQueue) pendingAudit.splice(0, pendingAudit.length - maxQueue);
    }
  };

  /**
   * Write one batch. It shares the event loop with the proxy, so a batch stops after ~8 ms of work
   * (or 2,000 items) and the rest waits for the next tick. A busy database keeps everything queued.
   */
  const drain = (): void => {
    writeAuditFile();
    if (queue.length === 0) return;
    const budgetEnd = performance.now() + 8;
    let done = 0;
    try {
      db.transaction(() => {
        done = 0;
        for (const item of queue) {
          writeItem(item);
          done++;
          if (done >= 2000 || performance.now() > budgetEnd) break;
        }
      })();
      queue.splice(0, done);
      stats.written += done;
      backoff = 0;
    } catch (e) {
      if (isBusy(e)) {
        stats.busy_retries++;
        backoff = Math.min(2000, backoff ? backoff * 2 : 100);
        schedule(backoff);
        return;
      }
      // A bad item must not wedge the queue: write the batch one by one, skipping failures.
      const batch = queue.splice(0, done + 1);
      for (let i = 0; i < batch.length; i++) {
        try {
          writeItem(batch[i]!);
          stats.written++;
        } catch (err) {
          if (isBusy(err)) {
            queue.unshift(...batch.slice(i));
            break;
          }
          stats.errors++;
          stats.last_error = (err as Error).message;
        }
      }
      log.warn("store: write failed", { error: (e as Error).message });
    }
    if (queue.length > 0) schedule(backoff || 0);
  };

  // ------------------------------------------------------------ bus
  const bus = opts.bus;
  const unsub = [
    bus.on("finding", (ev) => {
      if (ev.finding.rule) hits.set(ev.finding.rule, (hits.get(ev.finding.rule) ?? 0) + 1);
      enqueue({ kind: "finding", ts: Date.now(), ev });
    }),
    bus.on("request", (ev) => {
      // Masked once for both the audit file and the audit table.
      const path = maskPath(String(ev.path ?? ""));
      try {
        pendingAudit.push(auditLine(ev, path));
      } catch {
        stats.errors++;
      }
      enqueue({ kind: "request", ev, path });
    }),
    bus.on("ws-connection", (ev) => enqueue({ kind: "ws", ts: Date.now(), ev })),
    bus.on("mcp-event", (ev) => enqueue({ kind: "mcp", ts: Date.now(), ev })),
  ];

  const flushHits = () => {
    if (hits.size === 0) return;
    const copy = new Map(hits);
    try {
      rules.addHits(copy);
      hits.clear();
    } catch (e) {
      if (!isBusy(e)) {
        hits.clear();
        stats.errors++;
        stats.last_error = (e as Error).message;
      }
    }
  };
  const hitTimer = setInterval(flushHits, opts.hitFlushIntervalMs ?? 60_000);
  hitTimer.unref?.();

  const prune = (now = Date.now()): number => {
    const days = config().store.retention_days;
    if (!days) return 0;
    const cutoff = now - days * 86_400_000;
    try {
      let n = 0;
      db.transaction(() => {
        n += db.query("DELETE FROM findings WHERE ts_ms < ?").run(cutoff).changes;
        n += db.query("DELETE FROM audit WHERE ts_ms < ?").run(cutoff).changes;
        n += db.query("DELETE FROM ws_connections WHERE opened_ms < ?").run(cutoff).changes;
        n += db.query("DELETE FROM mcp_events WHERE ts_ms < ?").run(cutoff).changes;
        n += db.query("DELETE FROM sessions WHERE last_ms < ?").run(cutoff).changes;
      })();
      return n;
    } catch (e) {
      if (!isBusy(e)) log.warn("store: retention pruning failed", { error: (e as Error).message });
      return 0;
    }
  };
  const pruneTimer = setInterval(() => prune(), 3_600_000);
  pruneTimer.unref?.();
  prune();

  const store: Store = {
    path,
    auditDir,
    db,
    findings,
    sessions,
    audit,
    rules,
    allowlists,
    ws,
    mcp,
    enabledRules: () => rules.enabled(),
    importDefaultRules(defs) {
      if (settings.has("rules.default_imported")) return 0;
      let n = 0;
      rules.transaction(() => {
        for (const r of defs) if (rules.insert({ ...r, tier: r.tier ?? "community", source: "builtin" })) n++;
        putSetting.run("rules.default_imported", new Date().toISOString());
      });
      settings.set("rules.default_imported", new Date().toISOString());
      if (n > 0) rules.changed();
      return n;
    },
    reconcileConfigRules(custom) {
      let changed = false;
      const wanted = new Set(custom.map((c) => c.name));
      rules.transaction(() => {
        for (const c of custom) {
          const existing = rules.get(c.name);
          const def: RuleDef = { ...customRuleDef(c), enabled: existing?.enabled ?? true };
          if (!existing) {
            rules.insert(def);
            changed = true;
          } else if (existing.source !== "config") {
            log.warn("custom_rules: a rule with this name exists already and is kept", {
              rule: c.name,
              source: existing.source,
            });
          } else {
            const same =
              existing.pattern === def.pattern &&
              existing.detector === def.detector &&
              existing.severity === def.severity &&
              existing.action === def.action &&
              existing.description === def.description &&
              JSON.stringify(existing.tags) === JSON.stringify(def.tags) &&
              (existing.validator ?? null) === (def.validator ?? null) &&
              JSON.stringify(existing.keywords ?? null) === JSON.stringify(def.keywords ?? null);
            if (!same) {
              rules.update(c.name, def);
              changed = true;
            }
          }
        }
        for (const r of rules.all())
          if (r.source === "config" && !wanted.has(r.name)) {
            rules.delete(r.name);
            changed = true;
          }
      });
      if (changed) rules.changed();
    },
    onRulesChanged(fn) {
      rules.onChanged(fn);
    },
    getSetting: (k) => settings.get(k) ?? null,
    readSetting: (k) =>
      (db.query("SELECT value FROM settings WHERE key = ?").get(k) as { value: string } | null)?.value ??
      null,
    setSetting(k, v) {
      settings.set(k, v);
      try {
        putSetting.run(k, v);
      } catch (e) {
        if (!isBusy(e)) throw e;
        enqueue({ kind: "setting", key: k, value: v });
      }
    },
    setConfigSource(fn) {
      config = fn;
    },
    queueStats: () => ({ ...stats, queued: queue.length }),
    prune,
    flushHits,
    async flush() {
      if (timer) {
        clearTimeout(timer);
        timer = null;
      }
      // Bounded: a database locked for good must not hang shutdown.
      const deadline = Date.now() + 5000;
      for (;;) {
        drain();
        if (queue.length === 0 || Date.now() > deadline) break;
        if (timer) {
          clearTimeout(timer);
          timer = null;
        }
        await Bun.sleep(20);
      }
      flushHits();
      if (queue.length > 0) schedule(backoff || interval);
    },
    async close() {
      if (closed) return;
      for (const u of unsub) u();
      await store.flush();
      closed = true;
      if (timer) clearTimeout(timer);
      clearInterval(hitTimer);
      clearInterval(pruneTimer);
      if (queue.length > 0) log.warn("store: closing with unwritten events", { count: queue.length });
      try {
        db.close();
      } catch {
        /* already closed */
      }
    },
  };
  return store;
}

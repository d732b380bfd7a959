import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateConfig } from "../../src/config/load.ts";
import { Bus, type FindingEvent, type RequestEvent } from "../../src/core/bus.ts";
import { Logger } from "../../src/core/log.ts";
import { openStore, type Store } from "../../src/store/index.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { finding, request, rule, session } from "../helpers/records.ts";

const open: Store[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

function make(
  opts: { dir?: string; config?: Record<string, unknown>; maxQueue?: number; flushIntervalMs?: number } = {},
) {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "sluice-store-"));
  const bus = new Bus();
  const log = new Logger({ stderr: false, level: "debug" });
  const config = validateConfig(opts.config ?? {}).config;
  const store = openStore({
    configDir: dir,
    bus,
    log,
    config: () => config,
    flushIntervalMs: opts.flushIntervalMs ?? 5,
    maxQueue: opts.maxQueue,
  });
  open.push(store);
  return { dir, bus, log, store };
}

/** A finding event on the bus: defaults to an Anthropic HTTP request "r" of the default session. */
function emitFinding(bus: Bus, over: Partial<FindingEvent> = {}): void {
  bus.emit("finding", {
    finding: finding(),
    session: session(),
    provider: "anthropic",
    request_id: "r",
    transport: "http",
    ...over,
  });
}

describe("schema", () => {
  test("migrations run once, in WAL mode, and a reopen keeps the data", async () => {
    const { dir, store, bus } = make();
    expect((store.db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(
      MIGRATIONS.length,
    );
    expect((store.db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe(
      "wal",
    );
    expect(statSync(join(dir, "sluice.db")).mode & 0o777).toBe(0o600);
    emitFinding(bus);
    store.setSetting("proxy.mode", "passthrough");
    await store.close();
    open.pop();
    const again = make({ dir });
    expect(again.store.findings.count()).toBe(1);
    expect(again.store.getSetting("proxy.mode")).toBe("passthrough");
  });

  test("upgrading from schema 1 backfills the stats counters", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-store-"));
    const db = new Database(join(dir, "sluice.db"));
    db.run(MIGRATIONS[0] as string);
    db.run("PRAGMA user_version = 1");
    const now = Date.now();
    const iso = new Date(now).toISOString();
    db.run(
      `INSERT INTO findings (ts, ts_ms, last_seen, severity, detector, finding_type, action, content_hash)
       VALUES ('${iso}', ${now}, '${iso}', 'high', 'pii', 'email', 'log', 'h1')`,
    );
    db.close();
    const { store } = make({ dir });
    const stats = store.findings.stats(1);
    expect(stats.total_findings).toBe(1);
    expect(stats.by_severity).toEqual({ high: 1 });
    expect(stats.top_finding_types).toEqual([{ finding_type: "email", count: 1 }]);
  });

  test("upgrading to schema 5 learns which rule actions the user set", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-store-"));
    {
      const { store } = make({ dir });
      store.db.run("PRAGMA user_version = 4");
      store.db.run("ALTER TABLE rules DROP COLUMN action_by_user");
      store.db.run("ALTER TABLE findings DROP COLUMN action_source");
      store.db.run("ALTER TABLE findings DROP COLUMN matched_rules");
      const at = new Date().toISOString();
      const add = store.db.query(
        `INSERT INTO rules (name, pattern, detector, severity, action, tier, source, created_at, updated_at)
         VALUES (?, 'x', ?, 'high', ?, ?, ?, '${at}', '${at}')`,
      );
      add.run("iban", "pii", "alert", "community", "builtin"); // as shipped
      add.run("aws_access_key_id", "secrets", "log", "community", "builtin"); // changed by the user
      add.run("acme", "secrets", "block", "custom", "config");
      add.run("mine", "custom", "", "custom", "dashboard");
      open.splice(open.indexOf(store), 1);
      await store.close();
    }
    const { store } = make({ dir });
    const byUser = (name: string) => store.rules.get(name)?.action_by_user;
    expect([byUser("iban"), byUser("aws_access_key_id"), byUser("acme"), byUser("mine")]).toEqual([
      false,
      true,
      true,
      false,
    ]);
  });

  test("a database from a newer sluice is refused", () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-store-"));
    const db = new Database(join(dir, "sluice.db"));
    db.run(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    expect(() => make({ dir })).toThrow(/newer than this sluice/);
  });
});

describe("findings and sessions", () => {
  test("dedup on (content_hash, session_id) increments seen_count; another session is a new row", async () => {
    const { store, bus } = make();
    const f = finding();
    for (let i = 0; i < 3; i++) emitFinding(bus, { finding: f, request_id: `r${i}` });
    emitFinding(bus, { finding: f, session: session({ session_id: "sess-2" }), request_id: "r9" });
    await store.flush();
    const { findings, total } = store.findings.list({}, 10, 0);
    expect(total).toBe(2);
    const s1 = findings.find((r) => r.session_id === "sess-1")!;
    expect(s1.seen_count).toBe(3);
    expect(s1.preview).toBe("AKIA****MPLE");
    const sessions = store.sessions.list(10, 0);
    expect(sessions.total).toBe(2);
    const one = sessions.sessions.find((s) => s.session_id === "sess-1")!;
    expect(one.finding_count).toBe(1);
    expect(one).toMatchObject({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      account_id: "acct-1",
      device_id: "dev-1",
      working_directory: "/home/dev/project",
      git_branch: "main",
    });
    const active = store.sessions.active(Date.now() - 86_400_000, 10);
    expect(active.sessions[0]!.severity).toEqual({ critical: 1, high: 0, warning: 0, info: 0 });
  });

  test("system findings (mode_changed) do not create a session", async () => {
    const { store, bus } = make();
    emitFinding(bus, {
      finding: finding({ finding_type: "mode_changed", severity: "warning" }),
      session: session({ session_id: "system" }),
      provider: "unknown",
      request_id: "mode-1",
      transport: "system",
    });
    await store.flush();
    expect(store.findings.count()).toBe(1);
    expect(store.sessions.list(10, 0).total).toBe(0);
  });

  test("requests upsert the session and count requests", async () => {
    const { store, bus } = make();
    bus.emit("request", request());
    bus.emit("request", request({ request_id: "req-2" }));
    await store.flush();
    expect(store.sessions.get("sess-1")).toMatchObject({
      request_count: 2,
      finding_count: 0,
      provider: "anthropic",
    });
    expect(store.audit.list({}, 10, 0).total).toBe(2);
  });

  test("writeNow writes what is queued, and the audit file's lines, without waiting for the write timer", () => {
    const { store, bus } = make({ flushIntervalMs: 3_600_000 });
    bus.emit("request", request({ request_id: "req-now" }));
    expect(store.audit.list({}, 10, 0).total).toBe(0);
    store.writeNow();
    expect(store.queueStats().queued).toBe(0);
    expect(store.audit.list({}, 10, 0).total).toBe(1);
    expect(readFileSync(join(store.auditDir, "audit.jsonl"), "utf8")).toContain('"request_id":"req-now"');
  });
});

describe("audit trail", () => {
  test("JSONL lines: 0600 file in a 0700 dir, no api_key_hash, no body, credentials in the query masked", async () => {
    const { store, bus } = make();
    const ev = request({
      path: "/v1beta/models/x:generateContent?key=AIzaSyA1234567890abcdefghijklmnopqrstuv",
    }) as RequestEvent & {
      api_key_hash?: string;
      body?: string;
    };
    ev.api_key_hash = "f".repeat(64);
    ev.body = "secret body AKIAIOSFODNN7EXAMPLE";
    bus.emit("request", ev);
    await store.flush();
    const file = join(store.auditDir, "audit.jsonl");
    expect(statSync(store.auditDir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, "utf8");
    const line = JSON.parse(text.trim());
    expect(line.api_key_hash).toBeUndefined();
    expect(line.body).toBeUndefined();
    expect(text).not.toContain("AIzaSyA1234567890abcdefghijklmnopqrstuv");
    expect(text).not.toContain("AKIAIOSFODNN7EXAMPLE");
    expect(JSON.stringify(store.audit.list({}, 10, 0))).not.toContain(
      "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    );
    expect(line).toMatchObject({
      request_id: "req-1",
      provider: "anthropic",
      action: "pass",
      bytes: 1234,
      upstream_status: 200,
    });
  });

  test("rotates at logging.max_file_bytes keeping logging.max_files", async () => {
    const { store, bus } = make({ config: { logging: { max_file_bytes: 1024, max_files: 3 } } });
    for (let i = 0; i < 60; i++) {
      bus.emit("request", request({ request_id: `req-${i}` }));
      await store.flush();
    }
    const file = join(store.auditDir, "audit.jsonl");
    expect(existsSync(`${file}.1`)).toBe(true);
    expect(existsSync(`${file}.2`)).toBe(true);
    expect(existsSync(`${file}.3`)).toBe(false);
    expect(statSync(file).size).toBeLessThanOrEqual(1024);
    expect(statSync(`${file}.1`).mode & 0o777).toBe(0o600);
  });
});

describe("queue", () => {
  test("a full queue is counted, not silent", async () => {
    const { store, bus, log } = make({ maxQueue: 5 });
    for (let i = 0; i < 12; i++) emitFinding(bus);
    expect(store.queueStats().dropped).toBe(7);
    expect(log.recent.some((l) => l.includes("write queue full"))).toBe(true);
    await store.flush();
    expect(store.findings.count()).toBe(5);
  });

  test("a database locked by another process: emitting stays instant, rows land after the lock is released", async () => {
    const { dir, store, bus } = make();
    const dbPath = join(dir, "sluice.db");
    const holder = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(dbPath)});
         db.run("BEGIN EXCLUSIVE"); db.run("INSERT INTO settings (key, value) VALUES ('lock', '1')");
         console.log("locked"); for await (const _ of console) { break; } db.run("COMMIT"); console.log("released");`,
      ],
      { stdin: "pipe", stdout: "pipe" },
    );
    const reader = holder.stdout.getReader();
    const dec = new TextDecoder();
    let out = "";
    while (!out.includes("locked")) out += dec.decode((await reader.read()).value);
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) emitFinding(bus);
    expect(performance.now() - t0).toBeLessThan(50);
    // Let a few drain attempts hit the lock.
    await new Promise<void>((resolve) => {
      const check = () => (store.queueStats().busy_retries > 0 ? resolve() : setTimeout(check, 5));
      check();
    });
    expect(store.queueStats().queued).toBe(200);
    holder.stdin.write("go\n");
    holder.stdin.end();
    await holder.exited;
    await store.flush();
    expect(store.findings.count()).toBe(200);
    expect(store.queueStats().dropped).toBe(0);
  });
});

describe("writer", () => {
  test("a bad event is skipped and counted; the good ones around it are written", async () => {
    const { store, bus } = make();
    emitFinding(bus, { request_id: "a" });
    const bad = finding();
    (bad as { content_hash: unknown }).content_hash = null;
    emitFinding(bus, { finding: bad, request_id: "b" });
    emitFinding(bus, { request_id: "c" });
    await store.flush();
    expect(store.findings.count()).toBe(2);
    expect(store.queueStats()).toMatchObject({ errors: 1, queued: 0 });
  });

  test("writing a large backlog never holds the event loop for long", async () => {
    const { store, bus } = make({ maxQueue: 50_000 });
    for (let i = 0; i < 20_000; i++) emitFinding(bus, { session: session({ session_id: `s${i % 100}` }) });
    // The pause is measured in this process's CPU time, not wall time: on a busy machine the process
    // may wait for a core between two ticks, which says nothing about how long a batch holds the loop.
    let last = process.cpuUsage();
    let worstMs = 0;
    let ticks = 0;
    await new Promise<void>((resolve) => {
      const tick = () => {
        const used = process.cpuUsage(last);
        last = process.cpuUsage();
        worstMs = Math.max(worstMs, (used.user + used.system) / 1000);
        ticks++;
        if (store.queueStats().queued === 0) resolve();
        else setTimeout(tick, 1);
      };
      tick();
    });
    expect(store.findings.count()).toBe(20_000);
    // 20,000 rows with their rollup triggers are written in many batches, the loop turning between them.
    expect(ticks).toBeGreaterThan(5);
    expect(worstMs).toBeLessThan(60);
  }, 30_000);
});

describe("rules", () => {
  test("community rules import once; YAML custom_rules reconcile; hit counts flush", async () => {
    const { store, bus } = make();
    let notified = 0;
    store.onRulesChanged(() => notified++);
    expect(
      store.importDefaultRules([rule(), rule({ name: "github-pat", pattern: "ghp_[A-Za-z0-9]{36}" })]),
    ).toBe(2);
    expect(store.importDefaultRules([rule()])).toBe(0);
    expect(notified).toBe(1);
    const custom = validateConfig({
      custom_rules: [{ name: "acme-id", pattern: "ACME-[0-9]{6}", severity: "high", action: "block" }],
    }).config.custom_rules;
    store.reconcileConfigRules(custom);
    expect(store.rules.get("acme-id")).toMatchObject({ source: "config", tier: "custom", action: "block" });
    expect(store.enabledRules().map((r) => r.name)).toEqual(["acme-id", "aws-access-key", "github-pat"]);
    store.reconcileConfigRules(custom);
    expect(notified).toBe(2);
    store.reconcileConfigRules([]);
    expect(store.rules.get("acme-id")).toBeNull();
    expect(notified).toBe(3);
    emitFinding(bus);
    emitFinding(bus);
    expect(store.rules.get("aws-access-key")!.hit_count).toBe(0);
    store.flushHits();
    expect(store.rules.get("aws-access-key")!.hit_count).toBe(2);
  });
});

describe("retention", () => {
  test("rows older than store.retention_days are pruned", async () => {
    const { store, bus } = make({ config: { store: { retention_days: 7 } } });
    emitFinding(bus);
    bus.emit("request", request());
    await store.flush();
    expect(store.prune(Date.now() + 3 * 86_400_000)).toBe(0);
    expect(store.prune(Date.now() + 8 * 86_400_000)).toBeGreaterThanOrEqual(3);
    expect(store.findings.count()).toBe(0);
    expect(store.audit.count()).toBe(0);
    // The rollup counters behind /stats follow deletions.
    expect(store.findings.stats(30).total_findings).toBe(0);
    expect(store.findings.stats(30).by_severity).toEqual({});
  });
});

describe("MCP", () => {
  test("tool baselines and events from another process are visible with their pid", async () => {
    const { dir, store } = make();
    expect(store.mcp.putBaseline("srv", "read_file", "a".repeat(64), { name: "read_file" })).toBeNull();
    const prev = store.mcp.putBaseline("srv", "read_file", "b".repeat(64), {
      name: "read_file",
      description: "x",
    });
    expect(prev!.sha256).toBe("a".repeat(64));
    expect(store.mcp.getBaseline("srv", "read_file")!.definition).toEqual({
      name: "read_file",
      description: "x",
    });
    expect(store.mcp.baselines()).toHaveLength(1);

    const child = Bun.spawn(
      [
        process.execPath,
        "-e",
        `import { openStore } from ${JSON.stringify(join(import.meta.dir, "../../src/store/index.ts"))};
         import { Bus } from ${JSON.stringify(join(import.meta.dir, "../../src/core/bus.ts"))};
         import { Logger } from ${JSON.stringify(join(import.meta.dir, "../../src/core/log.ts"))};
         const bus = new Bus(); const s = openStore({ configDir: ${JSON.stringify(dir)}, bus, log: new Logger({ stderr: false }) });
         bus.emit("mcp-event", { kind: "tool_drift", server: "srv", message: "read_file changed", severity: "high", tool: "read_file" });
         await s.close();`,
      ],
      { stdout: "inherit", stderr: "inherit" },
    );
    expect(await child.exited).toBe(0);
    const rows = store.mcp.eventsFromOtherProcesses(0, process.pid);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: "tool_drift", server: "srv", data: { tool: "read_file" } });
  });
});

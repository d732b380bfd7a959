/**
 * Dashboard API benchmark: `/api/v1/stats` and a filtered `/api/v1/findings` page over 100,000
 * findings and 100,000 audited requests (spread over 90 days, 20,000 sessions with 30 projects,
 * three providers; 30 % of requests blocked, redacted or alerted), through the real dashboard on a
 * socket (startDashboard, 127.0.0.1:0). Baseline in the same run: the same calls over 1,000 of each,
 * and `/api/v1/status`, which does not touch the findings table. Target: each ≤ 100 ms.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDashboard } from "../../src/dashboard/index.ts";
import { openStore, type Store } from "../../src/store/index.ts";
import { makeRuntime } from "../dashboard/_env.ts";
import type { BenchTable } from "./index.ts";

const SEV = ["critical", "high", "warning", "info"];
const DET = ["secrets", "pii", "proprietary", "custom"];
const ACT = ["log", "alert", "block", "redact"];
const PROV = ["anthropic", "openai", "gemini"];
const CLIENTS = ["claude-cli/2.1.328", "codex_exec/0.169.0", "GeminiCLI-tui/0.61.0"];

/** Insert `n` synthetic findings straight into the table (the bench measures reads, not the queue). */
function seed(store: Store, n: number) {
  const now = Date.now();
  const q = store.db.query(
    `INSERT INTO findings (ts, ts_ms, last_seen, severity, detector, finding_type, rule, action, provider, client, path, preview,
      session_id, account_id, working_directory, model, content_hash, seen_count)
     VALUES (?1, ?2, ?1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'messages[0].content', 'AKIA****MPLE', ?10, ?11, ?12, ?13, ?14, 1)`,
  );
  store.db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const ms = now - Math.floor((i / n) * 90 * 86_400_000);
      const iso = new Date(ms).toISOString();
      q.run(
        iso,
        ms,
        SEV[i % 4]!,
        DET[(i >> 2) % 4]!,
        `type_${i % 37}`,
        `rule-${i % 43}`,
        ACT[(i >> 3) % 4]!,
        PROV[i % 3]!,
        CLIENTS[i % 3]!,
        `sess-${i % 20_000}`,
        `acct-${i % 50}`,
        `/home/dev/project-${i % 30}`,
        `model-${i % 5}`,
        new Bun.CryptoHasher("sha256").update(`v${i}`).digest("hex"),
      );
    }
  })();
}

const REQUEST_ACTIONS = ["pass", "pass", "pass", "pass", "pass", "pass", "pass", "block", "redact", "alert"];

/** Insert `n` synthetic audited requests and their sessions (what `request_actions` of /stats reads). */
function seedRequests(store: Store, n: number) {
  const now = Date.now();
  const audit = store.db.query(
    `INSERT INTO audit (ts, ts_ms, request_id, provider, client, model, method, path, action, finding_count, session_id)
     VALUES (?1, ?2, ?3, ?4, ?5, 'model-1', 'POST', '/v1/messages', ?6, ?7, ?8)`,
  );
  const session = store.db.query(
    `INSERT INTO sessions (session_id, first_seen, last_seen, last_ms, provider, client, working_directory)
     VALUES (?1, ?2, ?2, ?3, 'anthropic', 'claude-code', ?4) ON CONFLICT (session_id) DO NOTHING`,
  );
  store.db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const ms = now - Math.floor((i / n) * 90 * 86_400_000);
      const iso = new Date(ms).toISOString();
      const action = REQUEST_ACTIONS[i % 10]!;
      audit.run(
        iso,
        ms,
        `req-${i}`,
        PROV[i % 3]!,
        ["claude-code", "codex", "gemini-cli"][i % 3]!,
        action,
        action === "pass" ? 0 : 1,
        `sess-${i % 20_000}`,
      );
      session.run(`sess-${i % 20_000}`, iso, ms, `/home/dev/project-${i % 30}`);
    }
  })();
}

async function timeGet(url: string, runs: number): Promise<{ p50: number; p95: number; max: number }> {
  for (let i = 0; i < 3; i++) await (await fetch(url)).arrayBuffer(); // warm up
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = await fetch(url);
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
    xs.push(performance.now() - t0);
  }
  xs.sort((a, b) => a - b);
  return { p50: xs[Math.floor(xs.length / 2)]!, p95: xs[Math.floor(xs.length * 0.95)]!, max: xs.at(-1)! };
}

async function measure(n: number) {
  const dir = mkdtempSync(join(tmpdir(), "sluice-apibench-"));
  let store: Store;
  const rt = makeRuntime(() => store, {}, dir);
  store = openStore({ configDir: dir, bus: rt.bus, log: rt.log });
  const t0 = performance.now();
  seed(store, n);
  seedRequests(store, n);
  const seedMs = performance.now() - t0;
  const h = await startDashboard(rt, store, { port: 0, hostname: "127.0.0.1" });
  const base = `http://127.0.0.1:${h.port}`;
  const out = {
    seedMs,
    status: await timeGet(`${base}/api/v1/status`, 30),
    stats: await timeGet(`${base}/api/v1/stats?days=30`, 30),
    advanced: await timeGet(`${base}/api/v1/stats/advanced?days=30`, 30),
    findings: await timeGet(
      `${base}/api/v1/findings?severity=critical&provider=anthropic&days=30&limit=50&offset=100`,
      30,
    ),
    deepPage: await timeGet(`${base}/api/v1/findings?detector=pii&limit=50&offset=20000`, 30),
    sessions: await timeGet(`${base}/api/v1/sessions/dashboard?limit=10`, 30),
  };
  await h.stop();
  await store.close();
  return out;
}

export async function run(): Promise<BenchTable[]> {
  const small = await measure(1_000);
  const big = await measure(100_000);
  const f = (x: number) => x.toFixed(2);
  const row = (name: string, k: Exclude<keyof typeof big, "seedMs">, target: string) => [
    name,
    f(small[k].p50),
    f(big[k].p50),
    f(big[k].p95),
    f(big[k].max),
    target,
    target === "≤ 100" ? (big[k].p95 <= 100 ? "yes" : "NO") : "",
  ];
  return [
    {
      title: "Dashboard API: response time over HTTP (ms), 1,000 vs 100,000 findings and audited requests",
      columns: ["endpoint", "p50 @1k", "p50 @100k", "p95 @100k", "max @100k", "target", "met"],
      rows: [
        row("GET /api/v1/status (baseline, no findings query)", "status", ""),
        row("GET /api/v1/stats?days=30", "stats", "≤ 100"),
        row("GET /api/v1/findings?severity&provider&days=30 page 3", "findings", "≤ 100"),
        row("GET /api/v1/findings?detector=pii offset=20000", "deepPage", ""),
        row("GET /api/v1/stats/advanced?days=30", "advanced", ""),
        row("GET /api/v1/sessions/dashboard", "sessions", ""),
      ],
      notes: [
        `30 timed calls each after 3 warm-up calls, sequential, real socket. Seeding 100,000 findings and 100,000 requests took ${(big.seedMs / 1000).toFixed(1)} s.`,
      ],
    },
  ];
}

/**
 * `/api/v1/stats` `request_actions`: requests blocked, redacted and alerted today and over the last
 * 7 days, per tool and per project, counted from the audit (one per request, under its action).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RequestEvent } from "../../src/core/bus.ts";
import type { RequestActions } from "../../src/store/records.ts";
import { DAY_MS } from "../../src/store/sql.ts";
import { finding, request, session } from "../helpers/records.ts";
import { type Env, makeEnv } from "./_env.ts";

let env: Env;
const now = Date.now();
const startOfToday = Math.floor(now / DAY_MS) * DAY_MS;

let n = 0;
function emitRequest(over: Partial<RequestEvent>): void {
  env.rt.bus.emit(
    "request",
    request({
      request_id: `req-${++n}`,
      ts: new Date(now).toISOString(),
      client: "claude-code",
      path: "/v1/messages",
      bytes: 100,
      duration_ms: 1,
      session_id: "s-app",
      account_id: null,
      ...over,
    }),
  );
}

beforeAll(async () => {
  env = await makeEnv();
  // The sessions and their projects, as a finding of each brings them.
  for (const [id, wd] of [
    ["s-app", "/home/dev/app"],
    ["s-api", "/home/dev/api"],
  ] as const)
    env.rt.bus.emit("finding", {
      finding: finding(),
      session: session({ session_id: id, working_directory: wd }),
      provider: "anthropic",
      request_id: "r",
      transport: "http",
    });
  const at = (ms: number) => new Date(ms).toISOString();
  // Today: 2 blocked (app), 1 redacted (api, codex), 1 alerted with no session, passes and logs.
  emitRequest({ action: "block", finding_count: 3 });
  emitRequest({ action: "block", ts: at(startOfToday) });
  emitRequest({ action: "redact", client: "codex", session_id: "s-api" });
  emitRequest({ action: "alert", client: "gemini-cli", session_id: "" });
  emitRequest({ action: "pass" });
  emitRequest({ action: "log" });
  // Earlier this week: 1 blocked (api), 1 alerted (app); before the week: 1 blocked, not counted.
  emitRequest({ action: "block", session_id: "s-api", ts: at(startOfToday - 1) });
  emitRequest({ action: "alert", ts: at(startOfToday - 6 * DAY_MS) });
  emitRequest({ action: "block", ts: at(startOfToday - 6 * DAY_MS - 1) });
  await env.store.flush();
});
afterAll(() => env.close());

test("today and the week, in total, per tool and per project; a request counts once", async () => {
  const r = await env.json<{ request_actions: RequestActions }>("GET", "/api/v1/stats");
  expect(r.status).toBe(200);
  const { today, week } = r.body.request_actions;
  expect(today.since).toBe(new Date(startOfToday).toISOString());
  expect(week.since).toBe(new Date(startOfToday - 6 * DAY_MS).toISOString());
  expect([today.block, today.redact, today.alert]).toEqual([2, 1, 1]);
  expect([week.block, week.redact, week.alert]).toEqual([3, 1, 2]);
  expect(today.by_client).toEqual([
    { client: "claude-code", block: 2, redact: 0, alert: 0 },
    { client: "codex", block: 0, redact: 1, alert: 0 },
    { client: "gemini-cli", block: 0, redact: 0, alert: 1 },
  ]);
  expect(week.by_client).toEqual([
    { client: "claude-code", block: 3, redact: 0, alert: 1 },
    { client: "codex", block: 0, redact: 1, alert: 0 },
    { client: "gemini-cli", block: 0, redact: 0, alert: 1 },
  ]);
  expect(today.by_project).toEqual([
    { project: "/home/dev/app", block: 2, redact: 0, alert: 0 },
    { project: "/home/dev/api", block: 0, redact: 1, alert: 0 },
    { project: null, block: 0, redact: 0, alert: 1 },
  ]);
  expect(week.by_project).toEqual([
    { project: "/home/dev/app", block: 2, redact: 0, alert: 1 },
    { project: "/home/dev/api", block: 1, redact: 1, alert: 0 },
    { project: null, block: 0, redact: 0, alert: 1 },
  ]);
});

test("nothing acted on: zeros and empty lists", async () => {
  const empty = await makeEnv();
  try {
    const r = await empty.json<{ request_actions: RequestActions }>("GET", "/api/v1/stats");
    for (const w of [r.body.request_actions.today, r.body.request_actions.week]) {
      expect([w.block, w.redact, w.alert]).toEqual([0, 0, 0]);
      expect(w.by_client).toEqual([]);
      expect(w.by_project).toEqual([]);
    }
  } finally {
    await empty.close();
  }
});

test("a database from before the per-day counts gets them from its audit rows of the week", async () => {
  const old = await makeEnv();
  const dir = old.dir;
  try {
    // As an older sluice left it: no counts, no trigger, schema version 9.
    old.store.db.run("DROP TRIGGER audit_request_rollup");
    old.store.db.run("DROP TABLE request_rollup");
    old.store.db.run("PRAGMA user_version = 9");
    const insert = old.store.db.query(
      `INSERT INTO audit (ts, ts_ms, request_id, provider, client, method, path, action, session_id)
       VALUES (?1, ?2, ?3, 'anthropic', ?4, 'POST', '/v1/messages', ?5, '')`,
    );
    for (const [i, ms, client, action] of [
      [1, now, "claude-code", "block"],
      [2, now, "claude-code", "pass"],
      [3, startOfToday - DAY_MS, "codex", "redact"],
      [4, startOfToday - 8 * DAY_MS, "codex", "block"],
    ] as const)
      insert.run(new Date(ms).toISOString(), ms, `old-${i}`, client, action);
  } finally {
    await old.close();
  }
  const reopened = await makeEnv({ dir });
  try {
    const r = await reopened.json<{ request_actions: RequestActions }>("GET", "/api/v1/stats");
    const { today, week } = r.body.request_actions;
    expect([today.block, today.redact, today.alert]).toEqual([1, 0, 0]);
    expect(week.by_client).toEqual([
      { client: "claude-code", block: 1, redact: 0, alert: 0 },
      { client: "codex", block: 0, redact: 1, alert: 0 },
    ]);
  } finally {
    await reopened.close();
  }
});

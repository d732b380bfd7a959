/**
 * The dashboard API answers what its schemas declare (src/dashboard/schemas.ts, src/store/records.ts),
 * which the web UI's types derive from: a real sluice with the default rules, traffic of each kind
 * through the proxy (blocked, redacted, clean, a WebSocket), an allowlist entry added through the
 * API, then every JSON read of the UI checked against its schema, with no field missing, mistyped or
 * undeclared.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import * as api from "../../src/dashboard/schemas.ts";
import { AUDIT_FIELDS } from "../../src/store/audit.ts";
import { AUDIT_KEYS } from "../../src/store/audit-log.ts";
import { FindingDetail, RuleRecord } from "../../src/store/records.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { anthropicMessage, json, startUpstream, type Upstream } from "../helpers/upstream.ts";

let up: Upstream;
let s: InProcessSluice;
let csrf = "";

/** An AWS key id of the documented shape, made up for this run (blocked by the default rules). */
const AWS = `AKIA${Array.from({ length: 16 }, () => "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[Math.floor(Math.random() * 32)]).join("")}`;

const send = (body: unknown) =>
  fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "sk-ant-test",
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify(body),
  });

const message = (text: string) => ({
  model: "claude-sonnet-test",
  max_tokens: 8,
  metadata: { user_id: "user_abc_account_0f9e_session_5d2a" },
  messages: [{ role: "user", content: text }],
});

async function get(path: string): Promise<unknown> {
  const res = await fetch(`${s.dashboardUrl}${path}`);
  expect(res.status).toBe(200);
  return res.json();
}

/** Every way `body` departs from `schema`, as `path: message` lines ([] when it fits). */
function departures(schema: TSchema, body: unknown): string[] {
  return [...Value.Errors(schema, body)].map((e) => `${e.path || "/"}: ${e.message}`);
}

beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json(anthropicMessage("ok", "claude-sonnet-test")));
  up.ws("/v1/responses");
  s = await startSluice({ upstream: up.url, config: { detectors: { pii: { action: "redact" } } } });
  csrf = ((await get("/api/v1/auth/session")) as { csrf_token: string }).csrf_token;

  expect(await (await send(message(`deploy with ${AWS} please`))).text()).toContain("sluice blocked");
  expect((await send(message("mail jane.roe@fastmail.com about the invoice"))).status).toBe(200);
  expect((await send(message("what does this function return?"))).status).toBe(200);
  await new Promise<void>((resolve, reject) => {
    const ws = new WebSocket(`${s.proxyUrl.replace("http", "ws")}/v1/responses`, {
      headers: { authorization: "Bearer sk-test" },
    } as unknown as string[]);
    ws.onopen = () => ws.send(JSON.stringify({ type: "response.create", input: "hello" }));
    ws.onmessage = () => ws.close();
    ws.onclose = () => resolve();
    ws.onerror = () => reject(new Error("WebSocket through sluice failed"));
  });
  const added = await fetch(`${s.dashboardUrl}/api/v1/allowlists`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-csrf-token": csrf },
    body: JSON.stringify({ type: "secrets", pattern: "AKIA*EXAMPLE" }),
  });
  expect(added.status).toBe(201);
  // The store writes in batches: everything sent above is readable once they are written.
  await s.runtime.store.flush();
});

afterAll(async () => {
  await s?.stop();
  up?.stop();
});

const reads: [string, TSchema, (body: never) => number][] = [
  ["/api/v1/auth/session", api.AuthSession, () => 1],
  ["/api/v1/status", api.Status, () => 1],
  ["/api/v1/stats", api.Stats, (b: api.Stats) => b.total_findings],
  ["/api/v1/findings", api.FindingsPage, (b: { findings: unknown[] }) => b.findings.length],
  ["/api/v1/sessions", api.SessionsPage, (b: { sessions: unknown[] }) => b.sessions.length],
  ["/api/v1/sessions/dashboard", api.ActiveSessions, (b: { sessions: unknown[] }) => b.sessions.length],
  ["/api/v1/audit", api.AuditPage, (b: { entries: unknown[] }) => b.entries.length],
  ["/api/v1/ws/connections", api.WsConnectionsPage, (b: { connections: unknown[] }) => b.connections.length],
  ["/api/v1/rules?limit=200", api.RulesPage, (b: { rules: unknown[] }) => b.rules.length],
  ["/api/v1/rules/stats", api.RuleStats, (b: api.RuleStats) => b.total],
  ["/api/v1/rules/aws_access_key_id", RuleRecord, () => 1],
  ["/api/v1/pipeline", api.Pipeline, (b: api.Pipeline) => b.stages.length],
  ["/api/v1/allowlists", api.Allowlists, (b: api.Allowlists) => b.api_entries.length],
  ["/api/v1/clients", api.Clients, (b: { clients: unknown[] }) => b.clients.length],
  ["/api/v1/mcp/events", api.McpEventsPage, () => 1],
];

for (const [path, schema, items] of reads)
  test(`${path} answers its schema`, async () => {
    const body = await get(path);
    expect(departures(schema, body)).toEqual([]);
    expect(items(body as never)).toBeGreaterThan(0);
  });

test("a finding's detail and one session answer their schemas", async () => {
  const { findings } = (await get("/api/v1/findings")) as { findings: { id: number; session_id: string }[] };
  const blocked = findings.find((f) => (f as unknown as { rule: string }).rule === "aws_access_key_id");
  expect(blocked).toBeDefined();
  expect(departures(FindingDetail, await get(`/api/v1/findings/${blocked!.id}`))).toEqual([]);
  expect(
    departures(
      api.SessionsPage.properties.sessions.items,
      await get(`/api/v1/sessions/${blocked!.session_id}`),
    ),
  ).toEqual([]);
});

test("a field the API gives but its schema does not declare is a departure", () => {
  expect(
    departures(api.AuthSession, { authenticated: true, password_required: false, csrf_token: null }),
  ).toEqual([]);
  expect(
    departures(api.AuthSession, {
      authenticated: true,
      password_required: false,
      csrf_token: null,
      extra: 1,
    }),
  ).not.toEqual([]);
});

test("the audit table's columns are an audit line's keys and the row's id", () => {
  expect(AUDIT_FIELDS).toEqual(["id", ...AUDIT_KEYS]);
});

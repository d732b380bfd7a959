/**
 * A stand-in dashboard API with canned data (shapes from docs/api.md), serving the real web UI.
 * For working on the UI without a running sluice: `bun test/web/fixture-api.ts [port]`.
 * The browser tests run against real sluice instead (see dashboard.test.ts).
 */
import { uiServeOptions } from "../../src/dashboard/ui.ts";

const now = Date.now();
const iso = (msAgo: number) => new Date(now - msAgo).toISOString();
const SEV = ["critical", "high", "warning", "info"] as const;
const TYPES = ["aws_access_key", "github_pat", "email", "anthropic_api_key", "credit_card", "private_key"];
const findings = Array.from({ length: 64 }, (_, i) => ({
  id: 64 - i,
  ts: iso(i * 37 * 60_000),
  last_seen: iso(i * 30 * 60_000),
  severity: SEV[i % 4],
  detector: i % 3 === 2 ? "pii" : "secrets",
  finding_type: TYPES[i % TYPES.length],
  rule: TYPES[i % TYPES.length]!.replaceAll("_", "-"),
  action: ["log", "alert", "block"][i % 3],
  provider: ["anthropic", "openai", "gemini"][i % 3],
  client: ["claude-code", "codex", "gemini-cli"][i % 3],
  path: `messages[${i % 7}].content[0].text`,
  start: 10,
  end: 30,
  preview: "AKIA****MPLE",
  description: "AWS access key ID",
  decoded: null,
  request_id: `req-${100 + i}`,
  transport: "http",
  session_id: `sess-${i % 5}-2b8f1c9e-7a41-4d2e-9c55-0f2a6e1d3b7a`,
  account_id: "acct-1",
  device_id: "dev-1",
  source_ip: "127.0.0.1",
  working_directory: "/home/dev/project",
  git_branch: "main",
  os_platform: "linux",
  client_name: "Claude Code",
  model: "claude-sonnet-4-5",
  seen_count: 1 + (i % 4),
  content_hash: "ab".repeat(32),
  value_hash: "cd".repeat(32),
}));
const rules = Array.from({ length: 43 }, (_, i) => ({
  name: `rule-${String(i).padStart(2, "0")}-${TYPES[i % TYPES.length]!.replaceAll("_", "-")}`,
  pattern: i === 0 ? "AKIA[0-9A-Z]{16}" : `(?i)token_${i}_([a-z0-9]{8})`,
  detector: i % 3 === 2 ? "pii" : "secrets",
  severity: SEV[i % 4],
  action: "",
  enabled: i % 7 !== 0,
  tier: "community",
  source: "builtin",
  description: `Detects ${TYPES[i % TYPES.length]}`,
  tags: ["cloud", "key"].slice(0, (i % 2) + 1),
  hit_count: (i * 7) % 23,
}));
let mode = "active";
const sessions = Array.from({ length: 5 }, (_, i) => ({
  session_id: `sess-${i}-2b8f1c9e-7a41-4d2e-9c55-0f2a6e1d3b7a`,
  first_seen: iso((i + 3) * 3600_000),
  last_seen: iso(i * 600_000),
  finding_count: 12 - i,
  request_count: 40 - i * 3,
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  client: "claude-code",
  account_id: "acct-1",
  device_id: "dev-1",
  working_directory: "/home/dev/project",
  git_branch: "main",
  severity: { critical: i, high: 2, warning: 3, info: 1 },
}));
const clients = [
  ["claude-code", "Claude Code", "anthropic", "ANTHROPIC_BASE_URL", true],
  ["codex", "Codex CLI", "openai", null, false],
  ["gemini-cli", "Gemini CLI", "gemini", "GOOGLE_GEMINI_BASE_URL", true],
  ["aider", "Aider", "openai", "OPENAI_API_BASE", false],
].map(([id, name, provider, env, seen]) => ({
  id,
  display_name: name,
  category: "cli",
  provider,
  ua_prefixes: [String(id)],
  proxy_config: {
    config_type: env ? "env" : "config",
    setup_instructions: env
      ? `Set ${env} before starting the tool.`
      : 'Add openai_base_url = "http://127.0.0.1:8080/v1" to ~/.codex/config.toml',
    env_var: env,
    setup_cmd: env ? null : "codex -c 'openai_base_url=\"http://127.0.0.1:8080/v1\"'",
  },
  website: null,
  seen,
  last_seen: seen ? iso(300_000) : null,
}));
const sse = new Set<ReadableStreamDefaultController>();
const enc = new TextEncoder();
const json = (v: unknown, status = 200) => Response.json(v, { status });

function route(req: Request, url: URL): Response {
  const p = url.pathname.replace(/^\/api\/v1/, "");
  const limit = Number(url.searchParams.get("limit") ?? 50);
  const offset = Number(url.searchParams.get("offset") ?? 0);
  if (p === "/auth/session") return json({ authenticated: true, password_required: false, csrf_token: "t" });
  if (p === "/status")
    return json({
      status: "ok",
      version: "0.1.0-dev",
      uptime: 3600,
      tier: "community",
      mode,
      proxy_port: 8080,
      bind: "127.0.0.1",
      standalone: false,
      dashboard_port: 8081,
      requests: 412,
      active_requests: 0,
      findings: 64,
      by_action: {},
      build_id: "sha256:ab12",
      started_at: iso(3600_000),
      password_required: false,
    });
  if (p === "/stats") {
    const days = Number(url.searchParams.get("days") ?? 30);
    return json({
      total_findings: 64,
      total_requests: 412,
      today_count: 9,
      last_finding_time: iso(120_000),
      by_client: { "claude-code": 30, codex: 20, "gemini-cli": 14 },
      by_severity: { critical: 16, high: 16, warning: 16, info: 16 },
      by_detector: { secrets: 43, pii: 21 },
      by_action: { log: 22, alert: 21, block: 21 },
      by_provider: { anthropic: 30, openai: 20, gemini: 14 },
      by_model: {},
      top_finding_types: [],
      daily_trend: Array.from({ length: days }, (_, i) => ({
        date: new Date(now - (days - 1 - i) * 86400_000).toISOString().slice(0, 10),
        count: Math.round(4 + 3 * Math.sin(i / 2) + (i % 5)),
      })),
      request_actions: {
        today: {
          since: `${iso(0).slice(0, 10)}T00:00:00.000Z`,
          block: 3,
          redact: 1,
          alert: 2,
          by_client: [
            { client: "claude-code", block: 2, redact: 1, alert: 0 },
            { client: "codex", block: 1, redact: 0, alert: 2 },
          ],
          by_project: [
            { project: "/home/dev/project", block: 3, redact: 1, alert: 1 },
            { project: null, block: 0, redact: 0, alert: 1 },
          ],
        },
        week: {
          since: `${new Date(now - 6 * 86400_000).toISOString().slice(0, 10)}T00:00:00.000Z`,
          block: 14,
          redact: 5,
          alert: 9,
          by_client: [
            { client: "claude-code", block: 9, redact: 4, alert: 3 },
            { client: "codex", block: 4, redact: 1, alert: 4 },
            { client: "gemini-cli", block: 1, redact: 0, alert: 2 },
          ],
          by_project: [
            { project: "/home/dev/project", block: 11, redact: 5, alert: 6 },
            { project: "/home/dev/infrastructure/terraform-modules", block: 3, redact: 0, alert: 2 },
            { project: null, block: 0, redact: 0, alert: 1 },
          ],
        },
      },
      scan_health: {
        unscanned: { total: 3, by_reason: { non_json: 2, unknown_shape: 1 }, by_client: { "gemini-cli": 3 } },
        scan_errors: 0,
        store_dropped: 0,
        audit_dropped: 0,
      },
    });
  }
  if (p === "/sessions/dashboard") return json({ sessions: sessions.slice(0, limit), total: 5 });
  if (p === "/sessions") return json({ sessions, total: 5, limit, offset });
  if (p === "/findings") {
    let list = findings;
    for (const k of ["severity", "detector", "action", "provider", "client", "session_id"] as const) {
      const v = url.searchParams.get(k);
      if (v) list = list.filter((f) => f[k] === v);
    }
    return json({ findings: list.slice(offset, offset + limit), total: list.length, limit, offset });
  }
  const fm = /^\/findings\/(\d+)$/.exec(p);
  if (fm)
    return json(
      findings.find((f) => f.id === Number(fm[1])) ?? { error: { code: "not_found", message: "no" } },
    );
  if (p === "/audit")
    return json({
      entries: Array.from({ length: 8 }, (_, i) => ({
        id: i,
        ts: iso(i * 60_000),
        request_id: `req-${i}`,
        provider: "anthropic",
        client: "claude-code",
        model: "claude-sonnet-4-5",
        method: "POST",
        path: "/v1/messages",
        action: i % 3 ? "pass" : "alert",
        finding_count: i % 3 ? 0 : 1,
        bytes: 48_000,
        duration_ms: 4.2,
        upstream_status: 200,
        session_id: sessions[0]!.session_id,
        account_id: null,
        mode: "active",
        error: null,
      })),
      total: 8,
      limit,
      offset,
    });
  if (p === "/logs/tail")
    return json({
      lines: [
        "2026-11-21T23:00:00Z INFO    proxy listening on 127.0.0.1:8080",
        "2026-11-21T23:00:01Z INFO    dashboard on 127.0.0.1:8081",
      ],
    });
  if (p === "/pipeline" && req.method === "GET")
    return json({
      default_action: "log",
      stages: [
        {
          name: "outbound_dlp",
          label: "Outbound DLP",
          description: "Scans request bodies",
          group: "request",
          enabled: true,
          available: true,
          finding_count: 64,
          sub_detectors: ["secrets", "pii", "proprietary", "custom", "injection"].map((n) => ({
            name: n,
            enabled: true,
            action: "default",
            finding_count: 3,
          })),
        },
        {
          name: "encoding_decode",
          label: "Encoding decode",
          description: "Decodes base64/hex/url/unicode",
          group: "request",
          enabled: true,
          available: true,
          finding_count: 0,
          encoding_settings: {
            base64: true,
            hex: true,
            url: true,
            unicode: true,
            max_depth: 2,
            min_decoded_length: 8,
            max_decoded_length: 10000,
          },
        },
        {
          name: "response_secrets",
          label: "Response secrets",
          description: "Not implemented",
          group: "response",
          enabled: false,
          available: false,
          finding_count: 0,
        },
      ],
    });
  if (p === "/pipeline") return json({ applied: {}, errors: [] });
  if (p === "/config" && req.method === "PUT") {
    mode = mode === "active" ? "passthrough" : "active";
    for (const c of sse)
      c.enqueue(
        enc.encode(
          `event: mode-changed\ndata: ${JSON.stringify({ type: "mode-changed", ts: new Date().toISOString(), mode, previous: mode })}\n\n`,
        ),
      );
    return json({ ok: true, changes: [], mode });
  }
  if (p === "/config") return json({ port: 8080, proxy: { mode }, dashboard: { password_set: false } });
  if (p === "/rules/stats")
    return json({
      total: 43,
      enabled: 37,
      disabled: 6,
      by_tier: { community: 43 },
      by_detector: { secrets: 29, pii: 14 },
      by_severity: { critical: 11, high: 11, warning: 11, info: 10 },
      by_source: { builtin: 43 },
      tags: [
        { tag: "cloud", count: 43 },
        { tag: "key", count: 21 },
      ],
    });
  if (p === "/rules") return json({ rules: rules.slice(offset, offset + limit), total: 43, limit, offset });
  if (p.startsWith("/rules/")) return json(rules[0]);
  if (p === "/allowlists")
    return json({
      secrets: [
        { pattern: "AKIA*EXAMPLE", source: "config" },
        { pattern: "ghp_test*", source: "api", id: 1 },
      ],
      pii: [{ pattern: "*@example.com", source: "config" }],
      paths: [],
      api_entries: [],
    });
  if (p === "/allowlists/test")
    return json({ value_match: true, matches: findings.slice(0, 3), match_count: 3 });
  if (p === "/clients") return json({ clients });
  if (p === "/live")
    return new Response(
      new ReadableStream({
        start(c) {
          sse.add(c);
          c.enqueue(enc.encode(`event: heartbeat\ndata: {"type":"heartbeat"}\n\n`));
        },
      }),
      { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } },
    );
  return json({ error: { code: "not_found", message: `no route ${p}` } }, 404);
}

const server = Bun.serve({
  port: Number(process.argv[2] ?? 0),
  hostname: "127.0.0.1",
  ...uiServeOptions,
  fetch(req, srv) {
    const url = new URL(req.url);
    if (url.pathname === "/api/v1/live") srv.timeout(req, 0);
    return route(req, url);
  },
});
setInterval(() => {
  const f = findings[Math.floor(Math.random() * 10)]!;
  for (const c of sse)
    c.enqueue(
      enc.encode(
        `event: finding\ndata: ${JSON.stringify({ ...f, type: "finding", ts: new Date().toISOString() })}\n\n`,
      ),
    );
}, 3000);
console.log(`fixture dashboard on http://127.0.0.1:${server.port}/`);

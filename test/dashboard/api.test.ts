/** Every dashboard endpoint in process: shapes, filters, bounds, 400/404/409, exports. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Finding } from "../../src/core/types.ts";
import { contentHash } from "../../src/policy/mask.ts";
import { finding, request, rule, session } from "../helpers/records.ts";
import { type Env, makeEnv, PORT, TEST_HMAC_KEY } from "./_env.ts";

let env: Env;

function emit(
  f: Partial<Finding> = {},
  s: Parameters<typeof session>[0] = {},
  provider: "anthropic" | "openai" | "gemini" = "anthropic",
) {
  env.rt.bus.emit("finding", {
    finding: finding(f),
    session: session(s),
    provider,
    request_id: "req-x",
    transport: "http",
  });
}

/** A small RFC 4180 reader: quoted fields, doubled quotes, newlines inside quotes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || row.length) rows.push([...row, field]);
  return rows;
}

function expectError(r: { status: number; body: any }, status: number, code?: string) {
  expect(r.status).toBe(status);
  expect(typeof r.body.error.code).toBe("string");
  expect(typeof r.body.error.message).toBe("string");
  if (code) expect(r.body.error.code).toBe(code);
}

beforeAll(async () => {
  env = await makeEnv({ config: { allowlists: { secrets: ["CONFIG-ALLOWED"] } } });
  env.store.importDefaultRules([
    rule(),
    rule({
      name: "github-pat",
      pattern: "ghp_[A-Za-z0-9]{36}",
      tags: ["github", "vcs"],
      description: "GitHub token",
    }),
    rule({
      name: "email",
      pattern: "[a-z]+@[a-z]+\\.com",
      detector: "pii",
      severity: "warning",
      tags: ["pii"],
      description: "Email address",
    }),
    rule({
      name: "ssn",
      pattern: "\\d{3}-\\d{2}-\\d{4}",
      detector: "pii",
      severity: "high",
      enabled: false,
      validator: "ssn_range",
    }),
  ]);
  emit();
  emit(
    {
      severity: "high",
      detector: "pii",
      finding_type: "email",
      rule: "email",
      action: "alert",
      preview: "a***@x.com",
    },
    { session_id: "sess-2", account_id: "acct-2", client: "codex_exec/0.169.0" },
    "openai",
  );
  emit(
    {
      severity: "warning",
      detector: "secrets",
      finding_type: "generic_secret",
      action: "log",
      decoded: "base64",
    },
    { session_id: "sess-3", working_directory: "/srv/other" },
    "gemini",
  );
  env.rt.bus.emit(
    "request",
    request({
      client: "claude-cli/2.1.328 (external, sdk-cli)",
      path: "/v1/messages",
      action: "block",
      finding_count: 1,
      rules: "aws_access_key_id",
      action_source: "rule_default",
      bytes: 4000,
      duration_ms: 3,
      upstream_status: null,
    }),
  );
  env.rt.bus.emit("ws-connection", {
    connection_id: "11111111-2222-3333-4444-555555555555",
    phase: "close",
    target_url: "wss://api.openai.com/v1/responses",
    origin: null,
    provider: "openai",
    session_id: "sess-2",
    duration_ms: 1500,
    frames_in: 3,
    frames_out: 4,
    findings: 1,
    close_code: 1000,
  });
  await env.store.flush();
});
afterAll(() => env.close());

describe("status and build", () => {
  test("status has every documented field", async () => {
    const r = await env.json("GET", "/api/v1/status");
    expect(r.status).toBe(200);
    for (const k of ["status", "version", "uptime", "tier", "proxy_port", "bind", "standalone", "mode"])
      expect(r.body).toHaveProperty(k);
    expect(r.body).toMatchObject({
      status: "ok",
      tier: "community",
      mode: "active",
      proxy_port: 18080,
      bind: "127.0.0.1",
      dashboard_port: PORT,
    });
  });
  test("build", async () => {
    const r = await env.json("GET", "/api/v1/build");
    expect(r.body.build_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    for (const k of ["version", "commit", "built_at"]) expect(typeof r.body[k]).toBe("string");
  });
  test("unknown endpoint is a 404 with the error shape", async () => {
    expectError(await env.json("GET", "/api/v1/nope"), 404, "not_found");
  });
});

describe("findings", () => {
  test("list shape, newest first, never a raw value", async () => {
    const r = await env.json("GET", "/api/v1/findings");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(r.body.findings).toHaveLength(3);
    const f = r.body.findings[2];
    for (const k of [
      "id",
      "severity",
      "detector",
      "finding_type",
      "action",
      "provider",
      "client",
      "session_id",
      "account_id",
      "device_id",
      "source_ip",
      "working_directory",
      "git_branch",
      "os_platform",
      "client_name",
      "seen_count",
      "content_hash",
      "value_hash",
      "preview",
      "path",
    ])
      expect(f).toHaveProperty(k);
    expect(f.api_key_hash).toBeUndefined();
  });
  test.each([
    ["severity=high", 1],
    ["detector=pii", 1],
    ["detector=secrets", 2],
    ["action=block", 1],
    ["finding_type=email", 1],
    ["provider=gemini", 1],
    ["client=codex_exec%2F0.169.0", 1],
    ["session_id=sess-3", 1],
    ["account_id=acct-2", 1],
    ["days=1", 3],
    ["days=365&severity=critical", 1],
    ["rule=email", 1],
    ["q=generic", 1],
  ])("filter %s", async (qs, n) => {
    const r = await env.json("GET", `/api/v1/findings?${qs}`);
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(n);
    expect(r.body.findings).toHaveLength(n);
  });
  test("pagination", async () => {
    const a = await env.json("GET", "/api/v1/findings?limit=2&offset=0");
    const b = await env.json("GET", "/api/v1/findings?limit=2&offset=2");
    expect(a.body.findings).toHaveLength(2);
    expect(b.body.findings).toHaveLength(1);
    expect(a.body.total).toBe(3);
    expect(new Set([...a.body.findings, ...b.body.findings].map((f: { id: number }) => f.id)).size).toBe(3);
  });
  test.each([
    "limit=0",
    "limit=501",
    "limit=abc",
    "offset=-1",
    "days=0",
    "days=366",
    "severity=extreme",
    "detector=foo",
    "action=nuke",
    "provider=aws",
  ])("bad query %s is a 400", async (qs) =>
    expectError(await env.json("GET", `/api/v1/findings?${qs}`), 400, "invalid_request"),
  );
  test("one finding by id, 404 for unknown or non-numeric ids", async () => {
    const list = await env.json("GET", "/api/v1/findings");
    const id = list.body.findings[0].id;
    const r = await env.json("GET", `/api/v1/findings/${id}`);
    expect(r.body.id).toBe(id);
    expect(r.body).toHaveProperty("api_key_hash");
    expectError(await env.json("GET", "/api/v1/findings/999999"), 404, "not_found");
    expectError(await env.json("GET", "/api/v1/findings/abc"), 404, "not_found");
  });
  test("export JSON parses and honours filters", async () => {
    const r = await env.api("GET", "/api/v1/findings/export?format=json&detector=secrets");
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.headers.get("content-disposition")).toContain("attachment");
    const rows = JSON.parse(await r.text());
    expect(rows).toHaveLength(2);
    expect(rows.every((x: { detector: string }) => x.detector === "secrets")).toBe(true);
  });
  test("export CSV parses (RFC 4180) and agrees with the JSON export", async () => {
    // Its own store, so the counts the other tests expect stay as they are.
    const own = await makeEnv();
    own.rt.bus.emit("finding", {
      finding: finding({ description: 'quote " and, comma\nnewline', path: "=HYPERLINK(1)" }),
      session: session({ session_id: "csv" }),
      provider: "anthropic",
      request_id: "r",
      transport: "http",
    });
    own.rt.bus.emit("finding", {
      finding: finding(),
      session: session(),
      provider: "openai",
      request_id: "r",
      transport: "http",
    });
    await own.store.flush();
    const r = await own.api("GET", "/api/v1/findings/export?format=csv");
    expect(r.headers.get("content-type")).toContain("text/csv");
    const rows = parseCsv(await r.text());
    const header = rows[0]!;
    expect(header).toContain("content_hash");
    const json = JSON.parse(await (await own.api("GET", "/api/v1/findings/export?format=json")).text());
    await own.close();
    expect(json).toHaveLength(2);
    expect(rows.length - 1).toBe(json.length);
    for (const row of rows.slice(1)) expect(row).toHaveLength(header.length);
    const csvRow = rows.find((row) => row[header.indexOf("session_id")] === "csv")!;
    expect(csvRow[header.indexOf("description")]).toBe('quote " and, comma\nnewline');
    // Formula injection: a cell starting with "=" is defused.
    expect(csvRow[header.indexOf("path")]).toBe("'=HYPERLINK(1)");
    const j = json.find((x: { session_id: string }) => x.session_id === "csv");
    expect(csvRow[header.indexOf("content_hash")]).toBe(j.content_hash);
    expect(Number(csvRow[header.indexOf("id")])).toBe(j.id);
  });
  test("export of nothing is valid", async () => {
    const r = await env.api("GET", "/api/v1/findings/export?format=json&session_id=none");
    expect(JSON.parse(await r.text())).toEqual([]);
    const c = await env.api("GET", "/api/v1/findings/export?format=csv&session_id=none");
    expect((await c.text()).trim().split("\n")).toHaveLength(1);
    expectError(await env.json("GET", "/api/v1/findings/export?format=xml"), 400);
  });
});

describe("sessions", () => {
  test("list with {sessions, total, limit, offset} and bounds", async () => {
    const r = await env.json("GET", "/api/v1/sessions");
    expect(r.body).toMatchObject({ total: 3, limit: 50, offset: 0 });
    const s = r.body.sessions.find((x: { session_id: string }) => x.session_id === "sess-1");
    for (const k of [
      "session_id",
      "first_seen",
      "last_seen",
      "finding_count",
      "provider",
      "model",
      "account_id",
      "device_id",
      "working_directory",
      "git_branch",
    ])
      expect(s).toHaveProperty(k);
    expect(s.request_count).toBe(1);
    expect((await env.json("GET", "/api/v1/sessions?limit=100")).status).toBe(200);
    expectError(await env.json("GET", "/api/v1/sessions?limit=101"), 400);
    expect((await env.json("GET", "/api/v1/sessions?limit=1")).body.sessions).toHaveLength(1);
  });
  test("dashboard: last 24 h with severity breakdown, total uncapped, limit ≤ 10", async () => {
    const r = await env.json("GET", "/api/v1/sessions/dashboard?limit=2");
    expect(r.body.total).toBe(3);
    expect(r.body.sessions).toHaveLength(2);
    expect(Object.keys(r.body.sessions[0].severity).sort()).toEqual(["critical", "high", "info", "warning"]);
    expect((await env.json("GET", "/api/v1/sessions/dashboard")).body.sessions).toHaveLength(3);
    expectError(await env.json("GET", "/api/v1/sessions/dashboard?limit=11"), 400);
  });
  test("one session, 404", async () => {
    expect((await env.json("GET", "/api/v1/sessions/sess-2")).body.account_id).toBe("acct-2");
    expectError(await env.json("GET", "/api/v1/sessions/nope"), 404);
  });
});

describe("stats", () => {
  test("every field", async () => {
    const r = await env.json("GET", "/api/v1/stats?days=7");
    for (const k of [
      "today_count",
      "last_finding_time",
      "by_client",
      "by_severity",
      "by_detector",
      "by_action",
      "by_provider",
      "by_model",
      "top_finding_types",
      "daily_trend",
    ])
      expect(r.body).toHaveProperty(k);
    expect(r.body.today_count).toBe(3);
    expect(r.body.by_severity).toEqual({ critical: 1, high: 1, warning: 1 });
    expect(r.body.by_provider).toEqual({ anthropic: 1, openai: 1, gemini: 1 });
    expect(r.body.daily_trend).toHaveLength(7);
    expect(r.body.daily_trend.at(-1).count).toBe(3);
    expect(r.body.top_finding_types[0]).toHaveProperty("finding_type");
  });
  test("days bounds", async () => {
    expect((await env.json("GET", "/api/v1/stats")).body.daily_trend).toHaveLength(30);
    expect((await env.json("GET", "/api/v1/stats?days=365")).status).toBe(200);
    expectError(await env.json("GET", "/api/v1/stats?days=0"), 400);
    expectError(await env.json("GET", "/api/v1/stats?days=366"), 400);
  });
  test("advanced: every field", async () => {
    const r = await env.json("GET", "/api/v1/stats/advanced?days=3");
    expect(r.body.action_trend).toHaveLength(3);
    expect(r.body.action_trend.at(-1)).toEqual(
      expect.objectContaining({ block: 1, alert: 1, log: 1, redact: 0 }),
    );
    expect(r.body.activity_matrix).toHaveLength(7);
    expect(r.body.activity_matrix[0].hours).toHaveLength(24);
    expect(
      r.body.activity_matrix.reduce(
        (a: number, d: { hours: number[] }) => a + d.hours.reduce((x, y) => x + y, 0),
        0,
      ),
    ).toBe(3);
    expect(r.body.top_accounts).toContainEqual({ account_id: "acct-2", count: 1 });
    expect(r.body.top_projects).toContainEqual({ working_directory: "/srv/other", count: 1 });
    expect(r.body.detection_coverage).toEqual({ active_rules: 3, total_rules: 4, pro_imported: 0 });
    expectError(await env.json("GET", "/api/v1/stats/advanced?days=400"), 400);
  });
});

describe("clients, audit, ws, logs, mcp", () => {
  test("client catalog with setup instructions and seen flags", async () => {
    const r = await env.json("GET", "/api/v1/clients");
    const ids = r.body.clients.map((c: { id: string }) => c.id);
    for (const id of ["claude-code", "codex", "gemini-cli", "aider", "cline", "opencode", "cursor"])
      expect(ids).toContain(id);
    const claude = r.body.clients.find((c: { id: string }) => c.id === "claude-code");
    expect(claude).toMatchObject({ display_name: "Claude Code", provider: "anthropic", seen: true });
    expect(claude.proxy_config).toMatchObject({ config_type: "env", env_var: "ANTHROPIC_BASE_URL" });
    expect(claude.proxy_config.setup_instructions).toContain("http://127.0.0.1:18080");
    expect(claude.ua_prefixes).toContain("claude-cli/");
    expect(r.body.clients.find((c: { id: string }) => c.id === "codex").seen).toBe(true);
    expect(r.body.clients.find((c: { id: string }) => c.id === "cursor").seen).toBe(false);
    // The lines `sluice connect codex` prints: both of Codex's base URLs.
    const codex = r.body.clients.find((c: { id: string }) => c.id === "codex");
    expect(codex.connect.tool).toBe("codex");
    expect(codex.connect.lines.join("\n")).toContain(
      'chatgpt_base_url = "http://localhost:18080/backend-api/"',
    );
    expect(r.body.clients.find((c: { id: string }) => c.id === "cursor").connect).toBeNull();
  });
  test("audit list, filters, export", async () => {
    const r = await env.json("GET", "/api/v1/audit");
    expect(r.body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(r.body.entries[0]).toMatchObject({
      request_id: "req-1",
      action: "block",
      provider: "anthropic",
      bytes: 4000,
      finding_count: 1,
      rules: "aws_access_key_id",
      action_source: "rule_default",
    });
    expect((await env.json("GET", "/api/v1/audit?action=pass")).body.total).toBe(0);
    expect((await env.json("GET", "/api/v1/audit?provider=anthropic")).body.total).toBe(1);
    expect((await env.json("GET", "/api/v1/audit?search=messages")).body.total).toBe(1);
    expect((await env.json("GET", "/api/v1/audit?search=nothing-like-this")).body.total).toBe(0);
    expectError(await env.json("GET", "/api/v1/audit?action=x"), 400);
    const csv = await (await env.api("GET", "/api/v1/audit/export?format=csv")).text();
    expect(csv.trim().split("\n")).toHaveLength(2);
    const json = JSON.parse(await (await env.api("GET", "/api/v1/audit/export")).text());
    expect(json[0].request_id).toBe("req-1");
  });
  test("ws connections and stats", async () => {
    const r = await env.json("GET", "/api/v1/ws/connections");
    expect(r.body.total).toBe(1);
    expect(r.body.connections[0]).toMatchObject({
      connection_id: "11111111-2222-3333-4444-555555555555",
      state: "closed",
      frames_in: 3,
      frames_out: 4,
      findings: 1,
      close_code: 1000,
    });
    const s = await env.json("GET", "/api/v1/ws/stats");
    expect(s.body).toMatchObject({
      total: 1,
      open: 0,
      closed: 1,
      frames_in: 3,
      frames_out: 4,
      findings: 1,
      by_close_code: { "1000": 1 },
    });
  });
  test("log tail ≤ 100 lines and sanitized download", async () => {
    for (let i = 0; i < 130; i++) env.rt.log.info(`line ${i}`);
    env.rt.log.warn("oops token=ghp_abcdefghijklmnopqrstuvwxyz0123456789");
    const r = await env.json("GET", "/api/v1/logs/tail");
    expect(r.body.lines).toHaveLength(100);
    expect(r.body.lines.join("\n")).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
    const d = await env.api("GET", "/api/v1/logs/download");
    expect(d.headers.get("content-type")).toContain("text/plain");
    const text = await d.text();
    expect(text).toContain("line 0");
    expect(text).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
  });
  test("mcp events and baselines", async () => {
    env.rt.bus.emit("mcp-event", {
      kind: "poisoning",
      server: "srv",
      message: "instruction tag",
      severity: "high",
    });
    env.store.mcp.putBaseline("srv", "t", "c".repeat(64), { name: "t" });
    await env.store.flush();
    expect((await env.json("GET", "/api/v1/mcp/events")).body.events[0]).toMatchObject({
      kind: "poisoning",
      server: "srv",
    });
    expect((await env.json("GET", "/api/v1/mcp/baselines")).body.baselines).toHaveLength(1);
  });
});

describe("config", () => {
  test("GET is sanitized", async () => {
    env.rt.config().dashboard.password = null;
    const r = await env.json("GET", "/api/v1/config");
    expect(r.body.dashboard.password).toBeUndefined();
    expect(r.body.dashboard.password_set).toBe(false);
    expect(r.body.proxy.mode).toBe("active");
  });
  test("PUT flat keys applies through reload; validation errors are 400s", async () => {
    const r = await env.json("PUT", "/api/v1/config", { "proxy.timeout": 60 });
    expect(r.status).toBe(200);
    expect(r.body.changes).toContain("proxy.timeout: 120 -> 60");
    expect(env.rt.config().proxy.timeout).toBe(60);
    expectError(await env.json("PUT", "/api/v1/config", { "proxy.timeout": 999 }), 400, "invalid_config");
    expectError(await env.json("PUT", "/api/v1/config", { "proxy.nope": 1 }), 400, "unknown_key");
    expectError(await env.json("PUT", "/api/v1/config", { "dashboard.password": "x" }), 400, "read_only_key");
    expectError(await env.json("PUT", "/api/v1/config", { "proxy.mode": "off" }), 400);
    expectError(await env.json("PUT", "/api/v1/config", {}), 400);
    expectError(await env.json("PUT", "/api/v1/config", [1]), 400);
    expectError(await env.json("PUT", "/api/v1/config", "{nope"), 400, "invalid_json");
    expect(env.rt.config().proxy.timeout).toBe(60);
  });
});

describe("pipeline", () => {
  test("GET: the pipeline stages, response_secrets unavailable", async () => {
    const r = await env.json("GET", "/api/v1/pipeline");
    expect(r.body.default_action).toBe("log");
    const names = r.body.stages.map((s: { name: string }) => s.name);
    expect(names).toEqual(["outbound_dlp", "encoding_decode", "response_secrets"]);
    const dlp = r.body.stages[0];
    expect(dlp).toMatchObject({ group: "request", enabled: true, available: true, finding_count: 3 });
    expect(dlp.sub_detectors.find((d: { name: string }) => d.name === "pii")).toEqual({
      name: "pii",
      enabled: true,
      action: "default",
      finding_count: 1,
    });
    expect(r.body.stages[1].encoding_settings).toMatchObject({
      base64: true,
      hex: true,
      url: true,
      unicode: true,
      max_depth: 2,
    });
    expect(r.body.stages[1].finding_count).toBe(1);
    expect(r.body.stages[2]).toMatchObject({ group: "response", available: false });
  });
  test("PUT: partial update returns {applied, errors}", async () => {
    const r = await env.json("PUT", "/api/v1/pipeline", {
      default_action: "alert",
      stages: {
        encoding_decode: { enabled: false },
        response_secrets: { enabled: true },
        bogus: { enabled: true },
      },
      detectors: { pii: { enabled: false, action: "block" }, secrets: { action: "default" }, nope: {} },
      encoding_settings: { hex: false, max_depth: 3, max_depth_x: 1 },
      extra: 1,
    });
    expect(r.status).toBe(200);
    expect(r.body.applied).toEqual({
      default_action: "alert",
      stages: { encoding_decode: { enabled: false } },
      detectors: { pii: { enabled: false, action: "block" }, secrets: { action: "" } },
      encoding_settings: { hex: false, max_depth: 3 },
    });
    const keys = r.body.errors.map((e: { key: string }) => e.key).sort();
    expect(keys).toEqual([
      "detectors.nope",
      "encoding_settings.max_depth_x",
      "extra",
      "stages.bogus",
      "stages.response_secrets",
    ]);
    const c = env.rt.config();
    expect(c.pipeline.default_action).toBe("alert");
    expect(c.pipeline.stages.encoding_decode.enabled).toBe(false);
    expect(c.detectors.pii).toEqual({ enabled: false, action: "block" });
    expect(c.pipeline.encoding.max_depth).toBe(3);
    const bad = await env.json("PUT", "/api/v1/pipeline", {
      default_action: "explode",
      encoding_settings: { max_depth: 9 },
    });
    expect(bad.body.applied).toEqual({});
    expect(bad.body.errors).toHaveLength(2);
  });
});

describe("rules", () => {
  test("list with every filter and bounds", async () => {
    const all = await env.json("GET", "/api/v1/rules");
    expect(all.body).toMatchObject({ total: 4, limit: 50, offset: 0 });
    const q = async (qs: string) =>
      (await env.json("GET", `/api/v1/rules?${qs}`)).body.rules.map((r: { name: string }) => r.name);
    expect(await q("search=github")).toEqual(["github-pat"]);
    expect(await q("q=github,email")).toEqual(["email", "github-pat"]);
    expect(await q("search=token")).toEqual(["github-pat"]);
    expect(await q("detector=pii")).toEqual(["email", "ssn"]);
    expect(await q("tier=community&severity=high")).toEqual(["ssn"]);
    expect(await q("enabled=false")).toEqual(["ssn"]);
    expect(await q("tag=vcs")).toEqual(["github-pat"]);
    expect(await q("tag=vc")).toEqual([]);
    expect(await q("limit=1&offset=1")).toEqual(["email"]);
    expect((await env.json("GET", "/api/v1/rules?limit=200")).status).toBe(200);
    for (const bad of [
      "limit=201",
      "limit=0",
      "offset=-2",
      "enabled=yes",
      "tier=gold",
      "detector=x",
      "severity=x",
    ])
      expectError(await env.json("GET", `/api/v1/rules?${bad}`), 400);
  });
  test("create validates name, pattern, action; 409 on a taken name", async () => {
    const ok = await env.json("POST", "/api/v1/rules", {
      name: "acme-key",
      pattern: "ACME-[0-9]{8}",
      severity: "high",
      action: "block",
      tags: ["acme"],
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      name: "acme-key",
      tier: "custom",
      source: "dashboard",
      action: "block",
      enabled: true,
      hit_count: 0,
    });
    const before = env.rt.rulesVersion();
    expect(
      (await env.json("POST", "/api/v1/rules", { name: "acme-2", pattern: "ACME2-[0-9]{8}" })).status,
    ).toBe(201);
    expect(env.rt.rulesVersion()).toBeGreaterThan(before);
    expect(env.store.enabledRules().map((r) => r.name)).toContain("acme-2");
    expectError(
      await env.json("POST", "/api/v1/rules", { name: "acme-key", pattern: "x[0-9]" }),
      409,
      "conflict",
    );
    for (const action of ["nuke", "BLOCK", "pass", 3, null])
      expectError(
        await env.json("POST", "/api/v1/rules", { name: "bad-action", pattern: "x[0-9]", action }),
        400,
        "invalid_action",
      );
    for (const action of ["", "log", "alert", "redact", "block"]) {
      const r = await env.json("POST", "/api/v1/rules", {
        name: `act-${action || "empty"}`,
        pattern: "zz[0-9]{4}",
        action,
      });
      expect({ status: r.status, body: r.status === 201 ? null : r.body }).toEqual({
        status: 201,
        body: null,
      });
    }
    // Refused with 400: each body, and its error code where the test names one.
    const refused: [Record<string, unknown>, string?][] = [
      [{ name: "bad-pattern", pattern: "(unclosed" }, "invalid_pattern"],
      [{ name: "redos", pattern: "(a+)+$" }, "invalid_pattern"],
      [{ name: "empty-match", pattern: "a*" }, "invalid_pattern"],
      [{ name: "Bad Name", pattern: "x[0-9]" }, "invalid_request"],
      [{ pattern: "x[0-9]" }],
      [{ name: "x1", pattern: "x[0-9]", severity: "extreme" }],
      [{ name: "x1", pattern: "x[0-9]", tier: "pro" }],
      [{ name: "x1", pattern: "x[0-9]", validator: "nope" }],
    ];
    for (const [body, code] of refused) expectError(await env.json("POST", "/api/v1/rules", body), 400, code);
  });
  test("get, update, delete, clone", async () => {
    expect((await env.json("GET", "/api/v1/rules/github-pat")).body.pattern).toBe("ghp_[A-Za-z0-9]{36}");
    expectError(await env.json("GET", "/api/v1/rules/nope"), 404, "not_found");
    const u = await env.json("PUT", "/api/v1/rules/github-pat", {
      action: "block",
      enabled: false,
      tags: ["x"],
    });
    expect(u.body).toMatchObject({ action: "block", enabled: false, tags: ["x"] });
    expect(env.store.enabledRules().map((r) => r.name)).not.toContain("github-pat");
    expectError(
      await env.json("PUT", "/api/v1/rules/github-pat", { action: "explode" }),
      400,
      "invalid_action",
    );
    expectError(await env.json("PUT", "/api/v1/rules/github-pat", { pattern: "((" }), 400, "invalid_pattern");
    expectError(await env.json("PUT", "/api/v1/rules/github-pat", { name: "renamed" }), 400);
    expectError(await env.json("PUT", "/api/v1/rules/nope", { enabled: true }), 404);
    expectError(await env.json("DELETE", "/api/v1/rules/github-pat"), 409, "read_only");
    expectError(await env.json("DELETE", "/api/v1/rules/nope"), 404);
    const c = await env.json("POST", "/api/v1/rules/github-pat/clone");
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({
      name: "github-pat-copy",
      tier: "custom",
      source: "dashboard",
      pattern: "ghp_[A-Za-z0-9]{36}",
    });
    expect((await env.json("POST", "/api/v1/rules/github-pat/clone")).body.name).toBe("github-pat-copy-2");
    expect((await env.json("POST", "/api/v1/rules/github-pat/clone", { name: "gh-mine" })).body.name).toBe(
      "gh-mine",
    );
    expectError(await env.json("POST", "/api/v1/rules/github-pat/clone", { name: "gh-mine" }), 409);
    expectError(await env.json("POST", "/api/v1/rules/nope/clone"), 404);
    expect((await env.json("DELETE", "/api/v1/rules/gh-mine")).body).toEqual({ deleted: "gh-mine" });
    expectError(await env.json("GET", "/api/v1/rules/gh-mine"), 404);
  });
  test("bulk-update: one transaction, failures per name, ≤ 500 names", async () => {
    const r = await env.json("POST", "/api/v1/rules/bulk-update", {
      names: ["email", "ssn", "missing", "email"],
      update: { enabled: true, severity: "info" },
    });
    expect(r.status).toBe(200);
    expect(r.body.updated).toBe(2);
    expect(r.body.failed).toEqual([
      { name: "missing", reason: "rule not found" },
      { name: "email", reason: "listed twice" },
    ]);
    expect(typeof r.body.message).toBe("string");
    expect((await env.json("GET", "/api/v1/rules/ssn")).body).toMatchObject({
      enabled: true,
      severity: "info",
    });
    expectError(
      await env.json("POST", "/api/v1/rules/bulk-update", { names: ["email"], update: { action: "zap" } }),
      400,
      "invalid_action",
    );
    expectError(
      await env.json("POST", "/api/v1/rules/bulk-update", { names: [], update: { enabled: true } }),
      400,
    );
    expectError(await env.json("POST", "/api/v1/rules/bulk-update", { names: ["email"], update: {} }), 400);
    expectError(
      await env.json("POST", "/api/v1/rules/bulk-update", {
        names: Array.from({ length: 501 }, (_, i) => `r${i}`),
        update: { enabled: true },
      }),
      400,
      "too_many_names",
    );
    const many = await env.json("POST", "/api/v1/rules/bulk-update", {
      names: Array.from({ length: 500 }, (_, i) => `r${i}`),
      update: { enabled: true },
    });
    expect(many.body.failed).toHaveLength(500);
  });
  test("stats and analysis", async () => {
    const s = await env.json("GET", "/api/v1/rules/stats");
    expect(s.body.total).toBeGreaterThan(4);
    for (const k of ["by_tier", "by_detector", "enabled", "disabled", "tags"])
      expect(s.body).toHaveProperty(k);
    expect(s.body.by_tier.community).toBe(4);
    // Before a run: nothing cached (the run itself: test/dashboard/rule-analysis.test.ts).
    expect((await env.json("GET", "/api/v1/rules/analysis")).body.available).toBe(false);
    expect((await env.json("GET", "/api/v1/rules/analysis/status")).body).toMatchObject({
      running: false,
      phase: "idle",
    });
  });
});

describe("allowlists", () => {
  test("list shows config entries read-only and API entries with ids; entries reach the config the scanner sees", async () => {
    const empty = await env.json("GET", "/api/v1/allowlists");
    expect(empty.body.secrets).toEqual([{ pattern: "CONFIG-ALLOWED", source: "config" }]);
    expect(empty.body.api_entries).toEqual([]);
    const c = await env.json("POST", "/api/v1/allowlists", { type: "secrets", pattern: "AKIA*EXAMPLE" });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ list_type: "secrets", pattern: "AKIA*EXAMPLE", source: "api" });
    expect(typeof c.body.id).toBe("number");
    expect(env.rt.config().allowlists.secrets).toEqual(["CONFIG-ALLOWED", "AKIA*EXAMPLE"]);
    const l = await env.json("GET", "/api/v1/allowlists");
    expect(l.body.secrets).toEqual([
      { pattern: "CONFIG-ALLOWED", source: "config" },
      { id: c.body.id, pattern: "AKIA*EXAMPLE", source: "api" },
    ]);
    expect(l.body.api_entries).toHaveLength(1);
    expect(l.body.api_entries[0]).toHaveProperty("created_at");
    expectError(
      await env.json("POST", "/api/v1/allowlists", { type: "secrets", pattern: "AKIA*EXAMPLE" }),
      409,
    );
    expectError(
      await env.json("POST", "/api/v1/allowlists", { type: "secrets", pattern: "CONFIG-ALLOWED" }),
      409,
    );
    expectError(await env.json("POST", "/api/v1/allowlists", { type: "keys", pattern: "x" }), 400);
    expectError(await env.json("POST", "/api/v1/allowlists", { type: "pii" }), 400);
    expectError(await env.json("DELETE", "/api/v1/allowlists/99999"), 404);
    expectError(await env.json("DELETE", "/api/v1/allowlists/abc"), 400);
    expect((await env.json("DELETE", `/api/v1/allowlists/${c.body.id}`)).body).toEqual({
      deleted: c.body.id,
    });
    expect(env.rt.config().allowlists.secrets).toEqual(["CONFIG-ALLOWED"]);
  });
  test("test: value_match and up to 20 matching findings", async () => {
    // What the scanner stores: the keyed content hash of the installation.
    const hashOf = (v: string) => contentHash(v, TEST_HMAC_KEY);
    for (let i = 0; i < 25; i++)
      emit({ path: `messages[${i}].content`, content_hash: hashOf(`v${i}`) }, { session_id: `allow-${i}` });
    emit({ content_hash: hashOf("AKIAIOSFODNN7EXAMPLE") }, { session_id: "exact" });
    await env.store.flush();
    const g = await env.json("POST", "/api/v1/allowlists/test", {
      pattern: "messages[*",
      value: "messages[1].content",
    });
    expect(g.body.value_match).toBe(true);
    expect(g.body.matches).toHaveLength(20);
    const e = await env.json("POST", "/api/v1/allowlists/test", {
      pattern: "AKIAIOSFODNN7EXAMPLE",
      value: "nope",
    });
    expect(e.body.value_match).toBe(false);
    expect(e.body.matches).toHaveLength(1);
    expect(e.body.matches[0].session_id).toBe("exact");
    expect(JSON.stringify(e.body)).not.toContain('"AKIAIOSFODNN7EXAMPLE"}');
    expectError(await env.json("POST", "/api/v1/allowlists/test", { value: "x" }), 400);
  });
});

describe("body limits", () => {
  test("a body over 1 MB is a 413", async () => {
    const big = JSON.stringify({ name: "x", pattern: "a".repeat(1_100_000) });
    const r = await env.json("POST", "/api/v1/rules", big, { "content-length": String(big.length) });
    expectError(r, 413, "too_large");
  });
});

/**
 * End to end through the real runtime (startSluice): requests through the proxy land in the store and
 * show in /findings, /sessions, /stats and /live; the proxy mode round trip over the API with its
 * finding, SSE event and persistence across a restart; a database locked by another process does not
 * fail or slow proxied requests; no raw secret reaches the database, the logs or the exports.
 *
 * The request hook here is a tiny stand-in detector for two known values (the matcher has its own
 * tests); everything else — proxy, runtime, store, audit files, dashboard — is the real thing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import type { RequestHook } from "../../src/core/hook.ts";
import type { Finding } from "../../src/core/types.ts";
import { followLive } from "../helpers/live.ts";
import { spawnSluice, startSluice } from "../helpers/sluice.ts";
import { anthropicMessage, json, startUpstream, type Upstream } from "../helpers/upstream.ts";

const rand = (alphabet: string, n: number) =>
  Array.from({ length: n }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join("");
const AWS = `AKIA${rand("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)}`;
const GH = `ghp_${rand("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36)}`;
const GKEY = `AIza${rand("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 35)}`;
const SECRETS = [AWS, GH, GKEY];
const sha = (v: string) => new Bun.CryptoHasher("sha256").update(v).digest("hex");

const hook: RequestHook = (r) => {
  const text = new TextDecoder().decode(r.body);
  const findings: Finding[] = [];
  for (const [value, type, rule] of [
    [AWS, "aws_access_key", "aws-access-key"],
    [GH, "github_pat", "github-pat"],
  ] as const) {
    const at = text.indexOf(value);
    if (at < 0) continue;
    findings.push({
      rule,
      detector: "secrets",
      finding_type: type,
      severity: "critical",
      action: "alert",
      action_source: "rule_default",
      matched_rules: [rule],
      path: "messages[0].content",
      start: at,
      end: at + value.length,
      preview: `${value.slice(0, 4)}****${value.slice(-4)}`,
      content_hash: sha(value),
      value_hash: null,
      decoded: null,
      description: `${type} found`,
    });
  }
  return { action: findings.length ? "alert" : "pass", findings, scanned_bytes: r.body.byteLength };
};

/** Every file under `dir`, at any depth. */
function filesUnder(dir: string): string[] {
  const files: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) files.push(...filesUnder(p));
    else files.push(p);
  }
  return files;
}

/** Follow the live stream once its first heartbeat arrived. */
async function liveStream(url: string) {
  const live = followLive(await fetch(url));
  await live.next((e) => e.event === "heartbeat");
  return live;
}

async function api(base: string, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (method !== "GET") {
    const s = await (await fetch(`${base}/api/v1/auth/session`)).json();
    headers["x-csrf-token"] = s.csrf_token;
  }
  const r = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return {
    status: r.status,
    body: text.startsWith("{") || text.startsWith("[") ? JSON.parse(text) : text,
    text,
  };
}

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json(anthropicMessage("ok", "claude-sonnet-test")));
  up.on("POST", "/v1/chat/completions", () => json({ id: "c1", object: "chat.completion", choices: [] }));
  up.on("POST", "/v1beta/*", () => json({ candidates: [] }));
});
afterAll(() => up.stop());

describe("findings from real requests", () => {
  test("appear in /findings, /sessions, /stats, /audit and /live; nothing raw on disk or in exports", async () => {
    await using s = await startSluice({ upstream: up.url, hook, config: { logging: { level: "debug" } } });
    const base = s.dashboardUrl!;
    const live = await liveStream(`${base}/api/v1/live`);

    const client = new Anthropic({
      baseURL: s.proxyUrl,
      apiKey: "sk-ant-test-key",
      defaultHeaders: { "x-claude-code-session-id": "e2e-session-1" },
      maxRetries: 0,
    });
    const msg = await client.messages.create({
      model: "claude-sonnet-test",
      max_tokens: 10,
      messages: [{ role: "user", content: `deploy with ${AWS} and ${GH}` }],
    });
    expect(msg.content[0]).toMatchObject({ type: "text", text: "ok" });
    // The same secret again in the same session: one row, seen twice.
    await client.messages.create({
      model: "claude-sonnet-test",
      max_tokens: 10,
      messages: [{ role: "user", content: `again ${AWS}` }],
    });
    const g = await fetch(`${s.proxyUrl}/v1beta/models/gemini-2.5-pro:generateContent?key=${GKEY}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
    });
    expect(g.status).toBe(200);

    const f = await live.next((e) => e.event === "finding" && e.data.finding_type === "github_pat");
    expect(f.data).toMatchObject({
      type: "finding",
      severity: "critical",
      provider: "anthropic",
      session_id: "e2e-session-1",
    });
    expect(typeof f.data.ts).toBe("string");
    const req = await live.next((e) => e.event === "request" && e.data.provider === "gemini");
    expect(String(req.data.path)).not.toContain(GKEY);
    await live.close();
    await s.runtime.store.flush();

    const findings = await api(base, "GET", "/api/v1/findings?session_id=e2e-session-1");
    expect(findings.body.total).toBe(2);
    const aws = findings.body.findings.find(
      (x: { finding_type: string }) => x.finding_type === "aws_access_key",
    );
    expect(aws).toMatchObject({
      seen_count: 2,
      provider: "anthropic",
      content_hash: sha(AWS),
      preview: `AKIA****${AWS.slice(-4)}`,
    });
    const sessions = await api(base, "GET", "/api/v1/sessions");
    const sess = sessions.body.sessions.find((x: { session_id: string }) => x.session_id === "e2e-session-1");
    expect(sess).toMatchObject({
      finding_count: 2,
      request_count: 2,
      provider: "anthropic",
      model: "claude-sonnet-test",
    });
    const stats = await api(base, "GET", "/api/v1/stats?days=1");
    expect(stats.body.today_count).toBe(2);
    expect(stats.body.by_provider.anthropic).toBe(2);
    expect(stats.body.total_requests).toBe(3);
    const audit = await api(base, "GET", "/api/v1/audit");
    expect(audit.body.total).toBe(3);
    expect(audit.body.entries.map((e: { action: string }) => e.action).sort()).toEqual([
      "alert",
      "alert",
      "pass",
    ]);
    const clients = await api(base, "GET", "/api/v1/clients");
    expect(clients.body.clients.find((c: { id: string }) => c.id === "anthropic-sdk").seen).toBe(true);

    // Nothing raw anywhere: database (+ WAL), audit JSONL, application log, exports, API answers.
    const exports = [
      (await api(base, "GET", "/api/v1/findings/export?format=csv")).text,
      (await api(base, "GET", "/api/v1/findings/export?format=json")).text,
      (await api(base, "GET", "/api/v1/audit/export?format=csv")).text,
      (await api(base, "GET", "/api/v1/audit/export?format=json")).text,
      (await api(base, "GET", "/api/v1/logs/download")).text,
      (await api(base, "GET", "/api/v1/logs/tail")).text,
      findings.text,
      audit.text,
    ];
    const files = filesUnder(s.configDir);
    expect(files.some((p) => p.endsWith("sluice.db"))).toBe(true);
    expect(files.some((p) => p.endsWith("audit.jsonl"))).toBe(true);
    const auditFile = files.find((p) => p.endsWith("audit.jsonl"))!;
    expect(statSync(auditFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(auditFile, "utf8").trim().split("\n")).toHaveLength(3);
    for (const secret of SECRETS) {
      for (const p of files)
        expect({ file: p, found: readFileSync(p).includes(secret) }).toEqual({ file: p, found: false });
      for (const t of exports) expect(t.includes(secret)).toBe(false);
    }
  });
});

describe("proxy mode over the API", () => {
  test("passthrough: finding, SSE event, audit as pass, persisted across a restart; back to active", async () => {
    let home: string;
    {
      await using s = await startSluice({ upstream: up.url, hook });
      home = s.configDir;
      const base = s.dashboardUrl!;
      const live = await liveStream(`${base}/api/v1/live`);
      const r = await api(base, "PUT", "/api/v1/config", { "proxy.mode": "passthrough" });
      expect(r.status).toBe(200);
      expect(r.body.mode).toBe("passthrough");
      const ev = await live.next((e) => e.event === "mode-changed");
      expect(ev.data).toMatchObject({ type: "mode-changed", mode: "passthrough", previous: "active" });
      expect((await api(base, "GET", "/api/v1/status")).body.mode).toBe("passthrough");
      const res = await fetch(`${s.proxyUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
        body: JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content: AWS }] }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await live.next((e) => e.event === "request");
      await live.close();
      await s.runtime.store.flush();
      const f = await api(base, "GET", "/api/v1/findings?finding_type=mode_changed");
      expect(f.body.total).toBe(1);
      expect(f.body.findings[0].severity).toBe("warning");
      const audit = await api(base, "GET", "/api/v1/audit");
      expect(audit.body.entries[0]).toMatchObject({ action: "pass", mode: "passthrough" });
      expect((await api(base, "GET", "/api/v1/findings?finding_type=aws_access_key")).body.total).toBe(0);
    }
    {
      await using s = await startSluice({ upstream: up.url, hook, home });
      const base = s.dashboardUrl!;
      expect((await api(base, "GET", "/api/v1/status")).body.mode).toBe("passthrough");
      expect((await api(base, "GET", "/api/v1/config")).body.proxy.mode).toBe("passthrough");
      const live = await liveStream(`${base}/api/v1/live`);
      expect((await api(base, "PUT", "/api/v1/config", { "proxy.mode": "active" })).body.mode).toBe("active");
      expect((await live.next((e) => e.event === "mode-changed")).data).toMatchObject({
        mode: "active",
        previous: "passthrough",
      });
      await live.close();
      const res = await fetch(`${s.proxyUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
        body: JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content: AWS }] }),
      });
      await res.arrayBuffer();
      await s.runtime.store.flush();
      expect((await api(base, "GET", "/api/v1/findings?finding_type=aws_access_key")).body.total).toBe(1);
    }
  });
});

describe("a locked database", () => {
  test("held by another process: proxied requests neither fail nor slow down; rows land once released", async () => {
    await using s = await startSluice({ upstream: up.url, hook });
    const send = async (i: number) => {
      const t0 = performance.now();
      const r = await fetch(`${s.proxyUrl}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer sk-test",
          "session-id": "locked-test",
        },
        body: JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content: `${i} ${AWS}` }] }),
      });
      await r.arrayBuffer();
      return { status: r.status, ms: performance.now() - t0 };
    };
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const baseline: number[] = [];
    for (let i = 0; i < 15; i++) baseline.push((await send(i)).ms);
    await s.runtime.store.flush();
    const before = s.runtime.store.audit.count();

    const dbPath = join(s.configDir, "sluice.db");
    expect(existsSync(dbPath)).toBe(true);
    const holder = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(dbPath)});
         db.run("PRAGMA busy_timeout = 5000"); db.run("BEGIN EXCLUSIVE");
         db.run("INSERT INTO settings (key, value) VALUES ('lock-test', '1') ON CONFLICT (key) DO UPDATE SET value = '2'");
         console.log("locked"); for await (const _ of console) { break; } db.run("COMMIT"); console.log("released");`,
      ],
      { stdin: "pipe", stdout: "pipe", stderr: "inherit" },
    );
    const reader = holder.stdout.getReader();
    let out = "";
    while (!out.includes("locked")) out += new TextDecoder().decode((await reader.read()).value);

    const release = async () => {
      holder.stdin.write("go\n");
      holder.stdin.end();
      return holder.exited;
    };
    try {
      const locked: { status: number; ms: number }[] = [];
      for (let i = 0; i < 15; i++) locked.push(await send(100 + i));
      expect(locked.every((r) => r.status === 200)).toBe(true);
      expect(median(locked.map((r) => r.ms))).toBeLessThan(median(baseline) + 25);
      // The writer met the lock (it retries with a backoff) and nothing was written or dropped.
      await new Promise<void>((resolve) => {
        const check = () =>
          s.runtime.store.queueStats().busy_retries > 0 ? resolve() : setTimeout(check, 10);
        check();
      });
      expect(s.runtime.store.audit.count()).toBe(before);
      // The dashboard still answers while the writer is locked out.
      expect((await fetch(`${s.dashboardUrl}/api/v1/status`)).status).toBe(200);
    } finally {
      expect(await release()).toBe(0);
    }
    await s.runtime.store.flush();
    expect(s.runtime.store.audit.count()).toBe(before + 15);
    expect(s.runtime.store.queueStats().dropped).toBe(0);
  });
});

describe("rules and allowlists reach the runtime", () => {
  test("API edits change the rule set and the configuration the scanner reads, without a restart", async () => {
    await using s = await startSluice({ upstream: up.url });
    const base = s.dashboardUrl!;
    const v0 = s.runtime.rulesVersion();
    expect(
      (
        await api(base, "POST", "/api/v1/rules", {
          name: "acme-id",
          pattern: "ACME-[0-9]{6}",
          action: "block",
        })
      ).status,
    ).toBe(201);
    expect(s.runtime.rulesVersion()).toBeGreaterThan(v0);
    expect(s.runtime.rules().find((r) => r.name === "acme-id")).toMatchObject({
      action: "block",
      source: "dashboard",
    });
    await api(base, "PUT", "/api/v1/rules/acme-id", { enabled: false });
    expect(s.runtime.rules().some((r) => r.name === "acme-id")).toBe(false);
    const a = await api(base, "POST", "/api/v1/allowlists", { type: "pii", pattern: "*@example.com" });
    expect(a.status).toBe(201);
    expect(s.runtime.config().allowlists.pii).toContain("*@example.com");
    const cfgFile = readFileSync(join(s.configDir, "config.yaml"), "utf8");
    expect(cfgFile).toContain("*@example.com");
    await api(base, "DELETE", `/api/v1/allowlists/${a.body.id}`);
    expect(s.runtime.config().allowlists.pii).not.toContain("*@example.com");
    await api(base, "PUT", "/api/v1/pipeline", {
      default_action: "block",
      detectors: { pii: { action: "alert" } },
    });
    expect(s.runtime.config().pipeline.default_action).toBe("block");
    expect(s.runtime.config().detectors.pii.action).toBe("alert");
  });
});

describe("sluice serve with SLUICE_DASHBOARD_PASSWORD", () => {
  test("the dashboard wants a login; the password never shows in the config, log or audit", async () => {
    const password = "pw-e2e-Very-Secret-1234";
    await using p = await spawnSluice([], { upstream: up.url, env: { SLUICE_DASHBOARD_PASSWORD: password } });
    const base = p.dashboardUrl!;
    expect((await fetch(`${base}/api/v1/status`)).status).toBe(401);
    expect((await fetch(`${base}/api/v1/live`)).status).toBe(401);
    const bad = await fetch(`${base}/api/v1/auth/login`, {
      method: "POST",
      body: JSON.stringify({ password: "nope" }),
    });
    expect(bad.status).toBe(401);
    const ok = await fetch(`${base}/api/v1/auth/login`, {
      method: "POST",
      body: JSON.stringify({ password }),
    });
    expect(ok.status).toBe(200);
    const cookie = ok.headers.get("set-cookie")!.split(";")[0]!;
    const { csrf_token } = await ok.json();
    const st = await (await fetch(`${base}/api/v1/status`, { headers: { cookie } })).json();
    expect(st.password_required).toBe(true);
    const cfg = await (await fetch(`${base}/api/v1/config`, { headers: { cookie } })).text();
    expect(cfg).not.toContain(password);
    expect(JSON.parse(cfg).dashboard.password_set).toBe(true);
    const put = await fetch(`${base}/api/v1/config`, {
      method: "PUT",
      headers: { cookie, "x-csrf-token": csrf_token, "content-type": "application/json" },
      body: JSON.stringify({ "proxy.mode": "passthrough" }),
    });
    expect(put.status).toBe(200);
    const log = await (await fetch(`${base}/api/v1/logs/download`, { headers: { cookie } })).text();
    expect(log).not.toContain(password);
    expect(p.output).not.toContain(password);
  });
});

describe("with the real matcher", () => {
  test("community rules find a key sent through the proxy; nothing raw on disk", async () => {
    await using s = await startSluice({ upstream: up.url });
    const base = s.dashboardUrl!;
    const client = new Anthropic({ baseURL: s.proxyUrl, apiKey: "sk-ant-test-key", maxRetries: 0 });
    await client.messages
      .create({
        model: "claude-sonnet-test",
        max_tokens: 10,
        messages: [{ role: "user", content: `my config:\naws_access_key_id = ${AWS}\ngithub_token = ${GH}` }],
      })
      .catch(() => {});
    await s.runtime.store.flush();
    const findings = await api(base, "GET", "/api/v1/findings");
    expect(findings.body.total).toBeGreaterThan(0);
    expect((await api(base, "GET", "/api/v1/stats")).body.today_count).toBeGreaterThan(0);
    const files = filesUnder(s.configDir);
    const exports = [
      (await api(base, "GET", "/api/v1/findings/export?format=csv")).text,
      (await api(base, "GET", "/api/v1/audit/export?format=json")).text,
      (await api(base, "GET", "/api/v1/logs/download")).text,
      findings.text,
    ];
    for (const secret of [AWS, GH]) {
      for (const p of files)
        expect({ file: p, found: readFileSync(p).includes(secret) }).toEqual({ file: p, found: false });
      for (const t of exports) expect(t.includes(secret)).toBe(false);
    }
  });

  test("rule, allowlist and pipeline edits over the API take effect on the next request", async () => {
    await using s = await startSluice({ upstream: up.url });
    const base = s.dashboardUrl!;
    const send = async (content: string) => {
      const r = await fetch(`${s.proxyUrl}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer sk-test",
          "session-id": "edits",
        },
        body: JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content }] }),
      });
      await r.arrayBuffer();
      return r.status;
    };
    const count = async (qs: string) => {
      await s.runtime.store.flush();
      return (await api(base, "GET", `/api/v1/findings?${qs}`)).body.total as number;
    };
    // A dashboard rule that blocks.
    const created = await api(base, "POST", "/api/v1/rules", {
      name: "acme-project-id",
      pattern: "ACME-PROJ-[0-9]{6}",
      action: "block",
      severity: "high",
    });
    expect(created.status).toBe(201);
    expect(await send("ticket ACME-PROJ-123456 please")).toBe(400);
    expect(await count("rule=acme-project-id")).toBe(1);
    // Disabled: the same content passes.
    expect((await api(base, "PUT", "/api/v1/rules/acme-project-id", { enabled: false })).status).toBe(200);
    expect(await send("ticket ACME-PROJ-654321 please")).toBe(200);
    expect(await count("rule=acme-project-id")).toBe(1);
    // An allowlisted secret is not reported.
    const before = await count("detector=secrets");
    expect((await api(base, "POST", "/api/v1/allowlists", { type: "secrets", pattern: AWS })).status).toBe(
      201,
    );
    await send(`aws_access_key_id = ${AWS}`);
    expect(await count("detector=secrets")).toBe(before);
    // The secrets detector set to block: the next secret is blocked.
    const p = await api(base, "PUT", "/api/v1/pipeline", { detectors: { secrets: { action: "block" } } });
    expect(p.body.errors).toEqual([]);
    expect(await send(`github_token = ${GH}`)).toBe(400);
  });
});

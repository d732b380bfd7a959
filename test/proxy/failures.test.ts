/**
 * Upstream failures and the hook's outcomes: hanging (504) and resetting (502) upstreams in each
 * provider's error shape, no hang; unknown provider 400; fail-open when the hook throws; block and
 * redact verdicts; passthrough mode; header hygiene; compressed bodies untouched; manual redirects.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScanRequest, Verdict } from "../../src/core/hook.ts";
import type { Finding } from "../../src/core/types.ts";
import { finding } from "../helpers/records.ts";
import { startSluice } from "../helpers/sluice.ts";
import { testTls } from "../helpers/tls.ts";
import { hang, json, startUpstream, type Upstream } from "../helpers/upstream.ts";

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ ok: true }));
  up.on("POST", "/v1/chat/completions", () => json({ ok: true }));
  up.on("POST", /:generateContent/, () => json({ ok: true }));
});
afterAll(async () => {
  await up?.stop();
});

const ANTH = { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" };
const OAI = { "content-type": "application/json", authorization: "Bearer sk-test" };
const GEM = { "content-type": "application/json", "x-goog-api-key": "AIzaX" };

describe("upstream failures", () => {
  test("a hanging upstream gets a 504 in the provider's shape after proxy.timeout, no hang", async () => {
    // Upstreams that never answer: every provider points at the hanging path prefix (route added last wins).
    up.on("POST", "/v1/hang/*", hang);
    await using s = await startSluice({
      config: {
        proxy: { timeout: 1, retries: 1 },
        providers: {
          anthropic: { upstream: `${up.url}/v1/hang` },
          openai: { upstream: `${up.url}/v1/hang` },
          gemini: { upstream: `${up.url}/v1/hang` },
        },
      },
    });
    const before = up.requests.length;
    const t0 = performance.now();
    const [a, o, g] = await Promise.all([
      fetch(`${s.proxyUrl}/v1/messages`, { method: "POST", headers: ANTH, body: "{}" }),
      fetch(`${s.proxyUrl}/v1/chat/completions`, { method: "POST", headers: OAI, body: "{}" }),
      fetch(`${s.proxyUrl}/v1beta/models/g:generateContent`, { method: "POST", headers: GEM, body: "{}" }),
    ]);
    const elapsed = performance.now() - t0;
    expect(elapsed).toBeLessThan(4000);
    expect([a.status, o.status, g.status]).toEqual([504, 504, 504]);
    const aj = (await a.json()) as { type: string; error: { type: string; message: string } };
    expect(aj.type).toBe("error");
    expect(aj.error.type).toBe("timeout_error");
    const oj = (await o.json()) as { error: { code: string; type: string } };
    expect(oj.error.code).toBe("upstream_timeout");
    const gj = (await g.json()) as { error: { code: number; status: string } };
    expect(gj.error).toMatchObject({ code: 504, status: "DEADLINE_EXCEEDED" });
    // A timeout may have reached upstream: no retry.
    expect(up.requests.length - before).toBe(3);
    // and the upstream saw sluice go away
    await Promise.all(up.requests.slice(before).map((r) => r.closed));
  });

  test("a resetting upstream gets a 502 in the provider's shape", async () => {
    await using s = await startSluice({
      config: { proxy: { retries: 0 }, providers: { anthropic: { upstream: up.resetUrl } } },
    });
    const res = await fetch(`${s.proxyUrl}/v1/messages`, { method: "POST", headers: ANTH, body: "{}" });
    expect(res.status).toBe(502);
    const j = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(j).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect(j.error.message).toContain("could not reach upstream");
  });

  test("a refused connection is retried proxy.retries times (nothing reached upstream), then 502", async () => {
    // Port 1 (tcpmux): nothing listens there, so connections are refused. A port freed a moment
    // before could be taken by another test's listener meanwhile (seen in a landing run).
    const port = 1;
    await using s = await startSluice({
      config: { proxy: { retries: 2 }, providers: { openai: { upstream: `https://127.0.0.1:${port}` } } },
      quiet: true,
    });
    const lines: string[] = [];
    s.runtime.log.follow((l) => lines.push(l));
    s.runtime.log.level = "info";
    const res = await fetch(`${s.proxyUrl}/v1/chat/completions`, {
      method: "POST",
      headers: OAI,
      body: "{}",
    });
    expect(res.status).toBe(502);
    const j = (await res.json()) as { error: { code: string } };
    expect(j.error.code).toBe("upstream_unreachable");
    expect(lines.filter((l) => l.includes("retrying upstream request")).length).toBe(2);
  });

  test("an unknown provider gets a 400 listing what sluice recognises, counted under unknown", async () => {
    await using s = await startSluice({ upstream: up.url });
    const res = await fetch(`${s.proxyUrl}/some/other/api`, { method: "POST", body: "{}" });
    expect(res.status).toBe(400);
    const j = (await res.json()) as { error: { code: string; message: string; recognised: string[] } };
    expect(j.error.code).toBe("unknown_provider");
    expect(j.error.message).toContain("/v1/messages");
    expect(j.error.recognised.length).toBeGreaterThan(2);
    const metrics = await (await fetch(`${s.proxyUrl}/metrics`)).text();
    expect(metrics).toContain('sluice_provider_requests_total{provider="unknown"} 1');
  });
});

describe("the request-scanning hook", () => {
  test("fail-open: a hook that throws → request forwarded unscanned, critical scan_error emitted and counted", async () => {
    const hook = () => {
      throw new Error("detector exploded");
    };
    await using s = await startSluice({ upstream: up.url, hook });
    const findings: Finding[] = [];
    s.runtime.bus.on("finding", (e) => findings.push(e.finding));
    const before = up.requests.length;
    const res = await fetch(`${s.proxyUrl}/v1/messages`, { method: "POST", headers: ANTH, body: '{"a":1}' });
    expect(res.status).toBe(200);
    expect(up.requests.length).toBe(before + 1);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ finding_type: "scan_error", severity: "critical" });
    const metrics = await (await fetch(`${s.proxyUrl}/metrics`)).text();
    expect(metrics).toContain('sluice_findings_total{type="scan_error"} 1');
  });

  test("an async hook that rejects is fail-open too", async () => {
    await using s = await startSluice({
      upstream: up.url,
      hook: async () => Promise.reject(new Error("nope")),
    });
    const res = await fetch(`${s.proxyUrl}/v1/chat/completions`, {
      method: "POST",
      headers: OAI,
      body: "{}",
    });
    expect(res.status).toBe(200);
  });

  test("block answers 400 or 403 in each provider's shape naming type, path and rule, never the value", async () => {
    const seen: ScanRequest[] = [];
    const hook = (r: ScanRequest): Verdict => {
      seen.push(r);
      return { action: "block", findings: [finding()], scanned_bytes: r.body.byteLength };
    };
    await using s = await startSluice({ upstream: up.url, hook });
    const requests: string[] = [];
    s.runtime.bus.on("request", (e) => requests.push(e.action));
    const before = up.requests.length;
    const secret = "AKIAIOSFODNN7EXAMPLQ";
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: secret }] });
    const a = await fetch(`${s.proxyUrl}/v1/messages`, { method: "POST", headers: ANTH, body });
    const o = await fetch(`${s.proxyUrl}/v1/chat/completions`, { method: "POST", headers: OAI, body });
    const g = await fetch(`${s.proxyUrl}/v1beta/models/g:generateContent`, {
      method: "POST",
      headers: GEM,
      body,
    });
    expect([a.status, o.status, g.status]).toEqual([400, 400, 403]);
    const at = await a.text();
    const ot = await o.text();
    const gt = await g.text();
    for (const t of [at, ot, gt]) {
      expect(t).not.toContain(secret);
      expect(t).toContain(
        "aws_access_key at messages[0].content (rule aws-access-key; block: the rule's default)",
      );
    }
    expect(JSON.parse(at)).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(JSON.parse(ot)).toMatchObject({
      error: { type: "invalid_request_error", code: "blocked_by_sluice" },
    });
    expect(JSON.parse(gt)).toMatchObject({ error: { code: 403, status: "PERMISSION_DENIED" } });
    expect(up.requests.length).toBe(before);
    expect(requests).toEqual(["block", "block", "block"]);
    expect(seen[0]!.session.client).toBe("unknown");
    expect((seen[0]!.json as { model: string }).model).toBe("m");
  });

  test("redact forwards the verdict's body", async () => {
    const redacted = new TextEncoder().encode('{"messages":[{"role":"user","content":"[REDACTED]"}]}');
    const hook = (): Verdict => ({
      action: "redact",
      findings: [finding({ action: "redact" })],
      body: redacted,
      scanned_bytes: 10,
    });
    await using s = await startSluice({ upstream: up.url, hook });
    const res = await fetch(`${s.proxyUrl}/v1/messages`, {
      method: "POST",
      headers: ANTH,
      body: '{"messages":[{"role":"user","content":"AKIAIOSFODNN7EXAMPLQ"}]}',
    });
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(up.requests.at(-1)!.body)).toBe(new TextDecoder().decode(redacted));
  });

  test("passthrough mode does not call the hook and audits the request as pass", async () => {
    let calls = 0;
    const hook = (): Verdict => {
      calls++;
      return { action: "block", findings: [finding()], scanned_bytes: 0 };
    };
    await using s = await startSluice({ upstream: up.url, hook });
    const events: { mode: string }[] = [];
    const findings: Finding[] = [];
    const actions: string[] = [];
    s.runtime.bus.on("mode-changed", (e) => events.push(e));
    s.runtime.bus.on("finding", (e) => findings.push(e.finding));
    s.runtime.bus.on("request", (e) => actions.push(`${e.action}/${e.mode}`));
    s.runtime.setMode("passthrough", "test");
    const res = await fetch(`${s.proxyUrl}/v1/messages`, { method: "POST", headers: ANTH, body: "{}" });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(calls).toBe(0);
    expect(events as unknown).toEqual([{ mode: "passthrough", previous: "active" }]);
    expect(findings.map((f) => [f.finding_type, f.severity])).toEqual([["mode_changed", "warning"]]);
    expect(actions).toEqual(["pass/passthrough"]);
    expect(s.runtime.store.getSetting("proxy.mode")).toBe("passthrough");
    s.runtime.setMode("active", "test");
    const blocked = await fetch(`${s.proxyUrl}/v1/messages`, { method: "POST", headers: ANTH, body: "{}" });
    expect(blocked.status).toBe(400);
  });

  test("the hook gets the session context: ids from headers and Claude's metadata.user_id", async () => {
    const seen: ScanRequest[] = [];
    await using s = await startSluice({
      upstream: up.url,
      hook: (r) => {
        seen.push(r);
        return { action: "pass", findings: [], scanned_bytes: 0 };
      },
    });
    await fetch(`${s.proxyUrl}/v1/messages?beta=true`, {
      method: "POST",
      headers: { ...ANTH, "user-agent": "claude-cli/2.1.328 (external, sdk-cli)", "x-app": "cli" },
      body: JSON.stringify({
        model: "claude-opus-4",
        metadata: {
          user_id: JSON.stringify({ device_id: "dev-1", account_uuid: "acc-1", session_id: "sess-1" }),
        },
      }),
    });
    await fetch(`${s.proxyUrl}/v1/responses`, {
      method: "POST",
      headers: {
        ...OAI,
        "user-agent": "codex_exec/0.169.0 (Debian 12.0.0; x86_64)",
        "session-id": "codex-s",
      },
      body: JSON.stringify({ model: "gpt-5-codex", input: [] }),
    });
    await fetch(`${s.proxyUrl}/v1beta/models/gemini-2.5-pro:generateContent`, {
      method: "POST",
      headers: { ...GEM, "user-agent": "GeminiCLI-tui/0.61.0/gemini-2.5-pro (linux; x64; terminal)" },
      body: "{}",
    });
    expect(seen.map((r) => r.session)).toMatchObject([
      {
        session_id: "sess-1",
        client: "claude-code",
        account_id: "acc-1",
        device_id: "dev-1",
        model: "claude-opus-4",
      },
      { session_id: "codex-s", client: "codex", model: "gpt-5-codex", os_platform: "linux" },
      { client: "gemini-cli", model: "gemini-2.5-pro" },
    ]);
    expect(seen[2]!.session.session_id).toMatch(/^fp:[0-9a-f]{16}$/);
    expect(seen[0]!.session.api_key_hash).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe("forwarding hygiene", () => {
  test("hop-by-hop headers and Connection tokens are stripped; others pass unchanged", async () => {
    await using s = await startSluice({ upstream: up.url });
    await fetch(`${s.proxyUrl}/v1/messages`, {
      method: "POST",
      headers: {
        ...ANTH,
        connection: "keep-alive, x-drop-me",
        "x-drop-me": "1",
        "proxy-authorization": "Basic abc",
        te: "trailers",
        "anthropic-beta": "a-2025,b-2026,c",
        "x-claude-code-session-id": "s-1",
      },
      body: "{}",
    });
    const h = up.requests.at(-1)!.headers;
    expect(h.get("x-drop-me")).toBeNull();
    expect(h.get("proxy-authorization")).toBeNull();
    expect(h.get("te")).toBeNull();
    expect(h.get("anthropic-beta")).toBe("a-2025,b-2026,c");
    expect(h.get("x-claude-code-session-id")).toBe("s-1");
    expect(h.get("host")).toBe(new URL(up.url).host);
  });

  test("compressed responses pass through untouched, redirects are not followed", async () => {
    const gz = Bun.gzipSync(new TextEncoder().encode(JSON.stringify({ hello: "world" })));
    up.on(
      "POST",
      "/v1/embeddings",
      () => new Response(gz, { headers: { "content-encoding": "gzip", "content-type": "application/json" } }),
    );
    up.on(
      "POST",
      "/v1/completions",
      () => new Response(null, { status: 307, headers: { location: "/elsewhere" } }),
    );
    await using s = await startSluice({ upstream: up.url });
    const res = await fetch(`${s.proxyUrl}/v1/embeddings`, {
      method: "POST",
      headers: OAI,
      body: "{}",
      decompress: false,
    } as RequestInit);
    expect(res.headers.get("content-encoding")).toBe("gzip");
    const raw = new Uint8Array(await res.arrayBuffer());
    expect(Buffer.from(raw).equals(Buffer.from(gz))).toBe(true);
    const r = await fetch(`${s.proxyUrl}/v1/completions`, {
      method: "POST",
      headers: OAI,
      body: "{}",
      redirect: "manual",
    });
    expect(r.status).toBe(307);
    expect(r.headers.get("location")).toBe("/elsewhere");
  });

  test("a body above proxy.max_body_size is scanned as it streams and forwarded with its bytes intact", async () => {
    const scanned: number[] = [];
    await using s = await startSluice({
      upstream: up.url,
      config: { proxy: { max_body_size: 1024 } },
      hook: (r) => {
        scanned.push(r.body.byteLength);
        return { action: "pass", findings: [], scanned_bytes: r.body.byteLength };
      },
    });
    const big = "x".repeat(5000);
    const res = await fetch(`${s.proxyUrl}/v1/chat/completions`, { method: "POST", headers: OAI, body: big });
    expect(res.status).toBe(200);
    expect(scanned.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(5000);
    expect(new TextDecoder().decode(up.requests.at(-1)!.body)).toBe(big);
  });
});

describe("secrets stay out of logs and events", () => {
  test("a credential in the query is forwarded as is but masked in events and logs; blocked values never logged", async () => {
    const secret = "AKIAIOSFODNN7EXAMPLQ";
    const key = "AIzaSyRAWKEYRAWKEYRAWKEY12345";
    await using s = await startSluice({
      upstream: up.url,
      hook: (r): Verdict =>
        new TextDecoder().decode(r.body).includes(secret)
          ? { action: "block", findings: [finding()], scanned_bytes: r.body.byteLength }
          : { action: "pass", findings: [], scanned_bytes: r.body.byteLength },
    });
    s.runtime.log.level = "debug";
    const events: string[] = [];
    s.runtime.bus.on("request", (e) => events.push(JSON.stringify(e)));
    s.runtime.bus.on("finding", (e) => events.push(JSON.stringify(e)));
    const ok = await fetch(`${s.proxyUrl}/v1beta/models/g:generateContent?alt=json&key=${key}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    expect(up.requests.at(-1)!.path).toBe(`/v1beta/models/g:generateContent?alt=json&key=${key}`);
    const blocked = await fetch(`${s.proxyUrl}/v1/messages`, {
      method: "POST",
      headers: ANTH,
      body: JSON.stringify({ messages: [{ role: "user", content: secret }] }),
    });
    expect(blocked.status).toBe(400);
    expect(events.some((e) => e.includes("key=****"))).toBe(true);
    const everything = [...events, ...s.runtime.log.recent].join("\n");
    expect(everything).not.toContain(key);
    expect(everything).not.toContain(secret);
  });
});

test("a body above the 1 GiB hard limit gets a 413 in the provider's shape, not Bun's empty one", async () => {
  await using s = await startSluice({ upstream: up.url, dashboard: false });
  // Only the declared length matters: sluice answers before reading the body.
  const res = await new Promise<string>((resolve, reject) => {
    const u = new URL(s.proxyUrl);
    const sock = Bun.connect({
      hostname: u.hostname,
      port: Number(u.port),
      socket: {
        open(sk) {
          sk.write(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer sk-x\r\ncontent-length: 2147483648\r\n\r\n{",
          );
        },
        data(_sk, d) {
          resolve(d.toString());
        },
        error: (_sk, e) => reject(e),
      },
    });
    void sock;
  });
  expect(res).toMatch(/^HTTP\/1\.1 413/);
  expect(res).toContain("larger than the 1 GiB");
});

test("chunked bodies (no Content-Length): scanned whole within max_body_size, scanned as they stream above it", async () => {
  const scanned: number[] = [];
  await using s = await startSluice({
    upstream: up.url,
    dashboard: false,
    config: { proxy: { max_body_size: 1024 } },
    hook: (r) => {
      scanned.push(r.body.byteLength);
      return { action: "pass", findings: [], scanned_bytes: r.body.byteLength };
    },
  });
  const chunked = (parts: string[]) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (const p of parts) c.enqueue(new TextEncoder().encode(p));
        c.close();
      },
    });
  const small = ["{", '"a":', '"b"}'];
  const r1 = await fetch(`${s.proxyUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer sk-x" },
    body: chunked(small),
  });
  expect(r1.status).toBe(200);
  expect(new TextDecoder().decode(up.requests.at(-1)!.body)).toBe(small.join(""));
  expect(scanned).toEqual([small.join("").length]);
  const big = Array.from({ length: 10 }, (_, i) => `${i}`.repeat(700));
  const r2 = await fetch(`${s.proxyUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer sk-x" },
    body: chunked(big),
  });
  expect(r2.status).toBe(200);
  expect(new TextDecoder().decode(up.requests.at(-1)!.body)).toBe(big.join(""));
  // Every byte scanned; windows after the first also carry the end of the one before.
  expect(scanned.slice(1).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(big.join("").length);
});

describe("upstream TLS trust", () => {
  const post = (base: string) =>
    fetch(`${base}/v1/chat/completions`, { method: "POST", headers: OAI, body: "{}" });

  test("without proxy.ca_bundle the test CA is not trusted: 502, no retry of a certificate error", async () => {
    await using s = await startSluice({ upstream: up.url, dashboard: false, trustTestCa: false });
    const before = up.requests.length;
    const res = await post(s.proxyUrl);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      "could not reach upstream",
    );
    expect(up.requests.length).toBe(before);
  });

  test("proxy.ca_bundle may be a directory of certificates", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-cadir-"));
    copyFileSync(testTls().caPath, join(dir, "corp-root.pem"));
    await using s = await startSluice({
      upstream: up.url,
      dashboard: false,
      trustTestCa: false,
      config: { proxy: { ca_bundle: dir } },
    });
    expect((await post(s.proxyUrl)).status).toBe(200);
  });

  test("proxy.verify_ssl: false skips verification (and warns)", async () => {
    await using s = await startSluice({
      upstream: up.url,
      dashboard: false,
      trustTestCa: false,
      config: { proxy: { verify_ssl: false } },
    });
    expect((await post(s.proxyUrl)).status).toBe(200);
    expect(s.runtime.log.recent.some((l) => l.includes("proxy.verify_ssl is false"))).toBe(true);
  });
});

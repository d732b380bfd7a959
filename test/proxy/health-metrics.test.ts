/** `GET /health` and `GET /metrics`: the health record and every metric (prefix `sluice_`), as a scraper reads them. */
import { expect, test } from "bun:test";
import { startSluice } from "../helpers/sluice.ts";
import { json, startUpstream } from "../helpers/upstream.ts";

test("/health returns the health record", async () => {
  await using s = await startSluice({ dashboard: false });
  const res = await fetch(`${s.proxyUrl}/health`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  const h = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(h).sort()).toEqual(["requests", "status", "uptime", "version", "warm_up"]);
  expect(h.status).toBe("ok");
  expect(typeof h.version).toBe("string");
  expect(typeof h.uptime).toBe("number");
  expect(h.requests).toBe(0);
  expect(h.warm_up).toBe("off"); // the test helper turns it off
  // Tools probe the base URL (Claude Code sends HEAD /).
  expect((await fetch(`${s.proxyUrl}/`, { method: "HEAD" })).status).toBe(200);
});

test("/metrics: content type, HELP/TYPE lines, every metric and label", async () => {
  await using up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ ok: 1 }));
  await using s = await startSluice({
    upstream: up.url,
    hook: (r) => ({
      action: "log",
      findings: [
        {
          rule: "email",
          detector: "pii",
          finding_type: "email",
          severity: "warning",
          action: "log",
          action_source: "default",
          matched_rules: ["email"],
          path: "messages[0].content",
          start: 0,
          end: 5,
          preview: "a****m",
          content_hash: "2".repeat(64),
          value_hash: null,
          decoded: null,
          description: "",
        },
      ],
      scanned_bytes: r.body.byteLength,
    }),
  });
  const body = '{"messages":[{"role":"user","content":"a@b.example"}]}';
  const r = await fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": "k", "content-type": "application/json" },
    body,
  });
  await r.arrayBuffer();
  const res = await fetch(`${s.proxyUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const text = await res.text();
  const metrics: [string, string][] = [
    ["sluice_active_requests", "gauge"],
    ["sluice_requests_total", "counter"],
    ["sluice_bytes_scanned_total", "counter"],
    ["sluice_findings_total", "counter"],
    ["sluice_provider_requests_total", "counter"],
    ["sluice_scan_duration_seconds", "summary"],
  ];
  for (const [name, type] of metrics) {
    expect(text).toMatch(new RegExp(`^# HELP ${name} \\S.*$`, "m"));
    expect(text).toContain(`# TYPE ${name} ${type}\n`);
  }
  for (const a of ["pass", "log", "alert", "block"])
    expect(text).toMatch(new RegExp(`^sluice_requests_total\\{action="${a}"\\} \\d+$`, "m"));
  for (const p of ["anthropic", "openai", "gemini", "unknown"])
    expect(text).toMatch(new RegExp(`^sluice_provider_requests_total\\{provider="${p}"\\} \\d+$`, "m"));
  expect(text).toContain('sluice_requests_total{action="log"} 1\n');
  expect(text).toContain('sluice_provider_requests_total{provider="anthropic"} 1\n');
  expect(text).toContain('sluice_findings_total{type="email"} 1\n');
  expect(text).toContain(`sluice_bytes_scanned_total ${body.length}\n`);
  expect(text).toContain("sluice_active_requests 0\n");
  expect(text).toMatch(/^sluice_scan_duration_seconds_sum \d+(\.\d+)?(e-\d+)?$/m);
  expect(text).toContain("sluice_scan_duration_seconds_count 1\n");
  const health = (await (await fetch(`${s.proxyUrl}/health`)).json()) as { requests: number };
  expect(health.requests).toBe(1);
});

test("the dashboard's status shows the running build's version, the one /health shows", async () => {
  await using s = await startSluice();
  const health = (await (await fetch(`${s.proxyUrl}/health`)).json()) as { version: string };
  const status = (await (await fetch(`${s.dashboardUrl}/api/v1/status`)).json()) as { version: string };
  expect(status.version).toBe(health.version);
  expect(status.version).toMatch(/^\d+\.\d+\.\d+/);
});

/**
 * End to end with the real scanner (no injected hook): a YAML custom rule with action block stops a
 * request with the provider's block (400 for Anthropic) naming the finding type, path and rule but never the value; the
 * upstream never sees it; findings reach the bus.
 */
import { expect, test } from "bun:test";
import type { Finding } from "../../src/core/types.ts";
import { startSluice } from "../helpers/sluice.ts";
import { json, startUpstream } from "../helpers/upstream.ts";

const RULE = {
  name: "test-ticket",
  pattern: "SLT-[0-9]{6}-[A-Z]{4}",
  severity: "high",
  action: "block",
} as const;
const VALUE = "SLT-123456-ABCD";

test("a custom block rule stops the request with a provider-shaped 400", async () => {
  await using up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ ok: true }));
  await using s = await startSluice({
    upstream: up.url,
    config: { custom_rules: [RULE] },
    noDefaultRules: true,
  });
  const findings: Finding[] = [];
  s.runtime.bus.on("finding", (e) => findings.push(e.finding));
  const headers = { "content-type": "application/json", "x-api-key": "k" };
  const clean = await fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers,
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "nothing to see" }] }),
  });
  expect(clean.status).toBe(200);
  const before = up.requests.length;
  const res = await fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers,
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: `see ticket ${VALUE} please` }] }),
  });
  expect(res.status).toBe(400);
  const text = await res.text();
  expect(text).not.toContain(VALUE);
  const body = JSON.parse(text) as { type: string; error: { type: string; message: string } };
  expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  expect(body.error.message).toContain("test-ticket");
  expect(body.error.message).toContain("messages[0]");
  expect(up.requests.length).toBe(before);
  expect(findings.some((f) => f.rule === "test-ticket" && f.action === "block")).toBe(true);
  expect(JSON.stringify(findings)).not.toContain(VALUE);
});

/**
 * Policy precedence as users meet it: the official Anthropic SDK through the proxy to a stand-in
 * upstream, one value per request, and what reached the upstream and what the store recorded.
 *
 * Strongest first: an action the user set on a rule (YAML custom_rules, the dashboard API) →
 * `detectors.<name>.action` → the rule's shipped default → `pipeline.default_action`. Each finding
 * says which of them gave its action, and a value several rules match is stored under the rule
 * that decided (filtering by that rule finds it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { Gen } from "../corpus/gen.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { startMessagesUpstream, type Upstream } from "../helpers/upstream.ts";

const g = new Gen(4242);
const IBAN = g.iban();
const AWS_KEY = `AKIA${g.tok(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`;
const ACME = `acme_${g.tok(32, "abcdefghijklmnopqrstuvwxyz0123456789")}`;
const TICKET = `TICKET-${g.digits(6)}`;
const GHP = `ghp_${g.tok(36, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")}`;

interface StoredFinding {
  rule: string;
  action: string;
  action_source: string;
  matched_rules: string[];
  preview: string;
}

let up: Upstream;
beforeAll(async () => {
  up = await startMessagesUpstream();
});
afterAll(() => up?.stop());

/** Send `text` as a user message; what reached the upstream (null when sluice blocked it). */
async function send(s: InProcessSluice, text: string): Promise<string | null> {
  const client = new Anthropic({ baseURL: s.proxyUrl, apiKey: "sk-ant-api03-test", maxRetries: 0 });
  const before = up.requests.length;
  try {
    await client.messages.create({
      model: "claude-test-model",
      max_tokens: 8,
      messages: [{ role: "user", content: `please look at ${text}` }],
    });
  } catch (err) {
    expect((err as { status?: number }).status).toBe(400);
    expect(up.requests.length).toBe(before);
    return null;
  }
  return new TextDecoder().decode(up.requests.at(-1)!.body);
}

/** The dashboard API of a running sluice (no password: the CSRF token comes from the session route). */
async function api(s: InProcessSluice, method: string, path: string, body?: unknown): Promise<unknown> {
  const session = (await (await fetch(`${s.dashboardUrl}/api/v1/auth/session`)).json()) as {
    csrf_token: string;
  };
  const r = await fetch(`${s.dashboardUrl}/api/v1${path}`, {
    method,
    headers: { "content-type": "application/json", "x-csrf-token": session.csrf_token },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(r.status).toBeLessThan(300);
  return r.json();
}

/** The stored findings of one rule, once every queued write is in the store. */
async function findingsOf(s: InProcessSluice, rule: string): Promise<StoredFinding[]> {
  await s.runtime.store.flush();
  const r = (await api(s, "GET", `/findings?rule=${rule}`)) as { findings: StoredFinding[] };
  return r.findings;
}

describe("with detector actions, a user rule and a pipeline default", () => {
  let s: InProcessSluice;
  beforeAll(async () => {
    s = await startSluice({
      upstream: up.url,
      config: {
        detectors: { pii: { action: "redact" }, secrets: { action: "alert" } },
        pipeline: { default_action: "alert" },
        custom_rules: [
          { name: "acme_token", pattern: "acme_[a-z0-9]{32}", detector: "secrets", action: "block" },
          { name: "ticket_ref", pattern: "TICKET-[0-9]{6}", detector: "custom", action: "" },
        ],
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
  });

  test("detectors.pii.action redact beats the IBAN rule's shipped alert: the IBAN is redacted", async () => {
    const forwarded = await send(s, `IBAN ${IBAN}`);
    expect(forwarded).not.toBeNull();
    expect(forwarded).not.toContain(IBAN);
    expect(forwarded).toContain("[REDACTED:iban]");
    const [f] = await findingsOf(s, "iban");
    expect(f).toMatchObject({ action: "redact", action_source: "detector" });
  });

  test("detectors.secrets.action alert beats the AWS rule's shipped block: the key is forwarded", async () => {
    expect(await send(s, `key ${AWS_KEY}`)).toContain(AWS_KEY);
    const [f] = await findingsOf(s, "aws_access_key_id");
    expect(f).toMatchObject({ action: "alert", action_source: "detector" });
  });

  test("an action set on a custom rule beats detectors.secrets.action: blocked", async () => {
    expect(await send(s, `token ${ACME}`)).toBeNull();
    const [f] = await findingsOf(s, "acme_token");
    expect(f).toMatchObject({ action: "block", action_source: "rule" });
  });

  test("a rule without an action, its detector without one: pipeline.default_action", async () => {
    expect(await send(s, `see ${TICKET}`)).toContain(TICKET);
    const [f] = await findingsOf(s, "ticket_ref");
    expect(f).toMatchObject({ action: "alert", action_source: "default" });
  });

  test("an action set through the API on a shipped rule beats the detector; an empty one gives it back", async () => {
    const rule = (await api(s, "PUT", "/rules/iban", { action: "log" })) as Record<string, unknown>;
    expect(rule).toMatchObject({ action: "log", action_by_user: true });
    const other = g.iban();
    expect(await send(s, `IBAN ${other}`)).toContain(other);
    await s.runtime.store.flush();
    const logged = (await findingsOf(s, "iban")).find((f) => f.action === "log");
    expect(logged).toMatchObject({ action_source: "rule" });

    const reset = (await api(s, "PUT", "/rules/iban", { action: "" })) as Record<string, unknown>;
    expect(reset).toMatchObject({ action: "alert", action_by_user: false });
    const third = g.iban();
    const forwarded = await send(s, `IBAN ${third}`);
    expect(forwarded).not.toContain(third);
    expect(forwarded).toContain("[REDACTED:iban]");
  });
});

describe("with the defaults", () => {
  let s: InProcessSluice;
  beforeAll(async () => {
    s = await startSluice({ upstream: up.url });
  });
  afterAll(async () => {
    await s?.stop();
  });

  test("each rule's shipped default applies: the IBAN is alerted, the AWS key blocked", async () => {
    expect(await send(s, `IBAN ${IBAN}`)).toContain(IBAN);
    expect(await send(s, `key ${AWS_KEY}`)).toBeNull();
    expect(await findingsOf(s, "iban")).toMatchObject([{ action: "alert", action_source: "rule_default" }]);
    expect(await findingsOf(s, "aws_access_key_id")).toMatchObject([
      { action: "block", action_source: "rule_default" },
    ]);
  });

  test("a token two rules match is stored under the rule that blocked it, and found by it", async () => {
    expect(await send(s, `token = "${GHP}"`)).toBeNull();
    const stored = await findingsOf(s, "github_pat");
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ rule: "github_pat", action: "block", action_source: "rule_default" });
    expect(stored[0]!.matched_rules[0]).toBe("github_pat");
    expect(stored[0]!.matched_rules).toContain("generic_secret_assignment");
    expect(await findingsOf(s, "generic_secret_assignment")).toEqual([]);
  });
});

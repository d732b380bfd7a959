import { afterAll, describe, expect, test } from "bun:test";
import { fromFinding, type NotifyEvent } from "../../src/notify/events.ts";
import type { Delivery, HttpRequestSpec } from "../../src/notify/payloads.ts";
import * as build from "../../src/notify/payloads.ts";
import { verifyWebhook } from "../../src/notify/webhook-sign.ts";

/**
 * Local receivers that refuse what the real services refuse (required fields, enums, lengths,
 * auth), answering as they do. Every captured body is kept for the raw-value check at the end.
 */
const captured: string[] = [];
type Check = (req: Request, body: unknown, raw: string) => string | null;

function receiver(ok: { status: number; body: unknown }, check: Check) {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const raw = await req.text();
      captured.push(raw, JSON.stringify([...req.headers]));
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return Response.json({ error: "invalid json" }, { status: 400 });
      }
      const problem = check(req, body, raw);
      return problem
        ? Response.json({ error: problem }, { status: 400 })
        : Response.json(ok.body, { status: ok.status });
    },
  });
}

const RAW_SECRET = ["AKIA", "IOSFODNN7", "EXAMPLE"].join("");
const HOOK_SECRET = ["hook", "s3cret", "value"].join("-");
const ROUTING_KEY = ["R0", "1234567890abcdef1234567890abcd"].join("");
const GENIE_KEY = ["eb243592", "faa6", "4ba2", "a551", "1afdf565c889"].join("-");
const JIRA_TOKEN = ["ATATT3x", "FfGF0TOKEN"].join("");

const event: NotifyEvent = fromFinding(
  {
    finding: {
      rule: "aws_access_key",
      detector: "secrets",
      finding_type: "aws_access_key",
      severity: "critical",
      action: "block",
      action_source: "rule",
      matched_rules: ["aws_access_key"],
      path: "messages[0].content[1].text",
      start: 10,
      end: 30,
      preview: "AKIA****MPLE",
      content_hash: "x".repeat(64),
      value_hash: null,
      decoded: null,
      description: "AWS access key",
    },
    session: {
      session_id: "s-1",
      client: "claude-code",
      client_name: "Claude Code",
      account_id: null,
      device_id: null,
      source_ip: null,
      working_directory: "/home/dev/project",
      git_branch: null,
      os_platform: null,
      api_key_hash: null,
      model: null,
    },
    provider: "anthropic",
    request_id: "req-7",
    transport: "http",
  } as Parameters<typeof fromFinding>[0],
  "http://127.0.0.1:8081",
  "2026-01-01T00:00:00.000Z",
);
const delivery: Delivery = { event, suppressed: 41 };

const send = async (r: HttpRequestSpec) => {
  const res = await fetch(r.url, { method: "POST", headers: r.headers, body: r.body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
interface JiraFields {
  project?: { key?: string };
  issuetype?: { name?: string };
  summary?: string;
  description?: { type?: string; version?: number; content?: unknown };
}
const str = (v: unknown, max: number) => typeof v === "string" && v.length > 0 && v.length <= max;

const servers: ReturnType<typeof Bun.serve>[] = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
});
const serve = (...a: Parameters<typeof receiver>) => {
  const s = receiver(...a);
  servers.push(s);
  return s.url.href.replace(/\/$/, "");
};

describe("payload per channel type, checked by a receiver that validates like the service", () => {
  test("webhook: signed JSON with a timestamp, verified by the receiver", async () => {
    const url = serve({ status: 200, body: { ok: true } }, (req, _b, raw) =>
      verifyWebhook(
        HOOK_SECRET,
        raw,
        {
          signature: req.headers.get("x-sluice-signature"),
          timestamp: req.headers.get("x-sluice-timestamp"),
        },
        Math.floor(Date.now() / 1000),
      )
        ? null
        : "bad signature",
    );
    const r = await send(
      build.webhookRequest(`${url}/hook`, HOOK_SECRET, delivery, Math.floor(Date.now() / 1000)),
    );
    expect(r.status).toBe(200);
    const body = JSON.parse(captured.at(-2) as string);
    expect(body).toMatchObject({ type: "block", count: 42, rule: "aws_access_key" });
    expect(body.where).toEqual({
      client: "Claude Code",
      session_id: "s-1",
      working_directory: "/home/dev/project",
      path: "messages[0].content[1].text",
    });
  });

  test("slack: Block Kit within the limits of an incoming webhook", async () => {
    const url = serve({ status: 200, body: "ok" }, (_r, b) => {
      const body = b as {
        text?: unknown;
        blocks?: {
          type: string;
          text?: { type: string; text: string };
          fields?: unknown[];
          elements?: { url: string }[];
        }[];
      };
      if (!str(body.text, 40000)) return "no_text";
      if (!Array.isArray(body.blocks) || body.blocks.length > 50) return "invalid_blocks";
      for (const block of body.blocks) {
        if (block.type === "header" && (block.text?.type !== "plain_text" || block.text.text.length > 150))
          return "invalid_blocks";
        if (block.type === "section" && (block.fields?.length ?? 0) > 10) return "invalid_blocks";
        if (block.type === "actions" && !block.elements?.every((e) => /^https?:\/\//.test(e.url)))
          return "invalid_blocks";
      }
      return null;
    });
    expect((await send(build.slackRequest(`${url}/services/T0/B0/x`, delivery))).status).toBe(200);
    // `&`, `<`, `>` are Slack's control characters in mrkdwn: a path holding them is escaped.
    const odd: Delivery = {
      ...delivery,
      event: { ...event, where: { ...event.where, working_directory: "/w/<!channel> & a>b" } },
    };
    expect((await send(build.slackRequest(`${url}/services/T0/B0/x`, odd))).status).toBe(200);
    const sent = JSON.parse(captured.at(-2) as string);
    const wd = sent.blocks[1].fields.find((f: { text: string }) => f.text.startsWith("*Working directory*"));
    expect(wd.text).toBe("*Working directory*\n/w/&lt;!channel&gt; &amp; a&gt;b");
  });

  test("teams: a message with one Adaptive Card attachment", async () => {
    const url = serve({ status: 202, body: {} }, (_r, b) => {
      const body = b as {
        type?: string;
        attachments?: { contentType: string; content: { type: string; version: string; body: unknown[] } }[];
      };
      const a = body.attachments?.[0];
      if (body.type !== "message" || !a) return "not a message";
      if (a.contentType !== "application/vnd.microsoft.card.adaptive") return "bad contentType";
      if (a.content.type !== "AdaptiveCard" || !a.content.version || !Array.isArray(a.content.body))
        return "bad card";
      return null;
    });
    expect((await send(build.teamsRequest(`${url}/workflows/x`, delivery))).status).toBe(202);
  });

  test("pagerduty: Events API v2 trigger with dedup_key", async () => {
    const url = serve({ status: 202, body: { status: "success", message: "Event processed" } }, (_r, b) => {
      const body = b as {
        routing_key?: string;
        event_action?: string;
        dedup_key?: string;
        payload?: Record<string, unknown>;
      };
      if (body.routing_key?.length !== 32) return "Invalid routing key";
      if (!["trigger", "acknowledge", "resolve"].includes(body.event_action ?? ""))
        return "Invalid event_action";
      if (!str(body.dedup_key, 255)) return "dedup_key";
      const p = body.payload ?? {};
      if (!str(p.summary, 1024) || !str(p.source, 255)) return "payload.summary/source";
      if (!["critical", "error", "warning", "info"].includes(p.severity as string)) return "payload.severity";
      const links = (body as { links?: { href?: string }[] }).links ?? [];
      if (links.some((l) => !str(l.href, 2048))) return "links[].href";
      return null;
    });
    const r = await send(build.pagerdutyRequest(ROUTING_KEY, `${url}/v2/enqueue`, delivery));
    expect(r).toEqual({ status: 202, body: { status: "success", message: "Event processed" } });
    expect(JSON.parse(captured.at(-2) as string)).toMatchObject({
      dedup_key: "sluice:block:aws_access_key:s-1",
      client: "sluice",
      client_url: "http://127.0.0.1:8081/findings?request=req-7",
    });
  });

  test("opsgenie: create alert with alias and GenieKey auth", async () => {
    const url = serve(
      { status: 202, body: { result: "Request will be processed", took: 0.1, requestId: "r" } },
      (req, b) => {
        if (req.headers.get("authorization") !== `GenieKey ${GENIE_KEY}`) return "unauthorized";
        const body = b as Record<string, unknown>;
        if (!str(body.message, 130)) return "message";
        if (!str(body.alias, 512)) return "alias";
        if (!["P1", "P2", "P3", "P4", "P5"].includes(body.priority as string)) return "priority";
        if (!str(body.description, 15000)) return "description";
        const tags = body.tags as string[];
        if (tags.length > 20 || tags.some((t) => !str(t, 50))) return "tags";
        const details = body.details as Record<string, string>;
        if (Object.entries(details).reduce((n, [k, v]) => n + k.length + v.length, 0) > 8000)
          return "details";
        return null;
      },
    );
    const r = await send(build.opsgenieRequest(GENIE_KEY, `${url}/v2/alerts`, delivery));
    expect(r.status).toBe(202);
    expect(JSON.parse(captured.at(-2) as string)).toMatchObject({
      alias: "sluice:block:aws_access_key:s-1",
      priority: "P1",
    });
  });

  test("jira: REST v3 create issue with an ADF description and basic auth", async () => {
    const url = serve({ status: 201, body: { id: "10000", key: "SEC-1", self: "x" } }, (req, b) => {
      if (!req.url.endsWith("/rest/api/3/issue")) return "path";
      const expected = `Basic ${Buffer.from(`dev@example.com:${JIRA_TOKEN}`).toString("base64")}`;
      if (req.headers.get("authorization") !== expected) return "unauthorized";
      const f: JiraFields = (b as { fields?: JiraFields }).fields ?? {};
      if (!f.project?.key || !f.issuetype?.name) return "project/issuetype";
      if (!str(f.summary, 255) || /[\r\n]/.test(f.summary ?? "")) return "summary";
      const d = f.description;
      if (d?.type !== "doc" || d.version !== 1 || !Array.isArray(d.content)) return "description must be ADF";
      // ADF: a text node needs non-empty text; a link mark needs attrs.href.
      const bad: string[] = [];
      const walk = (n: {
        type?: string;
        text?: string;
        marks?: { type: string; attrs?: { href?: string } }[];
        content?: unknown[];
      }) => {
        if (n.type === "text" && !n.text) bad.push("empty text node");
        for (const m of n.marks ?? []) if (m.type === "link" && !m.attrs?.href) bad.push("link without href");
        for (const c of n.content ?? []) walk(c as typeof n);
      };
      walk(d as Parameters<typeof walk>[0]);
      return bad[0] ?? null;
    });
    const r = await send(
      build.jiraRequest(
        { url, email: "dev@example.com", api_token: JIRA_TOKEN, project_key: "SEC", issue_type: "Task" },
        delivery,
      ),
    );
    expect(r).toEqual({ status: 201, body: { id: "10000", key: "SEC-1", self: "x" } });
  });

  test("no receiver saw the raw matched value", () => {
    expect(captured.length).toBeGreaterThan(0);
    for (const c of captured) expect(c).not.toContain(RAW_SECRET);
  });
});

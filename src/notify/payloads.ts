/**
 * The request each channel type sends for one event, in the shape the receiving service accepts:
 * generic webhook (signed JSON), Slack incoming webhook (Block Kit), Teams workflow webhook (Adaptive
 * Card in a message attachment), PagerDuty Events API v2 (enqueue with dedup_key), Opsgenie Alert API
 * (create alert with alias), Jira REST v3 (create issue, description in Atlassian Document Format).
 * Email is sent through the mail library (see email.ts) from `emailMessage`. Length limits are the
 * services' own; text is cut to them so a long path never gets a message refused.
 */
import type { Severity } from "../core/types.ts";
import type { NotifyEvent } from "./events.ts";
import { signWebhook } from "./webhook-sign.ts";

export interface HttpRequestSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** `suppressed` events of the same dedup key were held back by the cooldown before this one. */
export interface Delivery {
  event: NotifyEvent;
  suppressed: number;
}

const cut = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

function countLine(d: Delivery): string | null {
  return d.suppressed > 0 ? `${d.suppressed} more like this during the cooldown` : null;
}

/** Field/value pairs every human-readable message shows. */
export function facts(d: Delivery): [string, string][] {
  const e = d.event;
  const rows: [string, string][] = [
    ["Event", e.type],
    ["Severity", e.severity],
    ["Action", e.action],
    ["Client", e.where.client],
  ];
  if (e.where.session_id) rows.push(["Session", e.where.session_id]);
  if (e.where.working_directory) rows.push(["Working directory", e.where.working_directory]);
  if (e.where.path) rows.push(["JSON path", e.where.path]);
  if (e.rule) rows.push(["Rule", e.rule]);
  if (e.preview) rows.push(["Preview (masked)", e.preview]);
  const more = countLine(d);
  if (more) rows.push(["Count", `${d.suppressed + 1} (${more})`]);
  return rows;
}

const JSON_HEADERS = { "content-type": "application/json" };

export function webhookRequest(
  url: string,
  secret: string,
  d: Delivery,
  nowSeconds: number,
): HttpRequestSpec {
  const body = JSON.stringify({ ...d.event, count: d.suppressed + 1 });
  return { url, headers: { ...JSON_HEADERS, ...signWebhook(secret, body, nowSeconds) }, body };
}

/**
 * Slack reads `&`, `<` and `>` in mrkdwn text as control characters (`<url|text>` links, `<!here>`
 * mentions), so a working directory or path holding them would be shown wrong or ping a channel;
 * Slack asks for exactly these three to be written as HTML entities, and nothing else.
 */
const slackEscape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function slackRequest(webhookUrl: string, d: Delivery): HttpRequestSpec {
  const e = d.event;
  const fields = facts(d)
    .slice(0, 10) // a section holds at most 10 fields
    .map(([k, v]) => ({ type: "mrkdwn", text: cut(`*${k}*\n${slackEscape(v)}`, 2000) }));
  const blocks = [
    { type: "header", text: { type: "plain_text", text: cut(e.title, 150) } },
    { type: "section", fields },
    {
      type: "actions",
      elements: [
        { type: "button", text: { type: "plain_text", text: "Open in sluice" }, url: cut(e.link, 3000) },
      ],
    },
  ];
  return {
    url: webhookUrl,
    headers: JSON_HEADERS,
    body: JSON.stringify({ text: cut(slackEscape(e.title), 3000), blocks }),
  };
}

export function teamsRequest(webhookUrl: string, d: Delivery): HttpRequestSpec {
  const e = d.event;
  const card = {
    $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
    type: "AdaptiveCard",
    version: "1.4",
    body: [
      { type: "TextBlock", text: e.title, weight: "Bolder", size: "Medium", wrap: true },
      { type: "FactSet", facts: facts(d).map(([title, value]) => ({ title, value })) },
    ],
    actions: [{ type: "Action.OpenUrl", title: "Open in sluice", url: e.link }],
  };
  const body = {
    type: "message",
    attachments: [
      { contentType: "application/vnd.microsoft.card.adaptive", contentUrl: null, content: card },
    ],
  };
  return { url: webhookUrl, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

const PAGERDUTY_SEVERITY: Record<Severity, string> = {
  critical: "critical",
  high: "error",
  warning: "warning",
  info: "info",
};

export const PAGERDUTY_URL = "https://events.pagerduty.com/v2/enqueue";

export function pagerdutyRequest(routingKey: string, url: string | undefined, d: Delivery): HttpRequestSpec {
  const e = d.event;
  const body = {
    routing_key: routingKey,
    event_action: "trigger",
    dedup_key: cut(`sluice:${e.dedup_key}`, 255),
    payload: {
      summary: cut(e.title, 1024),
      source: "sluice",
      severity: PAGERDUTY_SEVERITY[e.severity],
      timestamp: e.ts,
      component: e.where.client,
      group: e.type,
      class: e.rule ?? e.type,
      custom_details: Object.fromEntries(facts(d)),
    },
    links: [{ href: e.link, text: "Open in sluice" }],
    client: "sluice",
    client_url: e.link,
  };
  return { url: url || PAGERDUTY_URL, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

const OPSGENIE_PRIORITY: Record<Severity, string> = { critical: "P1", high: "P2", warning: "P3", info: "P5" };

export const OPSGENIE_URL = "https://api.opsgenie.com/v2/alerts";

export function opsgenieRequest(apiKey: string, url: string | undefined, d: Delivery): HttpRequestSpec {
  const e = d.event;
  const body = {
    message: cut(e.title, 130),
    alias: cut(`sluice:${e.dedup_key}`, 512),
    description: cut(
      `${facts(d)
        .map(([k, v]) => `${k}: ${v}`)
        .join("\n")}\n\n${e.link}`,
      15000,
    ),
    source: "sluice",
    priority: OPSGENIE_PRIORITY[e.severity],
    tags: ["sluice", e.type],
    // details may hold 8,000 characters in all; at most 10 facts of 500 stay well inside
    details: Object.fromEntries(facts(d).map(([k, v]) => [k, cut(v, 500)])),
  };
  return {
    url: url || OPSGENIE_URL,
    headers: { ...JSON_HEADERS, authorization: `GenieKey ${apiKey}` },
    body: JSON.stringify(body),
  };
}

export interface JiraTarget {
  url: string;
  email: string;
  api_token: string;
  project_key: string;
  issue_type: string;
}

export function jiraRequest(t: JiraTarget, d: Delivery): HttpRequestSpec {
  const e = d.event;
  // ADF refuses a text node with empty text: a paragraph of nothing has no content instead.
  const textNode = (text: string) => (text ? [{ type: "text", text }] : []);
  const paragraph = (text: string) => ({ type: "paragraph", content: textNode(text) });
  const description = {
    type: "doc",
    version: 1,
    content: [
      paragraph(e.title),
      {
        type: "bulletList",
        content: facts(d).map(([k, v]) => ({
          type: "listItem",
          content: [
            {
              type: "paragraph",
              content: [{ type: "text", text: `${k}: `, marks: [{ type: "strong" }] }, ...textNode(v)],
            },
          ],
        })),
      },
      {
        type: "paragraph",
        content: [
          { type: "text", text: "Open in sluice", marks: [{ type: "link", attrs: { href: e.link } }] },
        ],
      },
    ],
  };
  const body = {
    fields: {
      project: { key: t.project_key },
      issuetype: { name: t.issue_type },
      summary: cut(e.title.replace(/[\r\n]+/g, " "), 255),
      description,
      labels: ["sluice", e.type],
    },
  };
  const auth = Buffer.from(`${t.email}:${t.api_token}`).toString("base64");
  return {
    url: `${t.url.replace(/\/+$/, "")}/rest/api/3/issue`,
    headers: { ...JSON_HEADERS, accept: "application/json", authorization: `Basic ${auth}` },
    body: JSON.stringify(body),
  };
}

/** Subject and plain text body for email. */
export function emailMessage(d: Delivery): { subject: string; text: string } {
  const lines = facts(d).map(([k, v]) => `${k}: ${v}`);
  return {
    subject: cut(`[sluice] ${d.event.title}`, 200),
    text: `${d.event.title}\n\n${lines.join("\n")}\n\n${d.event.link}\n`,
  };
}

/**
 * From a channel's configuration to the function that sends one delivery to it: builds the type's
 * request (payloads.ts, email.ts), posts it, and returns the receiver's answer or throws an error
 * that names the status and the answer, never the URL (webhook URLs are secrets).
 */
import type { ChannelConfig } from "./channel-schema.ts";
import type { DispatchChannel } from "./dispatcher.ts";
import { sendEmail } from "./email.ts";
import {
  type Delivery,
  type HttpRequestSpec,
  jiraRequest,
  opsgenieRequest,
  pagerdutyRequest,
  slackRequest,
  teamsRequest,
  webhookRequest,
} from "./payloads.ts";

const ANSWER_CHARS = 500;

async function post(r: HttpRequestSpec, signal: AbortSignal): Promise<string> {
  let res: Response;
  try {
    res = await fetch(r.url, {
      method: "POST",
      headers: r.headers,
      body: r.body,
      signal,
      redirect: "manual",
    });
  } catch (e) {
    // fetch errors can quote the URL; say only what kind of failure it was.
    const name = (e as Error).name;
    throw new Error(
      name === "AbortError" ? "aborted" : `connection failed (${(e as { code?: string }).code ?? name})`,
    );
  }
  const answer = `${res.status} ${(await res.text()).slice(0, ANSWER_CHARS)}`.trim();
  if (res.status < 200 || res.status > 299) throw new Error(`receiver answered ${answer}`);
  return answer;
}

export function senderFor(
  c: ChannelConfig,
  now: () => number = Date.now,
): (d: Delivery, signal: AbortSignal) => Promise<string> {
  switch (c.type) {
    case "webhook":
      return (d, s) => post(webhookRequest(c.url, c.secret, d, Math.floor(now() / 1000)), s);
    case "slack":
      return (d, s) => post(slackRequest(c.webhook_url, d), s);
    case "teams":
      return (d, s) => post(teamsRequest(c.webhook_url, d), s);
    case "pagerduty":
      return (d, s) => post(pagerdutyRequest(c.routing_key, c.url, d), s);
    case "opsgenie":
      return (d, s) => post(opsgenieRequest(c.api_key, c.url, d), s);
    case "jira":
      return (d, s) => post(jiraRequest(c, d), s);
    case "email":
      return (d, s) => sendEmail(c, d, s);
  }
}

export function dispatchChannel(c: ChannelConfig, now?: () => number): DispatchChannel {
  return {
    name: c.name,
    type: c.type,
    enabled: c.enabled,
    events: c.events,
    min_severity: c.min_severity,
    cooldown_seconds: c.cooldown_seconds,
    send: senderFor(c, now),
  };
}

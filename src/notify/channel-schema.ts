/**
 * The shape of one notification channel, as written under `notifications.channels` in the config
 * file and as sent to `POST /api/v1/notifications`: common fields, then the fields of its type at
 * the same level. Which fields are secrets (masked in lists and logs, sealed in the database) is
 * said here too, so the API, the store and the log agree.
 */
import { z } from "zod";
import { SEVERITIES } from "../core/types.ts";
import { NOTIFY_EVENT_TYPES } from "./events.ts";

export const CHANNEL_TYPES = ["webhook", "email", "slack", "teams", "pagerduty", "opsgenie", "jira"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), { message: "must be an http:// or https:// URL" });
const text = z.string().min(1);

const common = {
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits, '.', '_' and '-' only"),
  enabled: z.boolean().default(true),
  events: z.array(z.enum(NOTIFY_EVENT_TYPES)).min(1).default(["finding", "block"]),
  min_severity: z.enum(SEVERITIES).default("high"),
  cooldown_seconds: z.number().int().min(0).max(86_400).default(300),
};

export const channelSchema = z.discriminatedUnion("type", [
  z.object({ ...common, type: z.literal("webhook"), url: httpUrl, secret: text }),
  z.object({
    ...common,
    type: z.literal("email"),
    smtp_host: text,
    smtp_port: z.number().int().min(1).max(65535).default(587),
    username: z.string().default(""),
    password: z.string().default(""),
    from_addr: z.string().email(),
    to_addrs: z.array(z.string().email()).min(1),
    use_tls: z.boolean().default(true),
  }),
  z.object({ ...common, type: z.literal("slack"), webhook_url: httpUrl }),
  z.object({ ...common, type: z.literal("teams"), webhook_url: httpUrl }),
  z.object({ ...common, type: z.literal("pagerduty"), routing_key: text, url: httpUrl.optional() }),
  z.object({ ...common, type: z.literal("opsgenie"), api_key: text, url: httpUrl.optional() }),
  z.object({
    ...common,
    type: z.literal("jira"),
    url: httpUrl,
    email: z.string().email(),
    api_token: text,
    project_key: z.string().regex(/^[A-Z][A-Z0-9_]+$/, "a Jira project key such as SEC"),
    issue_type: text.default("Task"),
  }),
]);

export type ChannelConfig = z.infer<typeof channelSchema>;

/** Fields whose values are secrets: masked in lists and logs, sealed at rest. */
export const SECRET_FIELDS: Record<ChannelType, readonly string[]> = {
  webhook: ["url", "secret"],
  email: ["password"],
  slack: ["webhook_url"],
  teams: ["webhook_url"],
  pagerduty: ["routing_key"],
  opsgenie: ["api_key"],
  jira: ["api_token"],
};

/** `https://hooks.slack.com/…` → `http****.com/…` style: enough to recognise, not to use. */
export function maskSecret(value: string): string {
  if (value.length <= 8) return "****";
  return `${value.slice(0, 4)}****${value.slice(-4)}`;
}

/** A copy of the channel with every secret field masked. */
export function maskedChannel(c: ChannelConfig): ChannelConfig {
  const out: Record<string, unknown> = { ...c };
  for (const f of SECRET_FIELDS[c.type]) {
    const v = out[f];
    if (typeof v === "string" && v) out[f] = maskSecret(v);
  }
  return out as ChannelConfig;
}

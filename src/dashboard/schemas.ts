/**
 * The dashboard API's answers, declared once: the store's records (`store/records.ts`) and what the
 * routes compose from them. The web UI's types derive from these (`web/types.ts`), and
 * `test/dashboard/schemas.test.ts` checks every JSON answer of a real sluice against them, so the
 * API, its documentation (docs/api.md) and the UI cannot drift apart unnoticed.
 */
import { type Static, type TSchema, Type as t } from "@sinclair/typebox";
import { count, maybeText, nullable, oneOf, record, text } from "../core/schema.ts";
import { ACTIONS, DETECTORS } from "../core/types.ts";
import {
  AllowlistRecord,
  AuditRecord,
  AuditStats,
  FindingRecord,
  McpEventRecord,
  QueueStats,
  RequestActions,
  RuleRecord,
  SessionRecord,
  WsConnectionRecord,
} from "../store/records.ts";

const counts = t.Record(t.String(), count);

/** A page of a list: `{<key>: items, total, limit, offset}`. */
export const page = <K extends string, S extends TSchema>(key: K, item: S) =>
  record({ [key]: t.Array(item), total: count, limit: count, offset: count } as {
    [P in K]: ReturnType<typeof t.Array<S>>;
  } & { total: typeof count; limit: typeof count; offset: typeof count });

export const FindingsPage = page("findings", FindingRecord);
export const SessionsPage = page("sessions", SessionRecord);
export const AuditPage = page("entries", AuditRecord);
export const WsConnectionsPage = page("connections", WsConnectionRecord);
export const McpEventsPage = page("events", McpEventRecord);
export const RulesPage = page("rules", RuleRecord);

/** The Overview's recent sessions, with their new findings per severity. */
export const ActiveSession = record({
  ...SessionRecord.properties,
  severity: record({ critical: count, high: count, warning: count, info: count }),
});
export const ActiveSessions = record({ sessions: t.Array(ActiveSession), total: count, limit: count });

export const AuthSession = record({
  authenticated: t.Boolean(),
  password_required: t.Boolean(),
  csrf_token: maybeText,
});

export const Status = record({
  status: t.Literal("ok"),
  version: text,
  uptime: t.Number({ minimum: 0 }),
  started_at: text,
  tier: t.Literal("community"),
  mode: oneOf(["active", "passthrough"]),
  proxy_port: count,
  bind: text,
  standalone: t.Boolean(),
  dashboard_port: count,
  requests: count,
  active_requests: count,
  findings: count,
  by_action: counts,
  build_id: text,
  password_required: t.Boolean(),
  live_clients: count,
  store: QueueStats,
  audit: AuditStats,
});

export const ScanHealth = record({
  /** Requests forwarded without being read, over the window, per reason and per tool. */
  unscanned: record({ total: count, by_reason: counts, by_client: counts }),
  scan_errors: count,
  store_dropped: count,
  audit_dropped: count,
});

export const Stats = record({
  total_findings: count,
  total_requests: count,
  audited_requests: count,
  today_count: count,
  last_finding_time: maybeText,
  by_client: counts,
  by_severity: counts,
  by_detector: counts,
  by_action: counts,
  by_provider: counts,
  by_model: counts,
  top_finding_types: t.Array(record({ finding_type: text, count })),
  daily_trend: t.Array(record({ date: text, count })),
  /** Requests blocked, redacted and alerted, today and over 7 days, per tool and per project. */
  request_actions: RequestActions,
  scan_health: ScanHealth,
});

export const SubDetector = record({
  name: oneOf(DETECTORS),
  enabled: t.Boolean(),
  /** The detector's action, or "default" when `pipeline.default_action` decides. */
  action: t.Union([oneOf(ACTIONS), t.Literal("default")]),
  finding_count: count,
});

export const Stage = record({
  name: text,
  label: text,
  description: text,
  group: oneOf(["request", "response"]),
  enabled: t.Boolean(),
  available: t.Boolean(),
  finding_count: count,
  sub_detectors: t.Optional(t.Array(SubDetector)),
  encoding_settings: t.Optional(
    record({
      base64: t.Boolean(),
      hex: t.Boolean(),
      url: t.Boolean(),
      unicode: t.Boolean(),
      max_depth: count,
      min_decoded_length: count,
      max_decoded_length: count,
    }),
  ),
});

export const Pipeline = record({ default_action: oneOf(ACTIONS), stages: t.Array(Stage) });

export const RuleStats = record({
  total: count,
  enabled: count,
  disabled: count,
  by_tier: counts,
  by_detector: counts,
  by_severity: counts,
  by_source: counts,
  tags: t.Array(record({ tag: text, count })),
});

/** An allowlist entry as a list shows it: from the config file (no id) or added through the API. */
export const AllowEntry = record({
  id: t.Optional(t.Integer()),
  pattern: text,
  source: oneOf(["config", "api"]),
});
export const Allowlists = record({
  secrets: t.Array(AllowEntry),
  pii: t.Array(AllowEntry),
  paths: t.Array(AllowEntry),
  api_entries: t.Array(AllowlistRecord),
});

export const Client = record({
  id: text,
  display_name: text,
  category: text,
  provider: text,
  ua_prefixes: t.Array(text),
  proxy_config: record({
    config_type: text,
    setup_instructions: text,
    env_var: maybeText,
    setup_cmd: maybeText,
  }),
  website: maybeText,
  seen: t.Boolean(),
  last_seen: maybeText,
  /** What `sluice connect <tool>` prints, for the tools it knows. */
  connect: nullable(record({ tool: text, lines: t.Array(text) })),
});
export const Clients = record({ clients: t.Array(Client) });

export type FindingsPage = Static<typeof FindingsPage>;
export type AuthSession = Static<typeof AuthSession>;
export type Status = Static<typeof Status>;
export type Stats = Static<typeof Stats>;
export type Pipeline = Static<typeof Pipeline>;
export type Stage = Static<typeof Stage>;
export type RuleStats = Static<typeof RuleStats>;
export type AllowEntry = Static<typeof AllowEntry>;
export type Allowlists = Static<typeof Allowlists>;
export type Client = Static<typeof Client>;

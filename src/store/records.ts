/**
 * The records the store keeps, as the dashboard API gives them: one schema per table row. The store
 * selects and exports exactly these fields (their order is the export's column order), the API
 * answers with them, and the web UI's types derive from them (`web/types.ts`), so a field added to a
 * record is written here and in its migration. `test/dashboard/schemas.test.ts` checks real answers
 * against them.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { RULE_FIELDS } from "../core/rule.ts";
import { count, maybeText, nullable, oneOf, record, text } from "../core/schema.ts";
import {
  ACTION_SOURCES,
  ACTIONS,
  DETECTORS,
  LOGINS,
  PROVIDER_LABELS,
  RULE_SOURCES,
  SEVERITIES,
  UNSCANNED_REASONS,
} from "../core/types.ts";
import { ALLOWLIST_TYPES } from "./allowlists.ts";

export const FindingRecord = record({
  id: t.Integer(),
  ts: text,
  last_seen: text,
  severity: oneOf(SEVERITIES),
  detector: oneOf(DETECTORS),
  finding_type: text,
  rule: text,
  action: oneOf(ACTIONS),
  /** Where the action came from; "" for rows stored before it was kept. */
  action_source: t.Union([oneOf(ACTION_SOURCES), t.Literal("")]),
  /** Every rule that matched the same place, the deciding `rule` first. */
  matched_rules: t.Array(text),
  provider: oneOf(PROVIDER_LABELS),
  client: text,
  path: text,
  start: count,
  end: count,
  preview: text,
  description: text,
  decoded: maybeText,
  request_id: text,
  transport: text,
  session_id: text,
  account_id: maybeText,
  device_id: maybeText,
  source_ip: maybeText,
  working_directory: maybeText,
  git_branch: maybeText,
  os_platform: maybeText,
  client_name: maybeText,
  model: maybeText,
  seen_count: count,
  content_hash: text,
  value_hash: maybeText,
});
export type FindingRecord = Static<typeof FindingRecord>;

/** One finding as its detail shows it: also the keyed hash of the API key that sent it. */
export const FindingDetail = record({ ...FindingRecord.properties, api_key_hash: maybeText });
export type FindingDetail = Static<typeof FindingDetail>;

export const SessionRecord = record({
  session_id: text,
  first_seen: text,
  last_seen: text,
  finding_count: count,
  request_count: count,
  provider: maybeText,
  model: maybeText,
  client: maybeText,
  account_id: maybeText,
  device_id: maybeText,
  working_directory: maybeText,
  git_branch: maybeText,
});
export type SessionRecord = Static<typeof SessionRecord>;

/** A proxied request: the keys of an audit line, and the row's id. */
export const AuditRecord = record({
  id: t.Integer(),
  ts: text,
  request_id: text,
  provider: oneOf(PROVIDER_LABELS),
  client: text,
  model: maybeText,
  method: text,
  path: text,
  action: oneOf(ACTIONS),
  finding_count: count,
  /** The rules that decided the action (comma-separated), null when none did. */
  rules: maybeText,
  /** Where the decided action came from (comma-separated), null when none did. */
  action_source: maybeText,
  bytes: count,
  duration_ms: t.Number({ minimum: 0 }),
  upstream_status: nullable(t.Integer()),
  session_id: text,
  account_id: maybeText,
  mode: oneOf(["active", "passthrough"]),
  error: maybeText,
  login: nullable(oneOf(LOGINS)),
  unscanned: nullable(oneOf(UNSCANNED_REASONS)),
});
export type AuditRecord = Static<typeof AuditRecord>;

export const WsConnectionRecord = record({
  connection_id: text,
  opened_at: text,
  closed_at: maybeText,
  state: oneOf(["open", "closed"]),
  target_url: text,
  origin: maybeText,
  provider: text,
  session_id: text,
  duration_ms: t.Number({ minimum: 0 }),
  frames_in: count,
  frames_out: count,
  findings: count,
  close_code: nullable(t.Integer()),
});
export type WsConnectionRecord = Static<typeof WsConnectionRecord>;

export const McpEventRecord = record({
  id: t.Integer(),
  ts: text,
  kind: text,
  server: text,
  message: text,
  severity: text,
  /** The event's own fields (never a raw matched value). */
  data: t.Unknown(),
});
export type McpEventRecord = Static<typeof McpEventRecord>;

/** A rule in force: its declared fields (core/rule.ts), where it came from, its hit count and times. */
export const RuleRecord = record({
  ...RULE_FIELDS,
  examples: t.Optional(RULE_FIELDS.examples),
  negative_examples: t.Optional(RULE_FIELDS.negative_examples),
  source: oneOf(RULE_SOURCES),
  action_by_user: t.Boolean(),
  hit_count: count,
  created_at: text,
  updated_at: text,
});
export type RuleRecord = Static<typeof RuleRecord>;

export const AllowlistRecord = record({
  id: t.Integer(),
  list_type: oneOf(ALLOWLIST_TYPES),
  pattern: text,
  source: text,
  created_at: text,
});
export type AllowlistRecord = Static<typeof AllowlistRecord>;

/** A record's fields, in their declared order. */
export const fieldsOf = (schema: { properties: Record<string, unknown> }): string[] =>
  Object.keys(schema.properties);

/** What the audit trail has written and lost, for `/metrics`, `/api/v1/status` and the Overview. */
export const AuditStats = record({
  /** Lines appended to the file. */
  written: count,
  /** Lines waiting because the last append failed (retried before the next batch). */
  pending: count,
  /** Lines lost: pushed out of a full pending buffer, or still pending at shutdown. */
  dropped: count,
  /** Appends that failed (a full disk, a read-only or vanished directory, an I/O error). */
  errors: count,
  last_error: maybeText,
  /** When the current run of failures began (ISO 8601); null while appends succeed. */
  failing_since: maybeText,
});
export type AuditStats = Static<typeof AuditStats>;

/** The store's write queue. */
export const QueueStats = record({
  queued: count,
  dropped: count,
  written: count,
  errors: count,
  /** Batches deferred because the database was busy/locked. */
  busy_retries: count,
  last_error: maybeText,
});
export type QueueStats = Static<typeof QueueStats>;

/** Requests per acted action (block, redact, alert). */
const actionCounts = { block: count, redact: count, alert: count };
export const ActionCounts = record(actionCounts);
export type ActionCounts = Static<typeof ActionCounts>;
export const ActionWindow = record({
  /** Start of the window (a UTC day's start), ISO time. */
  since: text,
  ...actionCounts,
  /** Per tool (the audit's `client`), most requests first. */
  by_client: t.Array(record({ client: text, ...actionCounts })),
  /** Per project (the session's working directory; null when the tool named none), most first. */
  by_project: t.Array(record({ project: maybeText, ...actionCounts })),
});
export type ActionWindow = Static<typeof ActionWindow>;

/** `/api/v1/stats` `request_actions`: today (UTC) and the last 7 days including today. */
export const RequestActions = record({ today: ActionWindow, week: ActionWindow });
export type RequestActions = Static<typeof RequestActions>;

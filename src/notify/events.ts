/**
 * What a channel is told: bus events turned into one shape, `NotifyEvent`, that every payload
 * builder reads. It says what was found, where (client, session, working directory, JSON path) and
 * what was done, and links to the dashboard. It holds the masked preview at most, never a raw value.
 */
import type { BusEvents } from "../core/bus.ts";
import { SEVERITIES, type Severity } from "../core/types.ts";

export const NOTIFY_EVENT_TYPES = ["finding", "block", "scan_error", "mode_changed", "mcp"] as const;
export type NotifyEventType = (typeof NOTIFY_EVENT_TYPES)[number];

export interface NotifyEvent {
  type: NotifyEventType;
  severity: Severity;
  /** One line, e.g. "aws_access_key found in claude-code request (blocked)". */
  title: string;
  /** What was done: the action, or the new mode. */
  action: string;
  where: { client: string; session_id: string; working_directory: string | null; path: string | null };
  rule: string | null;
  preview: string | null;
  /** Event type, rule and session: what cooldown and paging dedup group by. */
  dedup_key: string;
  /** Absolute link into the dashboard. */
  link: string;
  ts: string;
}

/** Higher number = more severe; `critical` is the most. */
export function severityRank(s: Severity): number {
  return SEVERITIES.length - SEVERITIES.indexOf(s);
}

export function fromFinding(e: BusEvents["finding"], dashboardUrl: string, ts: string): NotifyEvent {
  const f = e.finding;
  const blocked = f.action === "block";
  const client = e.session.client_name || e.session.client || "unknown client";
  return {
    type: blocked ? "block" : "finding",
    severity: f.severity,
    title: `${f.rule} found in a ${client} request${blocked ? " (blocked)" : ` (${f.action})`}`,
    action: f.action,
    where: {
      client,
      session_id: e.session.session_id,
      working_directory: e.session.working_directory,
      path: f.path,
    },
    rule: f.rule,
    preview: f.preview,
    dedup_key: `${blocked ? "block" : "finding"}:${f.rule}:${e.session.session_id}`,
    link: `${dashboardUrl}/findings?request=${encodeURIComponent(e.request_id)}`,
    ts,
  };
}

export function fromModeChange(e: BusEvents["mode-changed"], dashboardUrl: string, ts: string): NotifyEvent {
  return {
    type: "mode_changed",
    severity: e.mode === "passthrough" ? "high" : "info",
    title: `sluice mode changed from ${e.previous} to ${e.mode}`,
    action: e.mode,
    where: { client: "sluice", session_id: "", working_directory: null, path: null },
    rule: null,
    preview: null,
    dedup_key: `mode_changed:${e.mode}`,
    link: `${dashboardUrl}/`,
    ts,
  };
}

/** A request sluice could not read is a scan error; null for every other request. */
export function fromRequest(e: BusEvents["request"], dashboardUrl: string): NotifyEvent | null {
  if (!e.unscanned && !e.error) return null;
  return {
    type: "scan_error",
    severity: "high",
    title: `sluice could not scan a ${e.client} request (${e.unscanned ?? e.error})`,
    action: e.action,
    where: { client: e.client, session_id: e.session_id, working_directory: null, path: e.path },
    rule: null,
    preview: null,
    dedup_key: `scan_error:${e.unscanned ?? "error"}:${e.session_id}`,
    link: `${dashboardUrl}/requests?id=${encodeURIComponent(e.request_id)}`,
    ts: e.ts,
  };
}

export function fromMcp(e: BusEvents["mcp-event"], dashboardUrl: string, ts: string): NotifyEvent {
  const severity = (SEVERITIES as readonly string[]).includes(e.severity)
    ? (e.severity as Severity)
    : "warning";
  return {
    type: "mcp",
    severity,
    title: `MCP ${e.kind} on ${e.server}: ${e.message}`,
    action: e.kind,
    where: { client: `mcp:${e.server}`, session_id: "", working_directory: null, path: null },
    rule: null,
    preview: null,
    dedup_key: `mcp:${e.kind}:${e.server}`,
    link: `${dashboardUrl}/mcp`,
    ts,
  };
}

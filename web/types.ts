/**
 * The dashboard API's answers as the UI reads them: every shape derives from the API's own schemas
 * (src/dashboard/schemas.ts, src/store/records.ts); the vocabulary comes from sluice's own.
 */
import type { Static } from "@sinclair/typebox";
import * as core from "../src/core/types.ts";
import type * as api from "../src/dashboard/schemas.ts";
import type * as records from "../src/store/records.ts";

export type {
  AllowEntry,
  Allowlists,
  AuthSession,
  Client,
  Pipeline,
  RuleStats,
  Stage,
  Stats,
  Status,
} from "../src/dashboard/schemas.ts";
export type { ActionCounts, ActionWindow, RequestActions } from "../src/store/records.ts";

export type Finding = records.FindingRecord;
export type FindingDetail = records.FindingDetail;
export type Rule = records.RuleRecord;
export type AuditEntry = records.AuditRecord;
export type AuditStatus = records.AuditStats;
export type WsConnection = records.WsConnectionRecord;
export type McpEvent = records.McpEventRecord;
/** A session; the Overview's recent sessions also carry their new findings per severity. */
export type Session = records.SessionRecord & Partial<Pick<Static<typeof api.ActiveSession>, "severity">>;
export type SubDetector = Static<typeof api.SubDetector>;
/** The paging fields of a list. */
export type List = Omit<Static<typeof api.FindingsPage>, "findings">;

export type Severity = core.Severity;
export const SEVERITIES: Severity[] = [...core.SEVERITIES];
export const DETECTORS: string[] = [...core.DETECTORS];
/** Actions a finding or policy can take ("pass" is no action). */
export const ACTIONS: string[] = core.ACTIONS.filter((a) => a !== "pass");
/** Rule/detector actions as [value, label]: "" means the next level decides. */
export const RULE_ACTIONS: Array<[string, string]> = core.RULE_ACTIONS.map((a) => [a, a || "default"]);
export const PROVIDERS: string[] = [...core.PROVIDER_LABELS];
/** A rule's declared defaults and limits (src/core/rule.ts declares its fields with them). */
export const { RULE_DEFAULTS, RULE_NAME_RULE, RULE_PATTERN_MAX, RULE_DESCRIPTION_MAX } = core;
export type ActionSource = core.ActionSource;
/** Where an action came from, as shown: `detectors.pii.action`, `the rule's default`. */
export const actionSourceLabel = (source: ActionSource | "", detector: string): string =>
  core.actionSourceLabel(source, detector as core.DetectorName);

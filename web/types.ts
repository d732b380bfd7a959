/** Response shapes of the dashboard API (docs/api.md); the vocabulary comes from sluice's own. */
import * as core from "../src/core/types.ts";
import type { ActionCounts, ActionWindow, RequestActions } from "../src/store/audit.ts";

export type { ActionCounts, ActionWindow, RequestActions };

export type Severity = core.Severity;
export const SEVERITIES: Severity[] = [...core.SEVERITIES];
export const DETECTORS: string[] = [...core.DETECTORS];
/** Actions a finding or policy can take ("pass" is no action). */
export const ACTIONS: string[] = core.ACTIONS.filter((a) => a !== "pass");
/** Rule/detector actions as [value, label]: "" means the next level decides. */
export const RULE_ACTIONS: Array<[string, string]> = core.RULE_ACTIONS.map((a) => [a, a || "default"]);
export const PROVIDERS: string[] = [...core.PROVIDER_LABELS];
export type ActionSource = core.ActionSource;
/** Where an action came from, as shown: `detectors.pii.action`, `the rule's default`. */
export const actionSourceLabel = (source: ActionSource | "", detector: string): string =>
  core.actionSourceLabel(source, detector as core.DetectorName);

export interface List {
  total: number;
  limit: number;
  offset: number;
}

export interface AuthSession {
  authenticated: boolean;
  password_required: boolean;
  csrf_token: string | null;
}

export interface Status {
  status: string;
  version: string;
  uptime: number;
  tier: string;
  mode: "active" | "passthrough";
  proxy_port: number;
  bind: string;
  standalone: boolean;
  dashboard_port: number;
  requests: number;
  active_requests: number;
  findings: number;
  by_action: Record<string, number>;
  build_id: string;
  started_at: string;
  password_required: boolean;
  audit?: AuditStatus;
}

/** The JSONL audit trail's counts (`/status` `audit`). */
export interface AuditStatus {
  written: number;
  pending: number;
  dropped: number;
  errors: number;
  last_error: string | null;
  failing_since: string | null;
}

export interface Finding {
  id: number;
  ts: string;
  last_seen: string | null;
  severity: Severity;
  detector: string;
  finding_type: string;
  rule: string;
  action: string;
  /** Where the action came from: rule, detector, rule_default, default, system ("" for rows stored before it was kept). */
  action_source: ActionSource | "";
  /** Every rule that matched the same place, the deciding `rule` first. */
  matched_rules: string[];
  provider: string;
  client: string;
  path: string;
  start: number;
  end: number;
  preview: string;
  description: string;
  decoded: string | null;
  request_id: string | null;
  transport: string;
  session_id: string;
  account_id: string | null;
  device_id: string | null;
  source_ip: string | null;
  working_directory: string | null;
  git_branch: string | null;
  os_platform: string | null;
  client_name: string | null;
  model: string | null;
  seen_count: number;
  content_hash: string;
  value_hash: string | null;
  api_key_hash?: string | null;
}

export interface Session {
  session_id: string;
  first_seen: string;
  last_seen: string;
  finding_count: number;
  request_count: number;
  provider: string;
  model: string | null;
  client: string | null;
  account_id: string | null;
  device_id: string | null;
  working_directory: string | null;
  git_branch: string | null;
  severity?: Record<string, number>;
}

export interface Stats {
  total_findings: number;
  total_requests: number;
  today_count: number;
  last_finding_time: string | null;
  by_client: Record<string, number>;
  by_severity: Record<string, number>;
  by_detector: Record<string, number>;
  by_action: Record<string, number>;
  by_provider: Record<string, number>;
  by_model: Record<string, number>;
  top_finding_types: Array<{ finding_type: string; count: number }>;
  daily_trend: Array<{ date: string; count: number }>;
  /** Requests blocked, redacted and alerted, today and over 7 days, per tool and per project. */
  request_actions: RequestActions;
  scan_health: {
    unscanned: { total: number; by_reason: Record<string, number>; by_client: Record<string, number> };
    scan_errors: number;
    store_dropped: number;
    audit_dropped: number;
  };
}

export interface SubDetector {
  name: string;
  enabled: boolean;
  action: string;
  finding_count: number;
}

export interface Stage {
  name: string;
  label: string;
  description: string;
  group: "request" | "response";
  enabled: boolean;
  available: boolean;
  finding_count: number;
  sub_detectors?: SubDetector[];
  encoding_settings?: {
    base64: boolean;
    hex: boolean;
    url: boolean;
    unicode: boolean;
    max_depth: number;
    min_decoded_length: number;
    max_decoded_length: number;
  };
}

export interface Pipeline {
  default_action: string;
  stages: Stage[];
}

export interface Rule {
  name: string;
  pattern: string;
  detector: string;
  severity: Severity;
  action: string;
  enabled: boolean;
  tier: string;
  source: string;
  description: string;
  tags: string[];
  validator?: string | null;
  keywords?: string[] | null;
  hit_count?: number;
}

export interface RuleStats {
  total: number;
  enabled: number;
  disabled: number;
  by_tier: Record<string, number>;
  by_detector: Record<string, number>;
  by_severity: Record<string, number>;
  by_source: Record<string, number>;
  tags: Array<{ tag: string; count: number }>;
}

export interface AllowEntry {
  id?: number;
  pattern: string;
  source: "config" | "api";
  list_type?: string;
  created_at?: string;
}

export interface Allowlists {
  secrets: AllowEntry[];
  pii: AllowEntry[];
  paths: AllowEntry[];
  api_entries: AllowEntry[];
}

export interface AuditEntry {
  id: number;
  ts: string;
  request_id: string;
  provider: string;
  client: string;
  model: string | null;
  method: string;
  path: string;
  action: string;
  finding_count: number;
  /** The rules that decided the action (comma-separated), null when none did. */
  rules: string | null;
  bytes: number;
  duration_ms: number;
  upstream_status: number | null;
  session_id: string;
  account_id: string | null;
  mode: string;
  error: string | null;
}

export interface Client {
  id: string;
  display_name: string;
  category: string;
  provider: string;
  ua_prefixes: string[];
  proxy_config: {
    config_type: string;
    setup_instructions: string;
    env_var: string | null;
    setup_cmd: string | null;
  };
  website: string | null;
  seen: boolean;
  last_seen: string | null;
  /** What `sluice connect <tool>` prints, for the tools it knows. */
  connect: { tool: string; lines: string[] } | null;
}

export interface WsConnection {
  connection_id: string;
  opened_at: string;
  closed_at: string | null;
  state: string;
  target_url: string;
  origin: string | null;
  provider: string;
  session_id: string;
  duration_ms: number;
  frames_in: number;
  frames_out: number;
  findings: number;
  close_code: number | null;
}

export interface McpEvent {
  id: number;
  ts: string;
  kind: string;
  server: string;
  message: string;
  severity: string;
  data: unknown;
}

/**
 * The extension interface: a plugin is a TypeScript or JavaScript file named in the config
 * (`extensions: [./siem.ts]`) whose default export is an object with some of these methods. Each is
 * optional; sluice calls those present. Write `export default { … } satisfies SluicePlugin` (import
 * the type from this file) to have them checked.
 *
 * Nothing a plugin receives holds a raw matched value: findings carry masked previews and keyed
 * hashes, as everywhere else in sluice. A hook that throws, or does not answer within
 * `extension_timeout_ms`, is logged and counted (`sluice_extension_errors_total`), and the request
 * goes on as if the hook were absent. docs/extensions.md shows a whole plugin.
 */
import type { Action, Finding, ProviderLabel, SessionContext } from "../core/types.ts";

/** What a hook learns about the payload being scanned. */
export interface PayloadInfo {
  /** `req-<n>` for HTTP, the connection id for a WebSocket frame. */
  request_id: string;
  provider: ProviderLabel;
  /** "http", "websocket" or "mcp". */
  transport: string;
  method: string;
  /** Path with the query's values masked. */
  path: string;
  /** Size of the body in bytes. */
  size: number;
}

export interface ScanOutcome {
  action: Action;
  findings: Finding[];
}

/** A client a plugin adds to the catalog (`/api/v1/clients`, the Connect page). */
export interface PluginClient {
  id: string;
  display_name: string;
  /** The line a user runs or pastes to route the client through sluice. */
  setup: string;
  website?: string;
  /** User-Agent prefixes of the client, so its traffic shows as seen. */
  ua_prefixes?: string[];
}

export interface RequestTraceInfo {
  request_id: string;
  provider: ProviderLabel;
  client: string;
  method: string;
  path: string;
  action: Action;
  finding_count: number;
  duration_ms: number;
  upstream_status: number | null;
  session_id: string;
}

export interface WsOpenInfo {
  connection_id: string;
  provider: ProviderLabel;
  /** The target without credentials or query. */
  target: string;
  session_id: string;
}

export interface WsCloseInfo extends WsOpenInfo {
  close_code: number | null;
  frames_in: number;
  frames_out: number;
  findings: number;
  duration_ms: number;
}

export interface SluicePlugin {
  /** How logs and metrics name the plugin (default: its file name). */
  name?: string;
  /** Before a payload is scanned. Return `{ block: "reason" }` to refuse it without scanning. */
  pre_request?(
    payload: PayloadInfo,
    session: SessionContext,
  ): { block: string } | undefined | Promise<{ block: string } | undefined>;
  /** After policy decided, with what was found (the `evaluate` hooks have run). */
  post_scan?(
    payload: PayloadInfo,
    outcome: ScanOutcome,
    extra: { session: SessionContext },
  ): void | Promise<void>;
  /**
   * Change the action policy chose: return `"block"`, `"alert"`, `"log"` or `"pass"` (or nothing to
   * keep it). `"redact"` is kept only where policy redacted already (only then is there a redacted body).
   */
  evaluate?(
    payload: PayloadInfo,
    outcome: ScanOutcome,
    session: SessionContext,
  ): Action | undefined | Promise<Action | undefined>;
  /** A payload was redacted: which findings were replaced (paths and types; never the values). */
  redact?(payload: PayloadInfo, redacted: Finding[]): void | Promise<void>;
  /** A configuration was loaded after a reload, with the keys that changed. */
  config_reload?(changes: string[]): void | Promise<void>;
  /** Extra fields for `/health`, under `extensions.<name>` (called on every `/health`; keep it fast). */
  health?(): Record<string, unknown>;
  /** Gauges for `/metrics`, as `sluice_extension_<name>_<key> <value>` (keep it fast). */
  metrics?(): Record<string, number>;
  /** A proxied request is over: one record per request, for a tracer or a SIEM. */
  request_trace?(trace: RequestTraceInfo): void | Promise<void>;
  /** How many findings each rule produced in one payload (rule name to count). */
  rule_metrics?(hits: Record<string, number>, payload: PayloadInfo): void | Promise<void>;
  /**
   * Made once per load with the enabled rules' names and patterns: may return a prefilter that says
   * whether a text could match any of them. A text it answers `false` for is not scanned. Used as
   * given: a prefilter that misses a match lets that match through; one that throws is ignored.
   */
  accelerator?(rules: { name: string; pattern: string }[]): ((text: string) => boolean) | undefined;
  /** Clients to add to the catalog. */
  clients?(): PluginClient[];
  /** A WebSocket tunnel opened. */
  open?(ws: WsOpenInfo): void | Promise<void>;
  /** A finding in a WebSocket frame. */
  finding_detected?(
    ws: { connection_id: string; frame: number | null },
    finding: Finding,
  ): void | Promise<void>;
  /** A WebSocket tunnel closed. */
  close?(ws: WsCloseInfo): void | Promise<void>;
}

/** The hooks a plugin may define (what sluice counts and logs by). */
export const HOOK_NAMES = [
  "pre_request",
  "post_scan",
  "evaluate",
  "redact",
  "config_reload",
  "health",
  "metrics",
  "request_trace",
  "rule_metrics",
  "accelerator",
  "clients",
  "open",
  "finding_detected",
  "close",
] as const satisfies readonly (keyof SluicePlugin)[];
export type HookName = (typeof HOOK_NAMES)[number];

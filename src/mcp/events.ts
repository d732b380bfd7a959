/**
 * Where the MCP proxy reports: the event bus (the store writes findings and `mcp-event` rows from it,
 * the dashboard streams them) and the application log (stderr, text or JSON). Never a raw value.
 */
import { createHash } from "node:crypto";
import type { Bus } from "../core/bus.ts";
import type { Level, Logger } from "../core/log.ts";
import type { Action, Finding, SessionContext, Severity } from "../core/types.ts";

export type McpEventKind =
  | "session-start"
  | "session-end"
  | "tool-poisoning"
  | "tool-drift"
  | "unknown-tool"
  | "unsolicited-response"
  | "blocked-call"
  | "blocked-result"
  | "redacted"
  | "findings"
  | "scan-error"
  | "scan-skipped"
  | "unwritable"
  | "env-filtered"
  | "binding-overflow"
  | "tracker-evicted";

export interface McpEvent {
  kind: McpEventKind;
  severity: Severity;
  message: string;
  [field: string]: unknown;
}

const LEVEL: Record<Severity, Level> = {
  critical: "warning",
  high: "warning",
  warning: "warning",
  info: "info",
};

export class Reporter {
  constructor(
    readonly bus: Bus,
    readonly log: Logger,
    readonly server: string,
    public session: SessionContext,
  ) {}

  event(raw: McpEvent): void {
    const e = defang(raw) as McpEvent;
    const { kind, severity, message, ...fields } = e;
    this.bus.emit("mcp-event", { ...e, server: this.server, session_id: this.session.session_id });
    this.log.log(LEVEL[severity], message, { kind, server: this.server, ...fields });
  }

  finding(f: Finding, requestId: string): void {
    this.bus.emit("finding", {
      finding: f,
      session: this.session,
      provider: "unknown",
      request_id: requestId,
      transport: "mcp",
    });
  }
}

/**
 * Server-controlled text (tool names, excerpts) must not drive the user's terminal or forge log lines:
 * control characters, bidi controls and invisible tag characters are shown as `\u{…}` escapes.
 */
export function defangText(s: string): string {
  return s.replace(
    /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]|[\u{E0000}-\u{E007F}]/gu,
    (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`,
  );
}

function defang(v: unknown, depth = 0): unknown {
  if (typeof v === "string") return defangText(v);
  if (depth > 8 || v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map((x) => defang(x, depth + 1));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, defang(x, depth + 1)]));
}

/**
 * A finding that sluice's MCP layer raises itself about a server (poisoning, drift, unknown tool,
 * unsolicited response): detector `injection`, since each is a way for a server to steer the model.
 */
export function mcpFinding(opts: {
  rule: string;
  finding_type: string;
  severity: Severity;
  action: Action;
  path: string;
  preview: string;
  description: string;
}): Finding {
  return {
    rule: opts.rule,
    detector: "injection",
    finding_type: opts.finding_type,
    severity: opts.severity,
    action: opts.action,
    action_source: "system",
    matched_rules: [opts.rule],
    path: defangText(opts.path),
    start: 0,
    end: 0,
    preview: defangText(opts.preview),
    content_hash: createHash("sha256")
      .update(`${opts.rule}\u0000${opts.path}\u0000${opts.preview}`)
      .digest("hex"),
    value_hash: null,
    decoded: null,
    description: defangText(opts.description),
  };
}

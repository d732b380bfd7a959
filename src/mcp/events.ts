/**
 * Where the MCP proxy reports: the event bus (the store writes findings and `mcp-event` rows from it,
 * the dashboard streams them) and the application log (stderr, text or JSON). Never a raw value.
 */
import { createHash } from "node:crypto";
import type { Bus } from "../core/bus.ts";
import type { Level, Logger } from "../core/log.ts";
import type { Action, DetectorName, Finding, SessionContext, Severity } from "../core/types.ts";

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

  event(e: McpEvent): void {
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

/** A finding that sluice's MCP layer raises itself (poisoning, drift, unsolicited response, scan_error). */
export function mcpFinding(opts: {
  rule: string;
  finding_type: string;
  severity: Severity;
  action: Action;
  path: string;
  preview: string;
  description: string;
  detector?: DetectorName;
}): Finding {
  return {
    rule: opts.rule,
    detector: opts.detector ?? "injection",
    finding_type: opts.finding_type,
    severity: opts.severity,
    action: opts.action,
    path: opts.path,
    start: 0,
    end: 0,
    preview: opts.preview,
    content_hash: createHash("sha256")
      .update(`${opts.rule}\u0000${opts.path}\u0000${opts.preview}`)
      .digest("hex"),
    value_hash: null,
    decoded: null,
    description: opts.description,
  };
}

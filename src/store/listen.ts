/**
 * What the store writes for each event of the bus. A listener runs on the request path, so it only
 * notes what it needs (the time, the masked path, a rule hit) and queues the write (writer.ts).
 */
import type { Bus, FindingEvent, RequestEvent } from "../core/bus.ts";
import { type AuditLog, auditLine, maskPath } from "./audit-log.ts";
import type { Repositories } from "./index.ts";
import type { SessionTouch } from "./sessions.ts";
import type { Writer } from "./writer.ts";

export interface Sinks {
  repos: Repositories;
  writer: Writer;
  /** The JSONL audit file (its pending lines are appended before each batch). */
  audit: Pick<AuditLog, "add">;
  /** Rule hit counts, summed until they are written. */
  hits: Map<string, number>;
  /** This process: rows other processes wrote are told apart by it. */
  pid: number;
}

/** Subscribe the store to the bus; returns the unsubscribers. */
export function listen(bus: Bus, sinks: Sinks): (() => void)[] {
  const { repos, writer, audit, hits, pid } = sinks;
  return [
    bus.on("finding", (ev) => {
      if (ev.finding.rule) hits.set(ev.finding.rule, (hits.get(ev.finding.rule) ?? 0) + 1);
      const ts = Date.now();
      writer.enqueue(() => {
        const seen = repos.findings.record(ev, ts, pid);
        // A system finding (mode_changed, scan_error) belongs to no client's session.
        if (ev.session.session_id && ev.transport !== "system")
          repos.sessions.touch(findingTouch(ev, ts, seen === 1));
      });
    }),
    bus.on("request", (ev) => {
      // Masked once for both the audit file and the audit table.
      const path = maskPath(String(ev.path ?? ""));
      try {
        audit.add(auditLine(ev, path));
      } catch {
        writer.failed("audit log: a request could not be written as a line");
      }
      writer.enqueue(() => {
        // The session first: the audit row's trigger counts the request under its session's project.
        if (ev.session_id) repos.sessions.touch(requestTouch(ev));
        repos.audit.record(ev, path);
      });
    }),
    bus.on("ws-connection", (ev) => {
      const ts = Date.now();
      writer.enqueue(() => repos.ws.record(ev, ts));
    }),
    bus.on("mcp-event", (ev) => {
      const ts = Date.now();
      writer.enqueue(() => repos.mcp.recordEvent(ev, ts, pid));
    }),
  ];
}

/** A finding's session; only a new finding (first seen in the session) counts. */
function findingTouch(ev: FindingEvent, ts: number, isNew: boolean): SessionTouch {
  const s = ev.session;
  return {
    session_id: s.session_id,
    seen: new Date(ts).toISOString(),
    ms: ts,
    findings: isNew ? 1 : 0,
    severity: isNew ? ev.finding.severity : null,
    requests: 0,
    provider: ev.provider === "unknown" ? null : ev.provider,
    model: s.model,
    client: s.client || null,
    account_id: s.account_id,
    device_id: s.device_id,
    working_directory: s.working_directory,
    git_branch: s.git_branch,
  };
}

function requestTouch(ev: RequestEvent): SessionTouch {
  const ms = Date.parse(ev.ts) || Date.now();
  return {
    session_id: ev.session_id,
    seen: new Date(ms).toISOString(),
    ms,
    findings: 0,
    severity: null,
    requests: 1,
    provider: ev.provider === "unknown" ? null : ev.provider,
    model: ev.model,
    client: ev.client || null,
    account_id: ev.account_id,
    device_id: null,
    working_directory: ev.working_directory ?? null,
    git_branch: ev.git_branch ?? null,
  };
}

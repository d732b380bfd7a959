/**
 * Reads over what happened: findings (+ export), sessions, stats, audit (+ export), WebSocket
 * connections and MCP events. Every list answers `{<items>, total, limit, offset}`.
 */
import type { Elysia } from "elysia";
import { ACTIONS, DETECTORS, PROVIDER_LABELS, SEVERITIES } from "../../core/types.ts";
import { AUDIT_FIELDS, type AuditFilter } from "../../store/audit.ts";
import { FINDING_FIELDS, type FindingFilter } from "../../store/findings.ts";
import type { Ctx } from "../context.ts";
import {
  enumParam,
  exportResponse,
  intParam,
  notFound,
  optionalInt,
  pageParams,
  type Query,
  strParam,
} from "../http.ts";

export function findingFilter(q: Query): FindingFilter {
  return {
    severity: enumParam(q, "severity", SEVERITIES),
    detector: enumParam(q, "detector", DETECTORS),
    action: enumParam(q, "action", ACTIONS),
    provider: enumParam(q, "provider", PROVIDER_LABELS),
    finding_type: strParam(q, "finding_type", 200),
    client: strParam(q, "client", 200),
    session_id: strParam(q, "session_id", 200),
    account_id: strParam(q, "account_id", 200),
    rule: strParam(q, "rule", 200),
    q: strParam(q, "q", 200),
    days: optionalInt(q, "days", 1, 365),
  };
}

function auditFilter(q: Query): AuditFilter {
  return {
    action: enumParam(q, "action", ACTIONS),
    provider: enumParam(q, "provider", PROVIDER_LABELS),
    client: strParam(q, "client", 200),
    session_id: strParam(q, "session_id", 200),
    search: strParam(q, "search", 200) ?? strParam(q, "q", 200),
    days: optionalInt(q, "days", 1, 365),
  };
}

/**
 * Whether sluice saw everything it should have: requests it forwarded without reading them (over
 * `days`, per reason and tool), payloads whose scan failed (all time, as the other totals), and
 * records the store or the audit trail lost since start.
 */
function scanHealth(store: Ctx["store"], days: number) {
  const unscanned = {
    total: 0,
    by_reason: {} as Record<string, number>,
    by_client: {} as Record<string, number>,
  };
  for (const r of store.clients.unscanned(days)) {
    unscanned.total += r.count;
    unscanned.by_reason[r.reason] = (unscanned.by_reason[r.reason] ?? 0) + r.count;
    unscanned.by_client[r.client] = (unscanned.by_client[r.client] ?? 0) + r.count;
  }
  return {
    unscanned,
    scan_errors: store.findings.countOfType("scan_error"),
    store_dropped: store.queueStats().dropped,
    audit_dropped: store.auditStats().dropped,
  };
}

const format = (q: Query) => enumParam(q, "format", ["csv", "json"] as const) ?? "json";

export function recordRoutes(app: Elysia, { store, rt }: Ctx): void {
  app.get("/api/v1/findings", ({ query }) => {
    const f = findingFilter(query);
    const { limit, offset } = pageParams(query, 500);
    return { ...store.findings.list(f, limit, offset), limit, offset };
  });
  app.get("/api/v1/findings/export", ({ query }) => {
    const fmt = format(query);
    return exportResponse(store.findings.iterate(findingFilter(query)), fmt, "findings", FINDING_FIELDS);
  });
  app.get("/api/v1/findings/:id", ({ params }) => {
    const id = /^\d+$/.test(params.id) ? Number(params.id) : Number.NaN;
    const row = Number.isSafeInteger(id) ? store.findings.get(id) : null;
    if (!row) throw notFound(`finding ${JSON.stringify(params.id)}`);
    return row;
  });

  app.get("/api/v1/sessions", ({ query }) => {
    const { limit, offset } = pageParams(query, 100);
    return { ...store.sessions.list(limit, offset), limit, offset };
  });
  app.get("/api/v1/sessions/dashboard", ({ query }) => {
    const limit = intParam(query, "limit", 5, 1, 10);
    return { ...store.sessions.active(Date.now() - 86_400_000, limit), limit };
  });
  app.get("/api/v1/sessions/:id", ({ params }) => {
    const s = store.sessions.get(params.id);
    if (!s) throw notFound(`session ${JSON.stringify(params.id)}`);
    return s;
  });

  app.get("/api/v1/stats", ({ query }) => {
    const days = intParam(query, "days", 30, 1, 365);
    return {
      ...store.findings.stats(days),
      total_requests: rt.stats().requests,
      audited_requests: store.audit.count(),
      request_actions: store.audit.requestActions(),
      scan_health: scanHealth(store, days),
    };
  });
  app.get("/api/v1/stats/advanced", ({ query }) => {
    const days = intParam(query, "days", 30, 1, 365);
    const all = store.rules.stats();
    return {
      ...store.findings.advanced(days),
      detection_coverage: { active_rules: all.enabled, total_rules: all.total, pro_imported: 0 },
    };
  });

  app.get("/api/v1/audit", ({ query }) => {
    const f = auditFilter(query);
    const { limit, offset } = pageParams(query, 500);
    return { ...store.audit.list(f, limit, offset), limit, offset };
  });
  app.get("/api/v1/audit/export", ({ query }) => {
    const fmt = format(query);
    return exportResponse(store.audit.iterate(auditFilter(query)), fmt, "audit", AUDIT_FIELDS);
  });

  app.get("/api/v1/ws/connections", ({ query }) => {
    const { limit, offset } = pageParams(query, 500);
    return { ...store.ws.list(limit, offset, strParam(query, "session_id", 200)), limit, offset };
  });
  app.get("/api/v1/ws/stats", () => store.ws.stats());

  app.get("/api/v1/mcp/events", ({ query }) => {
    const { limit, offset } = pageParams(query, 500);
    return { ...store.mcp.events(limit, offset), limit, offset };
  });
  app.get("/api/v1/mcp/baselines", () => ({ baselines: store.mcp.baselines() }));
}

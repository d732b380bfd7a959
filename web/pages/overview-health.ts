/** The Overview's recent sessions, and the pipeline's health: its stages and what it could not read or keep. */
import { severityStack } from "../charts.ts";
import { ago, badge, dataTable, h, num, shortId } from "../dom.ts";
import type { Pipeline, Session, Stats } from "../types.ts";

export function recentSessions(sessions: Session[]): HTMLElement {
  return h(
    "section",
    { class: "panel", "aria-labelledby": "sessions-title" },
    h("h2", { id: "sessions-title" }, "Recent sessions (24 h)"),
    sessions.length === 0
      ? h("p", { class: "muted" }, "No session in the last 24 hours.")
      : dataTable(
          null,
          [
            h("th", null, "Session"),
            h("th", null, "Client"),
            h("th", null, "Last seen"),
            h("th", { class: "num" }, "Findings"),
            h("th", null, "Severity"),
          ],
          sessions.map((s) =>
            h(
              "tr",
              null,
              h(
                "td",
                null,
                h(
                  "a",
                  { href: `#/sessions/${encodeURIComponent(s.session_id)}`, class: "mono" },
                  shortId(s.session_id),
                ),
              ),
              h("td", null, s.client ?? s.provider ?? "—"),
              h("td", null, ago(s.last_seen)),
              h("td", { class: "num" }, num(s.finding_count)),
              h("td", null, severityStack(s.severity)),
            ),
          ),
        ),
  );
}

export function pipelineHealth(pipeline: Pipeline, stats: Stats, days: number): HTMLElement {
  return h(
    "section",
    { class: "panel", "aria-labelledby": "health-title" },
    h("h2", { id: "health-title" }, "Pipeline health"),
    h(
      "ul",
      { class: "bars", style: "list-style:none" },
      pipeline.stages.map((st) =>
        h(
          "li",
          { style: "grid-template-columns:minmax(0,1fr) auto" },
          h("span", { title: st.description }, st.label || st.name),
          !st.available ? badge("not available", "off") : st.enabled ? badge("on") : badge("off", "off"),
        ),
      ),
    ),
    scanHealth(stats, days),
    h(
      "p",
      { class: "muted", style: "margin:8px 0 0" },
      "Default action: ",
      h("strong", null, pipeline.default_action),
      " · ",
      h("a", { href: "#/pipeline" }, "Settings"),
    ),
  );
}

/** What sluice could not read or keep: each line says how many, zero when all is well. */
function scanHealth(stats: Stats, days: number): HTMLElement {
  const sh = stats.scan_health;
  const list = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([k, n]) => `${k} ${num(n)}`)
      .join(", ");
  const reasons = [list(sh.unscanned.by_reason), list(sh.unscanned.by_client)].filter(Boolean).join("; ");
  const line = (id: string, label: string, n: number, detail = "") =>
    h(
      "li",
      { id, style: "grid-template-columns:minmax(0,1fr) auto" },
      h("span", null, label, detail ? h("span", { class: "muted" }, ` (${detail})`) : null),
      h("strong", { class: n > 0 ? "warn" : "" }, num(n)),
    );
  return h(
    "ul",
    {
      class: "bars",
      id: "scan-health",
      style: "list-style:none;margin-top:8px",
      "aria-label": "Scan health",
    },
    line("sh-unscanned", `Requests forwarded unread, ${days} days`, sh.unscanned.total, reasons),
    line("sh-errors", "Scan errors", sh.scan_errors),
    line("sh-dropped", "Records dropped (store, audit)", sh.store_dropped + sh.audit_dropped),
  );
}

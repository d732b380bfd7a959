/** Sessions: the list, and one session's context, findings and requests. */
import { get } from "../api.ts";
import { severityStack } from "../charts.ts";
import {
  ago,
  badge,
  breakable,
  connectHint,
  dataTable,
  empty,
  h,
  kv,
  mount,
  num,
  pageHead,
  shortId,
  shortPreview,
  when,
} from "../dom.ts";
import { type PageCtx, proxyUrl } from "../state.ts";
import type { AuditEntry, Finding, List, Session } from "../types.ts";

/** Sessions per page (the API's maximum). */
const PAGE = 100;

export async function sessionsPage(ctx: PageCtx) {
  if (ctx.rest[0]) return sessionDetail(ctx, ctx.rest[0]);
  const offset = Math.max(0, Number(ctx.params.get("offset")) || 0);
  const [list, dash] = await Promise.all([
    get<List & { sessions: Session[] }>("/sessions", { limit: PAGE, offset }),
    get<{ sessions: Session[]; total: number }>("/sessions/dashboard", { limit: 10 }),
  ]);
  if (ctx.left()) return;
  const sev = new Map(dash.sessions.map((s) => [s.session_id, s.severity]));
  mount(
    ctx.root,
    pageHead(
      "Sessions",
      h(
        "span",
        { class: "muted" },
        `${num(list.total)} sessions · ${num(dash.total)} active in the last 24 h`,
      ),
    ),
    list.sessions.length === 0
      ? h("div", { class: "panel" }, empty("No sessions yet", connectHint(proxyUrl())))
      : dataTable(
          { id: "sessions-table" },
          [
            ["Session", "Tool", "Project", "Branch", "Last seen"].map((t) => h("th", { scope: "col" }, t)),
            h("th", { scope: "col", class: "num" }, "Requests"),
            h("th", { scope: "col", class: "num" }, "Findings"),
            h("th", { scope: "col" }, "Severity (24 h)"),
          ],
          list.sessions.map((s) => sessionRow(s, sev)),
        ),
    list.total > PAGE ? sessionsPager(offset, list) : null,
  );
}

/** `sev`: the severity mix of the sessions active in the last 24 hours. */
function sessionRow(s: Session, sev: Map<string, Session["severity"]>): HTMLElement {
  return h(
    "tr",
    null,
    h(
      "td",
      null,
      h(
        "a",
        { class: "mono id", href: `#/sessions/${encodeURIComponent(s.session_id)}`, title: s.session_id },
        shortId(s.session_id),
      ),
    ),
    // The tool, then where it went: provider and model.
    h(
      "td",
      null,
      h("span", { class: "nowrap" }, s.client ?? "—"),
      h("div", { class: "muted sub" }, [s.provider, s.model].filter(Boolean).join(" · ")),
    ),
    h("td", { class: "mono" }, s.working_directory ? breakable(s.working_directory) : "—"),
    h("td", null, s.git_branch ? breakable(s.git_branch) : "—"),
    h(
      "td",
      { class: "when", title: `${when(s.first_seen)} to ${when(s.last_seen)}` },
      ago(s.last_seen),
      h("div", { class: "muted sub" }, `since ${ago(s.first_seen)}`),
    ),
    h("td", { class: "num" }, num(s.request_count)),
    h("td", { class: "num" }, num(s.finding_count)),
    h(
      "td",
      null,
      sev.has(s.session_id) ? severityStack(sev.get(s.session_id)) : h("span", { class: "muted" }, "—"),
    ),
  );
}

/** Newer and older pages as links, so that each page has its own address. */
function sessionsPager(offset: number, list: List & { sessions: Session[] }): HTMLElement {
  return h(
    "div",
    { class: "pager" },
    h("span", { class: "muted" }, `${offset + 1}–${offset + list.sessions.length} of ${num(list.total)}`),
    h(
      "a",
      { class: "btn", href: `#/sessions?offset=${Math.max(0, offset - PAGE)}`, hidden: offset === 0 },
      "← Newer",
    ),
    h(
      "a",
      { class: "btn", href: `#/sessions?offset=${offset + PAGE}`, hidden: offset + PAGE >= list.total },
      "Older →",
    ),
  );
}

async function sessionDetail(ctx: PageCtx, id: string) {
  const [findings, audit, sessions] = await Promise.all([
    get<List & { findings: Finding[] }>("/findings", { session_id: id, limit: 200 }),
    get<List & { entries: AuditEntry[] }>("/audit", { session_id: id, limit: 200 }),
    get<List & { sessions: Session[] }>("/sessions", { limit: 100 }),
  ]);
  if (ctx.left()) return;
  mount(
    ctx.root,
    h("p", null, h("a", { href: "#/sessions" }, "← All sessions")),
    pageHead(["Session ", h("span", { class: "mono" }, id)]),
    h(
      "div",
      { class: "stack" },
      sessionContext(sessions.sessions.find((x) => x.session_id === id)),
      h("div", { class: "stack" }, sessionFindings(id, findings), sessionRequests(audit)),
    ),
  );
}

function sessionContext(s: Session | undefined): HTMLElement {
  return h(
    "section",
    { class: "panel", "aria-labelledby": "sc-title" },
    h("h2", { id: "sc-title" }, "Context"),
    s
      ? h(
          "dl",
          { class: "kv wide" },
          kv("Client", s.client),
          kv("Provider", s.provider),
          kv("Model", s.model),
          kv("Account", s.account_id),
          kv("Device", s.device_id),
          kv("Project", s.working_directory),
          kv("Branch", s.git_branch),
          kv("First seen", when(s.first_seen)),
          kv("Last seen", when(s.last_seen)),
          kv("Requests", s.request_count),
          kv("Findings", s.finding_count),
        )
      : h("p", { class: "muted" }, "This session is not among the 100 most recent."),
  );
}

function sessionFindings(id: string, findings: List & { findings: Finding[] }): HTMLElement {
  return h(
    "section",
    { class: "panel", "aria-labelledby": "sf-title" },
    h(
      "div",
      { class: "row", style: "justify-content:space-between" },
      h("h2", { id: "sf-title" }, `Findings (${num(findings.total)})`),
      h("a", { href: `#/findings?session_id=${encodeURIComponent(id)}` }, "Open in Findings"),
    ),
    findings.findings.length === 0
      ? h("p", { class: "muted" }, "No findings in this session.")
      : dataTable(
          null,
          [
            ["When", "Severity", "Type", "Preview", "Location", "Action"].map((t) =>
              h("th", { scope: "col" }, t),
            ),
          ],
          findings.findings.map((f) =>
            h(
              "tr",
              null,
              h("td", null, h("a", { href: `#/findings/${f.id}` }, ago(f.ts))),
              h("td", null, badge(f.severity)),
              h("td", null, f.finding_type),
              h("td", null, h("code", { title: f.preview }, shortPreview(f.preview))),
              h("td", { class: "mono" }, f.path),
              h("td", null, badge(f.action)),
            ),
          ),
        ),
  );
}

function sessionRequests(audit: List & { entries: AuditEntry[] }): HTMLElement {
  return h(
    "section",
    { class: "panel", "aria-labelledby": "sr-title" },
    h("h2", { id: "sr-title" }, `Requests (${num(audit.total)})`),
    audit.entries.length === 0
      ? h("p", { class: "muted" }, "No requests recorded for this session.")
      : dataTable(
          null,
          [
            ["When", "Request", "Model", "Action", "Status"].map((t) => h("th", { scope: "col" }, t)),
            h("th", { class: "num", scope: "col" }, "Findings"),
            h("th", { class: "num", scope: "col" }, "Duration"),
          ],
          audit.entries.map((e) =>
            h(
              "tr",
              null,
              h("td", { title: when(e.ts) }, ago(e.ts)),
              h("td", { class: "mono" }, `${e.method} ${e.path}`),
              h("td", null, e.model ?? "—"),
              h("td", null, badge(e.action)),
              h("td", null, e.upstream_status === null ? (e.error ?? "—") : String(e.upstream_status)),
              h("td", { class: "num" }, num(e.finding_count)),
              h("td", { class: "num" }, `${Math.round(e.duration_ms)} ms`),
            ),
          ),
        ),
  );
}

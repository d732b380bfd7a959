/**
 * Audit and logs: the audit table with filters and export, followed live; the application log tail
 * (audit-log.ts); the WebSocket connections and MCP events (audit-events.ts).
 */
import { get } from "../api.ts";
import {
  ago,
  anyOf,
  badge,
  breakable,
  coalesce,
  connectHint,
  dataTable,
  empty,
  h,
  mount,
  num,
  PERIODS,
  pageHead,
  pagerControls,
  turnPage,
  when,
} from "../dom.ts";
import { fail } from "../feedback.ts";
import { exportLinks, Filter, type FilterSpec, filterForm } from "../filters.ts";
import { onLive } from "../live.ts";
import { type PageCtx, proxyUrl, replaceParams } from "../state.ts";
import { ACTIONS, type AuditEntry, type List, PROVIDERS } from "../types.ts";
import { mcpPanel, wsPanel } from "./audit-events.ts";
import { logPanel } from "./audit-log.ts";

type FilterKey = "action" | "provider" | "client" | "session_id" | "search" | "days";
const FILTERS: FilterSpec<FilterKey>[] = [
  { key: "action", label: "Action", options: anyOf(["pass", ...ACTIONS]) },
  { key: "provider", label: "Provider", options: anyOf(PROVIDERS) },
  { key: "client", label: "Client" },
  { key: "session_id", label: "Session" },
  {
    key: "search",
    label: "Search",
    search: true,
    live: true,
    placeholder: "path, model, client, request id",
  },
  { key: "days", label: "Period", options: PERIODS },
];
const LIMIT = 50;
/** How long a burst of live requests waits before the first page is read again. */
const LIVE_REFRESH_MS = 500;

/** The audit table's state. */
interface AuditPage {
  ctx: PageCtx;
  filter: Filter<FilterKey>;
  offset: number;
  limit: number;
  total: number;
  load(): Promise<void>;
}

export async function auditPage(ctx: PageCtx) {
  const tableBox = h("div");
  const pager = h("div", { class: "pager" });
  const exports = exportLinks("/audit/export", "sluice-audit", "audit-export");
  const page: AuditPage = {
    ctx,
    filter: new Filter(FILTERS, ctx.params, "audit-", () => {
      page.offset = 0;
      void page.load();
    }),
    offset: 0,
    limit: LIMIT,
    total: 0,
    load: async () => {
      const query = page.filter.query();
      replaceParams("audit", query);
      exports.update(query);
      try {
        const res = await get<List & { entries: AuditEntry[] }>("/audit", {
          ...query,
          limit: page.limit,
          offset: page.offset,
        });
        if (ctx.left()) return;
        mount(tableBox, auditTable(page, res.entries));
        page.total = res.total;
        mount(pager, ...pagerControls(page, `${num(res.total)} requests`, turnPage(page)));
      } catch (err) {
        fail(err);
      }
    },
  };
  const ws = wsPanel(ctx);
  const mcp = mcpPanel(ctx);
  const log = logPanel(ctx);

  // New requests refresh the first page of the audit table.
  const refresh = coalesce(() => {
    if (!ctx.left()) void page.load();
  }, LIVE_REFRESH_MS);
  ctx.onLeave(
    onLive("request", () => {
      if (!page.offset) refresh();
    }),
  );

  mount(
    ctx.root,
    pageHead("Audit & logs", h("span", { class: "spacer" }), exports.links),
    filterForm("Filter audit entries", page.filter.fields()),
    tableBox,
    pager,
    log.element,
    h("div", { class: "grid cols-2", style: "margin-top:14px" }, ws.element, mcp.element),
  );
  await Promise.all([page.load(), log.load(), ws.load(), mcp.load()]);
  log.follow();
}

function auditTable(page: AuditPage, entries: AuditEntry[]): HTMLElement {
  if (entries.length === 0)
    return h(
      "div",
      { class: "panel" },
      page.filter.any()
        ? empty("No request matches this filter.")
        : empty("No requests yet", connectHint(proxyUrl())),
    );
  return dataTable(
    { id: "audit-table" },
    [
      ["When", "Request", "Tool", "Action", "Status", "Session"].map((t) => h("th", { scope: "col" }, t)),
      h("th", { class: "num", scope: "col" }, "Findings"),
      h("th", { class: "num", scope: "col" }, "Bytes"),
      h("th", { class: "num", scope: "col" }, "ms"),
    ],
    entries.map(auditRow),
  );
}

function auditRow(e: AuditEntry): HTMLElement {
  return h(
    "tr",
    null,
    h("td", { class: "when", title: when(e.ts) }, ago(e.ts)),
    h("td", { class: "mono", title: e.request_id }, breakable(`${e.method} ${e.path}`)),
    // The tool, then where it went: provider and model.
    h(
      "td",
      null,
      h("span", { class: "nowrap" }, e.client || "unknown"),
      h("div", { class: "muted sub" }, [e.provider, e.model].filter(Boolean).join(" · ")),
    ),
    actionCell(e),
    h(
      "td",
      null,
      e.upstream_status === null
        ? h("span", { title: e.error ?? "" }, e.error ? "error" : "—")
        : String(e.upstream_status),
    ),
    h(
      "td",
      null,
      h(
        "a",
        { class: "mono id", href: `#/sessions/${encodeURIComponent(e.session_id)}` },
        e.session_id.slice(0, 12),
      ),
    ),
    h("td", { class: "num" }, num(e.finding_count)),
    h("td", { class: "num" }, num(e.bytes)),
    h("td", { class: "num" }, String(Math.round(e.duration_ms))),
  );
}

/** The action, passthrough when scanning was off, and why: the rules that decided it, each a link to its findings. */
function actionCell(e: AuditEntry): HTMLElement {
  return h(
    "td",
    null,
    badge(e.action),
    e.mode === "passthrough" ? [" ", badge("passthrough", "warning")] : null,
    e.rules
      ? h(
          "span",
          { class: "audit-rules" },
          e.rules
            .split(",")
            .map((r) => [
              " ",
              h("a", { class: "mono", href: `#/findings?rule=${encodeURIComponent(r)}` }, breakable(r)),
            ]),
        )
      : null,
  );
}

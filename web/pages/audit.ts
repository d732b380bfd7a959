/** Audit and logs: the audit table with filters and export, and the application log tail, followed live. */
import { downloadUrl, get } from "../api.ts";
import {
  ago,
  anyOf,
  badge,
  breakable,
  connectHint,
  dataTable,
  debounce,
  empty,
  field,
  h,
  mount,
  num,
  PERIODS,
  pageButtons,
  select,
  when,
} from "../dom.ts";
import { fail } from "../feedback.ts";
import { onLive } from "../live.ts";
import { type PageCtx, proxyUrl, replaceParams } from "../state.ts";
import {
  ACTIONS,
  type AuditEntry,
  type List,
  type McpEvent,
  PROVIDERS,
  type WsConnection,
} from "../types.ts";

const FILTERS = ["action", "provider", "client", "session_id", "search", "days"] as const;
type FilterKey = (typeof FILTERS)[number];
const LOG_POLL_MS = 2000;

export async function auditPage(ctx: PageCtx) {
  const filter = Object.fromEntries(FILTERS.map((k) => [k, ctx.params.get(k) ?? ""])) as Record<
    FilterKey,
    string
  >;
  let offset = 0;
  const limit = 50;
  const tableBox = h("div");
  const pager = h("div", { class: "pager" });
  const exportCsv = h(
    "a",
    { class: "btn", download: "sluice-audit.csv", id: "audit-export-csv" },
    "Export CSV",
  );
  const exportJson = h(
    "a",
    { class: "btn", download: "sluice-audit.json", id: "audit-export-json" },
    "Export JSON",
  );
  const query = () => Object.fromEntries(FILTERS.filter((k) => filter[k]).map((k) => [k, filter[k]]));

  const load = async () => {
    replaceParams("audit", query());
    exportCsv.href = downloadUrl("/audit/export", { ...query(), format: "csv" });
    exportJson.href = downloadUrl("/audit/export", { ...query(), format: "json" });
    try {
      const res = await get<List & { entries: AuditEntry[] }>("/audit", { ...query(), limit, offset });
      if (ctx.left()) return;
      render(res.entries, res.total);
    } catch (err) {
      fail(err);
    }
  };

  const render = (entries: AuditEntry[], total: number) => {
    mount(
      tableBox,
      entries.length === 0
        ? h(
            "div",
            { class: "panel" },
            Object.values(filter).some(Boolean)
              ? empty("No request matches this filter.")
              : empty("No requests yet", connectHint(proxyUrl())),
          )
        : dataTable(
            { id: "audit-table" },
            [
              ["When", "Request", "Tool", "Action", "Status", "Session"].map((t) =>
                h("th", { scope: "col" }, t),
              ),
              h("th", { class: "num", scope: "col" }, "Findings"),
              h("th", { class: "num", scope: "col" }, "Bytes"),
              h("th", { class: "num", scope: "col" }, "ms"),
            ],
            entries.map((e) =>
              h(
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
                h(
                  "td",
                  null,
                  badge(e.action),
                  e.mode === "passthrough" ? [" ", badge("passthrough", "warning")] : null,
                  // Why: the rules that decided it, each a link to its findings.
                  e.rules
                    ? h(
                        "span",
                        { class: "audit-rules" },
                        e.rules
                          .split(",")
                          .map((r) => [
                            " ",
                            h(
                              "a",
                              { class: "mono", href: `#/findings?rule=${encodeURIComponent(r)}` },
                              breakable(r),
                            ),
                          ]),
                      )
                    : null,
                ),
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
              ),
            ),
          ),
    );
    mount(
      pager,
      h("span", { class: "muted" }, `${num(total)} requests`),
      ...pageButtons(offset, limit, total, (o) => {
        offset = o;
        void load();
      }),
    );
  };

  const controls = FILTERS.map((k) => {
    let el: HTMLInputElement | HTMLSelectElement;
    if (k === "action") el = select(k, anyOf(["pass", ...ACTIONS]), filter[k]);
    else if (k === "provider") el = select(k, anyOf(PROVIDERS), filter[k]);
    else if (k === "days") el = select(k, PERIODS, filter[k]);
    else
      el = h("input", {
        type: k === "search" ? "search" : "text",
        name: k,
        value: filter[k],
        placeholder: k === "search" ? "path, model, client, request id" : "",
      });
    el.id = `audit-${k}`;
    const apply = () => {
      filter[k] = el.value.trim();
      offset = 0;
      void load();
    };
    el.addEventListener(k === "search" ? "input" : "change", k === "search" ? debounce(apply, 250) : apply);
    const labels: Record<FilterKey, string> = {
      action: "Action",
      provider: "Provider",
      client: "Client",
      session_id: "Session",
      search: "Search",
      days: "Period",
    };
    return field(labels[k], el);
  });

  /* ---------- WebSocket connections and MCP events ---------- */
  const wsBox = h("section", { class: "panel", "aria-labelledby": "ws-title" });
  const mcpBox = h("section", { class: "panel", "aria-labelledby": "mcp-title" });
  const loadWs = async () => {
    try {
      const res = await get<List & { connections: WsConnection[] }>("/ws/connections", { limit: 20 });
      if (ctx.left()) return;
      mount(
        wsBox,
        h("h2", { id: "ws-title" }, `WebSocket connections (${num(res.total)})`),
        res.connections.length === 0
          ? h("p", { class: "muted" }, "No WebSocket connection yet (Codex opens one per turn).")
          : dataTable(
              { id: "ws-table" },
              [
                ["Opened", "Target", "State"].map((t) => h("th", { scope: "col" }, t)),
                h("th", { class: "num", scope: "col" }, "Frames"),
                h("th", { class: "num", scope: "col" }, "Findings"),
              ],
              res.connections.map((c) =>
                h(
                  "tr",
                  null,
                  h("td", { title: when(c.opened_at) }, ago(c.opened_at)),
                  h("td", { class: "mono", title: c.connection_id }, c.target_url),
                  h("td", null, c.state, c.close_code ? ` (${c.close_code})` : ""),
                  h("td", { class: "num" }, `${num(c.frames_out)} / ${num(c.frames_in)}`),
                  h("td", { class: "num" }, num(c.findings)),
                ),
              ),
            ),
      );
    } catch (err) {
      fail(err);
    }
  };
  const loadMcp = async () => {
    try {
      const res = await get<List & { events: McpEvent[] }>("/mcp/events", { limit: 20 });
      if (ctx.left()) return;
      mount(
        mcpBox,
        h("h2", { id: "mcp-title" }, `MCP events (${num(res.total)})`),
        res.events.length === 0
          ? h(
              "p",
              { class: "muted" },
              "No MCP event yet. Wrap a tool server with ",
              h("code", null, "sluice mcp -- <command>"),
              ".",
            )
          : h(
              "ul",
              { class: "feed", id: "mcp-events" },
              res.events.map((e) =>
                h(
                  "li",
                  null,
                  h("time", { title: when(e.ts) }, ago(e.ts)),
                  badge(e.severity || "info"),
                  h("span", { class: "what" }, `${e.kind} · ${e.server}: ${e.message}`),
                ),
              ),
            ),
      );
    } catch (err) {
      fail(err);
    }
  };
  ctx.onLeave(onLive("ws-connection", () => void loadWs()));
  ctx.onLeave(onLive("mcp-event", () => void loadMcp()));

  /* ---------- log tail ---------- */
  const logPre = h("pre", {
    class: "log-tail",
    id: "log-tail",
    tabindex: "0",
    "aria-label": "Application log, most recent last",
  });
  const follow = h("input", { type: "checkbox", id: "log-follow", checked: true });
  let timer: ReturnType<typeof setInterval> | undefined;
  const loadLog = async () => {
    try {
      const res = await get<{ lines: string[] }>("/logs/tail");
      if (ctx.left()) return;
      const atBottom = logPre.scrollTop + logPre.clientHeight >= logPre.scrollHeight - 8;
      logPre.textContent = res.lines.length
        ? res.lines.join("\n")
        : "(the log is empty at the current level)";
      if (atBottom || follow.checked) logPre.scrollTop = logPre.scrollHeight;
    } catch (err) {
      if (timer) clearInterval(timer);
      fail(err);
    }
  };
  const setFollow = () => {
    if (timer) clearInterval(timer);
    timer = follow.checked ? setInterval(() => void loadLog(), LOG_POLL_MS) : undefined;
  };
  follow.addEventListener("change", setFollow);
  ctx.onLeave(() => timer && clearInterval(timer));

  // New requests refresh the first page of the audit table.
  let pending = false;
  ctx.onLeave(
    onLive("request", () => {
      if (offset || pending) return;
      pending = true;
      setTimeout(() => {
        pending = false;
        if (!ctx.left()) void load();
      }, 500);
    }),
  );

  mount(
    ctx.root,
    h(
      "div",
      { class: "page-head" },
      h("h1", null, "Audit & logs"),
      h("span", { class: "spacer" }),
      exportCsv,
      exportJson,
    ),
    h(
      "form",
      {
        class: "filters",
        role: "search",
        "aria-label": "Filter audit entries",
        onsubmit: (e: Event) => e.preventDefault(),
      },
      controls,
    ),
    tableBox,
    pager,
    h(
      "section",
      { class: "panel", style: "margin-top:14px", "aria-labelledby": "log-title" },
      h(
        "div",
        { class: "row", style: "justify-content:space-between" },
        h("h2", { id: "log-title" }, "Application log"),
        h(
          "div",
          { class: "row" },
          h("label", { class: "row", for: "log-follow", style: "gap:6px" }, follow, "Follow live"),
          h(
            "a",
            { class: "btn", href: "/api/v1/logs/download", download: "sluice.log" },
            "Download full log",
          ),
        ),
      ),
      logPre,
    ),
    h("div", { class: "grid cols-2", style: "margin-top:14px" }, wsBox, mcpBox),
  );
  await Promise.all([load(), loadLog(), loadWs(), loadMcp()]);
  setFollow();
}

/**
 * Findings: every filter of `/api/v1/findings`, sorting, paging, a detail view, CSV/JSON export of
 * the current filter, and one-click allowlisting of a value pattern or disabling of the rule.
 *
 * Longer than most pages: the filters, sorting, paging, exports and the detail view share one
 * state (the current query), which the detail's actions (allowlist, disable the rule) change too.
 */
import { downloadUrl, get } from "../api.ts";
import {
  ago,
  anyOf,
  badge,
  breakable,
  connectHint,
  empty,
  field,
  h,
  mount,
  num,
  PERIODS,
  pageButtons,
  select,
  shortPreview,
  when,
} from "../dom.ts";
import { fail } from "../feedback.ts";
import { onLive } from "../live.ts";
import { type PageCtx, proxyUrl, replaceParams } from "../state.ts";
import {
  ACTIONS,
  actionSourceLabel,
  DETECTORS,
  type Finding,
  type FindingDetail,
  type List,
  PROVIDERS,
  SEVERITIES,
} from "../types.ts";
import { findingDetail } from "./finding-detail.ts";

const FILTERS = [
  "severity",
  "detector",
  "action",
  "finding_type",
  "provider",
  "client",
  "rule",
  "session_id",
  "account_id",
  "days",
  "q",
] as const;
type FilterKey = (typeof FILTERS)[number];
const PAGE_SIZES = [25, 50, 100, 200];
/** How many findings a non-default sort covers (the API's largest page). */
const SORT_WINDOW = 500;

type SortKey = "ts" | "severity" | "finding_type" | "rule" | "action" | "provider" | "client" | "seen_count";
const SEV_RANK: Record<string, number> = { critical: 4, high: 3, warning: 2, info: 1 };

export async function findingsPage(ctx: PageCtx) {
  const filter: Record<FilterKey, string> = Object.fromEntries(
    FILTERS.map((k) => [k, ctx.params.get(k) ?? ""]),
  ) as Record<FilterKey, string>;
  let limit = Number(ctx.params.get("limit")) || 50;
  let offset = Number(ctx.params.get("offset")) || 0;
  let sort: SortKey = (ctx.params.get("sort") as SortKey) || "ts";
  let dir: "asc" | "desc" = ctx.params.get("dir") === "asc" ? "asc" : "desc";
  let rows: Finding[] = [];
  let total = 0;
  let selectedId: number | null = ctx.rest[0] ? Number(ctx.rest[0]) : null;

  const tableBox = h("div");
  const detailBox = h("aside", {
    class: "panel detail",
    id: "finding-detail",
    "aria-label": "Finding detail",
    tabindex: "-1",
  });
  const pager = h("div", { class: "pager" });
  const exportCsv = h("a", { class: "btn", id: "export-csv", download: "sluice-findings.csv" }, "Export CSV");
  const exportJson = h(
    "a",
    { class: "btn", id: "export-json", download: "sluice-findings.json" },
    "Export JSON",
  );
  const totalLabel = h("span", { class: "muted", id: "findings-total" });
  const sortNote = h("span", { class: "muted", id: "sort-note" });

  const query = () => {
    const q: Record<string, string | number> = {};
    for (const k of FILTERS) if (filter[k]) q[k] = filter[k];
    return q;
  };

  const syncUrl = () => {
    replaceParams(selectedId ? `findings/${selectedId}` : "findings", {
      ...query(),
      limit: limit === 50 ? null : limit,
      offset: offset || null,
      sort: sort === "ts" ? null : sort,
      dir: dir === "desc" ? null : dir,
    });
    exportCsv.href = downloadUrl("/findings/export", { ...query(), format: "csv" });
    exportJson.href = downloadUrl("/findings/export", { ...query(), format: "json" });
  };

  /** Newest-first is the server's order; any other sort fetches the newest SORT_WINDOW and pages here. */
  const clientSorted = () => !(sort === "ts" && dir === "desc");
  const load = async () => {
    syncUrl();
    try {
      const res = clientSorted()
        ? await get<List & { findings: Finding[] }>("/findings", {
            ...query(),
            limit: SORT_WINDOW,
            offset: 0,
          })
        : await get<List & { findings: Finding[] }>("/findings", { ...query(), limit, offset });
      if (ctx.left()) return;
      rows = res.findings;
      total = res.total;
      renderTable();
    } catch (err) {
      fail(err);
    }
  };

  const controls = FILTERS.map((k) => {
    let el: HTMLSelectElement | HTMLInputElement;
    switch (k) {
      case "severity":
        el = select(k, anyOf(SEVERITIES), filter[k]);
        break;
      case "detector":
        el = select(k, anyOf(DETECTORS), filter[k]);
        break;
      case "action":
        el = select(k, anyOf(ACTIONS), filter[k]);
        break;
      case "provider":
        el = select(k, anyOf(PROVIDERS), filter[k]);
        break;
      case "days":
        el = select(k, PERIODS, filter[k]);
        break;
      default:
        el = h("input", {
          type: k === "q" ? "search" : "text",
          name: k,
          value: filter[k],
          placeholder: k === "q" ? "type, rule or path" : "",
        });
    }
    el.id = `filter-${k}`;
    el.addEventListener("change", () => {
      filter[k] = el.value.trim();
      offset = 0;
      void load();
    });
    const labels: Record<FilterKey, string> = {
      severity: "Severity",
      detector: "Detector",
      action: "Action",
      finding_type: "Finding type",
      provider: "Provider",
      client: "Client",
      rule: "Rule",
      session_id: "Session",
      account_id: "Account",
      days: "Period",
      q: "Search",
    };
    return field(labels[k], el);
  });

  const clear = h(
    "button",
    {
      class: "btn",
      type: "button",
      onclick: () => {
        for (const k of FILTERS) filter[k] = "";
        for (const c of controls) {
          const el = c.querySelector("select, input") as HTMLInputElement;
          el.value = "";
        }
        offset = 0;
        void load();
      },
    },
    "Clear filters",
  );

  const sorted = () => {
    const k = sort;
    const m = dir === "asc" ? 1 : -1;
    return [...rows].sort((a, b) => {
      const va = k === "severity" ? (SEV_RANK[a.severity] ?? 0) : (a[k] as string | number);
      const vb = k === "severity" ? (SEV_RANK[b.severity] ?? 0) : (b[k] as string | number);
      return (va > vb ? 1 : va < vb ? -1 : 0) * m;
    });
  };

  const th = (label: string, key: SortKey, cls?: string) =>
    h(
      "th",
      {
        class: cls,
        "aria-sort": sort === key ? (dir === "asc" ? "ascending" : "descending") : "none",
        scope: "col",
      },
      h(
        "button",
        {
          class: "sort",
          type: "button",
          onclick: () => {
            if (sort === key) dir = dir === "asc" ? "desc" : "asc";
            else {
              sort = key;
              dir = key === "ts" || key === "severity" || key === "seen_count" ? "desc" : "asc";
            }
            offset = 0;
            void load();
          },
        },
        label,
        sort === key ? (dir === "asc" ? " ▲" : " ▼") : "",
      ),
    );

  const renderTable = () => {
    totalLabel.textContent = `${num(total)} findings`;
    sortNote.textContent =
      clientSorted() && total > SORT_WINDOW
        ? `Sorted within the ${SORT_WINDOW} newest matching findings.`
        : "";
    if (rows.length === 0) {
      const filtered = Object.values(filter).some(Boolean);
      mount(
        tableBox,
        h(
          "div",
          { class: "panel" },
          filtered
            ? empty("No finding matches this filter.", h("p", null, "Clear a filter or widen the period."))
            : empty("No findings yet", connectHint(proxyUrl())),
        ),
      );
    } else {
      mount(
        tableBox,
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { id: "findings-table" },
            h("caption", { class: "sr-only" }, "Findings. Activate a column header to sort by it."),
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                th("When", "ts"),
                th("Severity", "severity"),
                th("Type", "finding_type"),
                th("Rule", "rule"),
                h("th", { scope: "col" }, "Preview"),
                th("Action", "action"),
                th("Provider", "provider"),
                th("Client", "client"),
                th("Seen", "seen_count", "num"),
              ),
            ),
            h(
              "tbody",
              null,
              (clientSorted() ? sorted().slice(offset, offset + limit) : rows).map((f) =>
                h(
                  "tr",
                  {
                    class: `clickable${f.id === selectedId ? " selected" : ""}`,
                    tabindex: "0",
                    dataset: { id: String(f.id) },
                    "aria-label": `${f.severity} ${f.finding_type} ${f.preview}, open details`,
                    onclick: () => void openDetail(f.id),
                    onkeydown: (e: Event) => {
                      const k = (e as KeyboardEvent).key;
                      if (k === "Enter" || k === " ") {
                        e.preventDefault();
                        void openDetail(f.id);
                      }
                    },
                  },
                  h("td", { class: "when", title: when(f.ts) }, ago(f.ts)),
                  h("td", null, badge(f.severity)),
                  h("td", null, breakable(f.finding_type)),
                  h("td", { class: "mono" }, breakable(f.rule)),
                  h("td", null, h("code", { title: f.preview }, shortPreview(f.preview))),
                  h(
                    "td",
                    null,
                    badge(f.action),
                    f.action_source
                      ? h("div", { class: "muted" }, actionSourceLabel(f.action_source, f.detector))
                      : null,
                  ),
                  h("td", null, f.provider),
                  h("td", null, f.client),
                  h("td", { class: "num" }, num(f.seen_count)),
                ),
              ),
            ),
          ),
        ),
      );
    }
    const pages = Math.max(1, Math.ceil(total / limit));
    const page = Math.floor(offset / limit) + 1;
    mount(
      pager,
      field(
        "Rows per page",
        select("limit", PAGE_SIZES.map(String), String(limit), {
          id: "page-size",
          onchange: (e: Event) => {
            limit = Number((e.target as HTMLSelectElement).value);
            offset = 0;
            void load();
          },
        }),
      ),
      h("span", { class: "muted" }, `Page ${page} of ${pages}`),
      ...pageButtons(offset, limit, total, (o) => {
        offset = o;
        void load();
      }),
    );
  };

  const openDetail = async (id: number) => {
    selectedId = id;
    syncUrl();
    for (const tr of tableBox.querySelectorAll("tr[data-id]"))
      tr.classList.toggle("selected", (tr as HTMLElement).dataset.id === String(id));
    try {
      const f = await get<FindingDetail>(`/findings/${id}`);
      if (ctx.left()) return;
      mount(detailBox, ...findingDetail(f, closeDetail));
      showDetail(true);
      // The reader (and the keyboard) goes on in the detail; below 1440 px it sits above the table.
      detailBox.focus({ preventScroll: true });
      const top = detailBox.getBoundingClientRect().top;
      if (top < 0 || top > window.innerHeight / 2) detailBox.scrollIntoView({ block: "start" });
    } catch (err) {
      fail(err);
    }
  };

  const closeDetail = () => {
    selectedId = null;
    detailBox.replaceChildren();
    showDetail(false);
    syncUrl();
    for (const tr of tableBox.querySelectorAll("tr.selected")) tr.classList.remove("selected");
  };

  const split = h("div", { class: "grid" }, h("div", null, tableBox, pager), detailBox);
  const showDetail = (on: boolean) => {
    split.className = on ? "grid table-detail" : "grid one-col";
    detailBox.hidden = !on;
  };
  showDetail(false);

  mount(
    ctx.root,
    h(
      "div",
      { class: "page-head" },
      h("h1", null, "Findings"),
      totalLabel,
      sortNote,
      h("span", { class: "spacer" }),
      exportCsv,
      exportJson,
    ),
    h(
      "form",
      {
        class: "filters",
        role: "search",
        "aria-label": "Filter findings",
        onsubmit: (e: Event) => e.preventDefault(),
      },
      controls,
      clear,
    ),
    split,
  );

  // New findings that match no narrowing filter refresh the first page.
  let pending = false;
  ctx.onLeave(
    onLive("finding", () => {
      if (offset !== 0 || pending) return;
      pending = true;
      setTimeout(() => {
        pending = false;
        if (!ctx.left()) void load();
      }, 300);
    }),
  );

  await load();
  if (selectedId) await openDetail(selectedId);
}

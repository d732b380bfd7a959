/**
 * Findings: every filter of `/api/v1/findings`, sorting, paging, a detail view, CSV/JSON export of
 * the current filter, and one-click allowlisting of a value pattern or disabling of the rule.
 *
 * The parts share one `FindingsPage` (the filter, sort and page, the finding open in the detail):
 * the table with its sort headers and pager is findings-table.ts, the detail's content
 * finding-detail.ts.
 */
import { get } from "../api.ts";
import { anyOf, coalesce, h, mount, PERIODS, pageHead } from "../dom.ts";
import { fail } from "../feedback.ts";
import { exportLinks, Filter, type FilterSpec, filterForm } from "../filters.ts";
import { onLive } from "../live.ts";
import { type PageCtx, replaceParams } from "../state.ts";
import {
  ACTIONS,
  DETECTORS,
  type Finding,
  type FindingDetail,
  type List,
  PROVIDERS,
  SEVERITIES,
} from "../types.ts";
import { findingDetail } from "./finding-detail.ts";
import { clientSorted, findingsTable, SORT_WINDOW, type SortKey } from "./findings-table.ts";

type FilterKey =
  | "severity"
  | "detector"
  | "action"
  | "finding_type"
  | "provider"
  | "client"
  | "rule"
  | "session_id"
  | "account_id"
  | "days"
  | "q";

const FILTERS: FilterSpec<FilterKey>[] = [
  { key: "severity", label: "Severity", options: anyOf(SEVERITIES) },
  { key: "detector", label: "Detector", options: anyOf(DETECTORS) },
  { key: "action", label: "Action", options: anyOf(ACTIONS) },
  { key: "finding_type", label: "Finding type" },
  { key: "provider", label: "Provider", options: anyOf(PROVIDERS) },
  { key: "client", label: "Client" },
  { key: "rule", label: "Rule" },
  { key: "session_id", label: "Session" },
  { key: "account_id", label: "Account" },
  { key: "days", label: "Period", options: PERIODS },
  { key: "q", label: "Search", search: true, placeholder: "type, rule or path" },
];
const DEFAULT_LIMIT = 50;
/** How long a burst of live findings waits before the first page is read again. */
const LIVE_REFRESH_MS = 300;

/** The Findings page's state, shared by its parts. */
export interface FindingsPage {
  ctx: PageCtx;
  filter: Filter<FilterKey>;
  limit: number;
  offset: number;
  sort: SortKey;
  dir: "asc" | "desc";
  /** The findings read (a page, or the newest SORT_WINDOW when sorted here), and how many match. */
  rows: Finding[];
  total: number;
  /** The finding open in the detail. */
  selectedId: number | null;
  /** Read the findings again (after a filter, sort or page change) and draw the table. */
  load(): Promise<void>;
  openDetail(id: number): Promise<void>;
}

export async function findingsPage(ctx: PageCtx) {
  const page: FindingsPage = {
    ctx,
    filter: new Filter(FILTERS, ctx.params, "filter-", () => {
      page.offset = 0;
      void page.load();
    }),
    limit: Number(ctx.params.get("limit")) || DEFAULT_LIMIT,
    offset: Number(ctx.params.get("offset")) || 0,
    sort: (ctx.params.get("sort") as SortKey) || "ts",
    dir: ctx.params.get("dir") === "asc" ? "asc" : "desc",
    rows: [],
    total: 0,
    selectedId: ctx.rest[0] ? Number(ctx.rest[0]) : null,
    load: () => loadFindings(page, syncUrl, table.render),
    openDetail: (id) => detail.open(id),
  };
  const exports = exportLinks("/findings/export", "sluice-findings", "export");
  const syncUrl = () => {
    const { filter, limit, offset, sort, dir, selectedId } = page;
    replaceParams(selectedId ? `findings/${selectedId}` : "findings", {
      ...filter.query(),
      limit: limit === DEFAULT_LIMIT ? null : limit,
      offset: offset || null,
      sort: sort === "ts" ? null : sort,
      dir: dir === "desc" ? null : dir,
    });
    exports.update(filter.query());
  };
  const table = findingsTable(page);
  const detail = detailPane(page, table.element, syncUrl);
  const clear = h(
    "button",
    {
      class: "btn",
      type: "button",
      onclick: () => {
        page.filter.clear();
        page.offset = 0;
        void page.load();
      },
    },
    "Clear filters",
  );
  mount(
    ctx.root,
    pageHead("Findings", table.totalLabel, table.sortNote, h("span", { class: "spacer" }), exports.links),
    filterForm("Filter findings", page.filter.fields(), clear),
    h("div", { class: "grid" }, h("div", null, table.element, table.pager), detail.element),
  );
  detail.show(false);

  // New findings that match no narrowing filter refresh the first page.
  const refresh = coalesce(() => {
    if (!ctx.left()) void page.load();
  }, LIVE_REFRESH_MS);
  ctx.onLeave(
    onLive("finding", () => {
      if (page.offset === 0) refresh();
    }),
  );

  await page.load();
  if (page.selectedId) await page.openDetail(page.selectedId);
}

async function loadFindings(page: FindingsPage, syncUrl: () => void, render: () => void) {
  syncUrl();
  const { filter, limit, offset } = page;
  try {
    const res = await get<List & { findings: Finding[] }>(
      "/findings",
      clientSorted(page)
        ? { ...filter.query(), limit: SORT_WINDOW, offset: 0 }
        : { ...filter.query(), limit, offset },
    );
    if (page.ctx.left()) return;
    page.rows = res.findings;
    page.total = res.total;
    render();
  } catch (err) {
    fail(err);
  }
}

/** The detail beside the table (above it below 1440 px): open one finding, close it. */
function detailPane(page: FindingsPage, tableBox: HTMLElement, syncUrl: () => void) {
  const box = h("aside", {
    class: "panel detail",
    id: "finding-detail",
    "aria-label": "Finding detail",
    tabindex: "-1",
  });
  const show = (on: boolean) => {
    const split = box.parentElement!;
    split.className = on ? "grid table-detail" : "grid one-col";
    box.hidden = !on;
  };
  const markSelected = () => {
    for (const tr of tableBox.querySelectorAll("tr[data-id]"))
      tr.classList.toggle("selected", (tr as HTMLElement).dataset.id === String(page.selectedId));
  };
  const close = () => {
    page.selectedId = null;
    box.replaceChildren();
    show(false);
    syncUrl();
    for (const tr of tableBox.querySelectorAll("tr.selected")) tr.classList.remove("selected");
  };
  const open = async (id: number) => {
    page.selectedId = id;
    syncUrl();
    markSelected();
    try {
      const f = await get<FindingDetail>(`/findings/${id}`);
      if (page.ctx.left()) return;
      mount(box, ...findingDetail(f, close));
      show(true);
      // The reader (and the keyboard) goes on in the detail; below 1440 px it sits above the table.
      box.focus({ preventScroll: true });
      const top = box.getBoundingClientRect().top;
      if (top < 0 || top > window.innerHeight / 2) box.scrollIntoView({ block: "start" });
    } catch (err) {
      fail(err);
    }
  };
  return { element: box, show, open };
}

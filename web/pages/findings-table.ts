/**
 * The Findings table: sortable headers, a row per finding (Enter or a click opens its detail), the
 * empty states and the pager. Newest first is the server's order; any other sort reads the newest
 * SORT_WINDOW matching findings and sorts and pages them here.
 */
import {
  ago,
  badge,
  breakable,
  connectHint,
  empty,
  h,
  mount,
  num,
  pagerControls,
  shortPreview,
  turnPage,
  when,
} from "../dom.ts";
import { proxyUrl } from "../state.ts";
import { actionSourceLabel, type Finding } from "../types.ts";
import type { FindingsPage } from "./findings.ts";

export type SortKey =
  | "ts"
  | "severity"
  | "finding_type"
  | "rule"
  | "action"
  | "provider"
  | "client"
  | "seen_count";
/** How many findings a non-default sort covers (the API's largest page). */
export const SORT_WINDOW = 500;
const PAGE_SIZES = [25, 50, 100, 200];
const SEV_RANK: Record<string, number> = { critical: 4, high: 3, warning: 2, info: 1 };

/** True when the table is sorted here rather than by the server (newest first). */
export const clientSorted = (page: FindingsPage) => !(page.sort === "ts" && page.dir === "desc");

export function findingsTable(page: FindingsPage) {
  const element = h("div");
  const pager = h("div", { class: "pager" });
  const totalLabel = h("span", { class: "muted", id: "findings-total" });
  const sortNote = h("span", { class: "muted", id: "sort-note" });
  const render = () => {
    const { total, limit, offset } = page;
    totalLabel.textContent = `${num(total)} findings`;
    sortNote.textContent =
      clientSorted(page) && total > SORT_WINDOW
        ? `Sorted within the ${SORT_WINDOW} newest matching findings.`
        : "";
    mount(element, page.rows.length === 0 ? emptyState(page) : table(page));
    const pages = Math.max(1, Math.ceil(total / limit));
    mount(
      pager,
      ...pagerControls(page, `Page ${Math.floor(offset / limit) + 1} of ${pages}`, turnPage(page), {
        id: "page-size",
        sizes: PAGE_SIZES,
      }),
    );
  };
  return { element, pager, totalLabel, sortNote, render };
}

function emptyState(page: FindingsPage): HTMLElement {
  return h(
    "div",
    { class: "panel" },
    page.filter.any()
      ? empty("No finding matches this filter.", h("p", null, "Clear a filter or widen the period."))
      : empty("No findings yet", connectHint(proxyUrl())),
  );
}

function table(page: FindingsPage): HTMLElement {
  const th = (label: string, key: SortKey, cls?: string) => sortHeader(page, label, key, cls);
  const shown = clientSorted(page) ? sorted(page).slice(page.offset, page.offset + page.limit) : page.rows;
  return h(
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
        shown.map((f) => findingRow(page, f)),
      ),
    ),
  );
}

function sorted(page: FindingsPage): Finding[] {
  const k = page.sort;
  const m = page.dir === "asc" ? 1 : -1;
  return [...page.rows].sort((a, b) => {
    const va = k === "severity" ? (SEV_RANK[a.severity] ?? 0) : (a[k] as string | number);
    const vb = k === "severity" ? (SEV_RANK[b.severity] ?? 0) : (b[k] as string | number);
    return (va > vb ? 1 : va < vb ? -1 : 0) * m;
  });
}

/** A column header that sorts by `key`; again, the other way. Time, severity and counts start highest first. */
function sortHeader(page: FindingsPage, label: string, key: SortKey, cls?: string): HTMLElement {
  const current = page.sort === key;
  return h(
    "th",
    {
      class: cls,
      "aria-sort": current ? (page.dir === "asc" ? "ascending" : "descending") : "none",
      scope: "col",
    },
    h(
      "button",
      {
        class: "sort",
        type: "button",
        onclick: () => {
          if (current) page.dir = page.dir === "asc" ? "desc" : "asc";
          else {
            page.sort = key;
            page.dir = key === "ts" || key === "severity" || key === "seen_count" ? "desc" : "asc";
          }
          page.offset = 0;
          void page.load();
        },
      },
      label,
      current ? (page.dir === "asc" ? " ▲" : " ▼") : "",
    ),
  );
}

function findingRow(page: FindingsPage, f: Finding): HTMLElement {
  return h(
    "tr",
    {
      class: `clickable${f.id === page.selectedId ? " selected" : ""}`,
      tabindex: "0",
      dataset: { id: String(f.id) },
      "aria-label": `${f.severity} ${f.finding_type} ${f.preview}, open details`,
      onclick: () => void page.openDetail(f.id),
      onkeydown: (e: Event) => {
        const k = (e as KeyboardEvent).key;
        if (k === "Enter" || k === " ") {
          e.preventDefault();
          void page.openDetail(f.id);
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
      f.action_source ? h("div", { class: "muted" }, actionSourceLabel(f.action_source, f.detector)) : null,
    ),
    h("td", null, f.provider),
    h("td", null, f.client),
    h("td", { class: "num" }, num(f.seen_count)),
  );
}

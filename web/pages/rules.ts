/**
 * Rules: search (comma = OR), filters, inline enable/action/severity, bulk update, clone, delete,
 * custom rule creation with a live pattern test, and rule statistics.
 *
 * The parts share one `RulesPage` (the filter, the page shown, the selected rules) and each lives in
 * its own module: the statistics (rules-stats.ts), the table with its inline edits and pager
 * (rules-table.ts), the selection's bulk bar (rules-bulk.ts) and the rule form (rule-editor.ts).
 */
import { get } from "../api.ts";
import { anyOf, h, mount, pageHead } from "../dom.ts";
import { fail } from "../feedback.ts";
import { Filter, type FilterSpec, filterForm } from "../filters.ts";
import { type PageCtx, replaceParams } from "../state.ts";
import { DETECTORS, type List, type Rule, SEVERITIES } from "../types.ts";
import { type RuleEditor, ruleEditor } from "./rule-editor.ts";
import { bulkBar } from "./rules-bulk.ts";
import { rulesStats } from "./rules-stats.ts";
import { rulesTable } from "./rules-table.ts";

export type RuleFilterKey = "q" | "detector" | "tier" | "severity" | "enabled" | "tag" | "source";

const FILTERS: FilterSpec<RuleFilterKey>[] = [
  {
    key: "q",
    label: "Search name or description (comma = OR)",
    search: true,
    live: true,
    placeholder: "aws, token, email",
    id: "rule-search",
  },
  { key: "detector", label: "Detector", options: anyOf(DETECTORS) },
  { key: "tier", label: "Tier", options: anyOf(["community", "custom"]) },
  { key: "severity", label: "Severity", options: anyOf(SEVERITIES) },
  {
    key: "enabled",
    label: "Status",
    options: [
      ["", "any"],
      ["true", "enabled"],
      ["false", "disabled"],
    ],
  },
  { key: "tag", label: "Tag", placeholder: "exact tag" },
  {
    key: "source",
    label: "Source",
    options: [
      ["", "any"],
      ["builtin", "builtin"],
      ["config", "config (YAML)"],
      ["dashboard", "dashboard"],
      ["import", "import"],
    ],
  },
];
const DEFAULT_LIMIT = 50;

/** The Rules page's state, shared by its parts. */
export interface RulesPage {
  ctx: PageCtx;
  filter: Filter<RuleFilterKey>;
  offset: number;
  limit: number;
  /** The rules of the page shown, and how many match the filter. */
  rules: Rule[];
  total: number;
  selected: Set<string>;
  editor: RuleEditor;
  /** Filter by one more value (a chip, a tag, a saved rule's name), from the first page. */
  setFilter(key: RuleFilterKey, value: string): void;
  /** Fetch the page of rules and draw the table. */
  load(): Promise<void>;
  /** Re-read the statistics (counts change with every edit). */
  loadStats(): Promise<void>;
  /** Draw the table and the bulk bar again (the selection changed). */
  render(): void;
}

export async function rulesPage(ctx: PageCtx) {
  const page: RulesPage = {
    ctx,
    filter: new Filter(FILTERS, ctx.params, "rule-filter-", (k, v) => page.setFilter(k, v)),
    offset: Number(ctx.params.get("offset")) || 0,
    limit: Number(ctx.params.get("limit")) || DEFAULT_LIMIT,
    rules: [],
    total: 0,
    selected: new Set(),
    editor: ruleEditor((name) => page.setFilter("q", name)),
    setFilter(k, v) {
      page.filter.set(k, v);
      page.offset = 0;
      page.selected.clear();
      void page.load();
      void page.loadStats();
    },
    load: () => loadRules(page),
    loadStats: () => stats.load(),
    render: () => table.render(),
  };
  const stats = rulesStats(page);
  const table = rulesTable(page, bulkBar(page));
  const { q } = page.filter.controls;
  q.style.maxWidth = "none";
  q.style.width = "100%";
  mount(
    ctx.root,
    pageHead("Rules", table.totalLabel, h("span", { class: "spacer" }), newRuleLink(page.editor)),
    stats.element,
    filterForm(
      "Filter rules",
      h("div", { style: "flex: 1 1 260px" }, page.filter.field("q")),
      page.filter.fields(FILTERS.slice(1).map((f) => f.key)),
    ),
    table.bulk.element,
    table.element,
    table.pager,
    page.editor.element,
  );
  await Promise.all([page.load(), page.loadStats()]);
}

async function loadRules(page: RulesPage) {
  const { filter, offset, limit } = page;
  replaceParams("rules", {
    ...filter.query(),
    offset: offset || null,
    limit: limit === DEFAULT_LIMIT ? null : limit,
  });
  try {
    const res = await get<List & { rules: Rule[] }>("/rules", { ...filter.query(), limit, offset });
    if (page.ctx.left()) return;
    page.rules = res.rules;
    page.total = res.total;
    page.render();
  } catch (err) {
    fail(err);
  }
}

/** "New custom rule": to the empty rule form below the table. */
function newRuleLink(editor: RuleEditor): HTMLElement {
  return h(
    "a",
    {
      class: "btn",
      href: "#/rules",
      onclick: (e: Event) => {
        e.preventDefault();
        editor.focus();
      },
    },
    "New custom rule",
  );
}

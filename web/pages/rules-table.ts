/**
 * The Rules page's table: a row per rule with its inline edits (severity, action, enabled, each saved
 * on change and put back when the save fails), its row actions (test, clone, edit, delete), the
 * selection's checkboxes and the pager.
 */
import { del, post, put } from "../api.ts";
import { dataTable, h, mount, num, pagerControls, select, turnPage } from "../dom.ts";
import { attempt, confirmDialog, fail, toast } from "../feedback.ts";
import { RULE_ACTIONS, type Rule, SEVERITIES } from "../types.ts";
import type { RulesPage } from "./rules.ts";
import type { BulkBar } from "./rules-bulk.ts";

const PAGE_SIZES = [25, 50, 100, 200];

export function rulesTable(page: RulesPage, bulk: BulkBar) {
  const element = h("div");
  const pager = h("div", { class: "pager" });
  const totalLabel = h("span", { class: "muted", id: "rules-total" });
  const render = () => {
    const { rules, selected, offset, limit, total } = page;
    totalLabel.textContent = `${num(total)} rules`;
    bulk.render();
    const selectAll = h("input", {
      type: "checkbox",
      "aria-label": "Select all rules on this page",
      checked: rules.length > 0 && rules.every((r) => selected.has(r.name)),
      onchange: (e: Event) => {
        const on = (e.target as HTMLInputElement).checked;
        for (const r of rules) on ? selected.add(r.name) : selected.delete(r.name);
        render();
      },
    });
    mount(
      element,
      rules.length === 0
        ? h("div", { class: "panel" }, h("p", { class: "muted" }, "No rule matches this filter."))
        : dataTable(
            { id: "rules-table" },
            [
              h("th", { scope: "col" }, selectAll),
              ["Rule", "Severity", "Action", "Enabled"].map((t) => h("th", { scope: "col" }, t)),
              h("th", { scope: "col", class: "num" }, "Hits"),
              h("th", { scope: "col" }, h("span", { class: "sr-only" }, "Row actions")),
            ],
            rules.map((r) => ruleRow(page, bulk, r)),
          ),
    );
    mount(
      pager,
      ...pagerControls(
        page,
        `${offset + 1}–${Math.min(total, offset + limit)} of ${num(total)}`,
        turnPage(page),
        { id: "rules-page-size", sizes: PAGE_SIZES },
      ),
    );
  };
  return { element, pager, totalLabel, bulk, render };
}

function ruleRow(page: RulesPage, bulk: BulkBar, r: Rule): HTMLElement {
  return h(
    "tr",
    { dataset: { rule: r.name } },
    h(
      "td",
      null,
      h("input", {
        type: "checkbox",
        "aria-label": `Select ${r.name}`,
        checked: page.selected.has(r.name),
        onchange: (e: Event) => {
          (e.target as HTMLInputElement).checked ? page.selected.add(r.name) : page.selected.delete(r.name);
          bulk.render();
        },
      }),
    ),
    ruleCell(page, r),
    inlineEdits(page, r).map((control) => h("td", null, control)),
    h("td", { class: "num" }, num(r.hit_count)),
    h("td", null, h("div", { class: "row", style: "flex-wrap:nowrap" }, rowActions(page, r))),
  );
}

/** The rule's name, description, where it comes from, and its tags (each filters by itself). */
function ruleCell(page: RulesPage, r: Rule): HTMLElement {
  return h(
    "td",
    { class: "wrap rule-cell" },
    h("div", { class: "mono rule-name" }, r.name),
    r.description ? h("div", { class: "muted rule-desc" }, r.description) : null,
    h(
      "div",
      { class: "rule-meta" },
      h("span", { class: "muted" }, `${r.detector} · ${r.tier} · ${r.source}`),
      (r.tags ?? []).map((t) =>
        h(
          "button",
          {
            class: "tag",
            type: "button",
            "aria-label": `Filter by tag ${t}`,
            onclick: () => page.setFilter("tag", t),
          },
          `#${t}`,
        ),
      ),
    ),
  );
}

/** Severity, action and enabled, each saved as soon as it changes. */
function inlineEdits(page: RulesPage, r: Rule): HTMLElement[] {
  const label = (what: string) => `${what} of ${r.name}`;
  const sev = select("severity", SEVERITIES, r.severity, { "aria-label": label("Severity") });
  sev.addEventListener("change", () => {
    const old = r.severity;
    void saveRule(page, r, { severity: sev.value as Rule["severity"] }, () => (sev.value = old));
  });
  const act = select("action", RULE_ACTIONS, r.action, { "aria-label": label("Action") });
  act.addEventListener("change", () => {
    const old = r.action;
    void saveRule(page, r, { action: act.value as Rule["action"] }, () => (act.value = old));
  });
  const en = h("input", { type: "checkbox", checked: r.enabled, "aria-label": `Enable ${r.name}` });
  en.addEventListener("change", () => {
    void saveRule(page, r, { enabled: en.checked }, () => (en.checked = !en.checked));
  });
  return [sev, act, en];
}

async function saveRule(page: RulesPage, r: Rule, update: Partial<Rule>, revert: () => void) {
  try {
    const updated = await put<Rule>(`/rules/${encodeURIComponent(r.name)}`, update);
    Object.assign(r, updated);
    toast(`Saved ${r.name}.`);
    void page.loadStats();
  } catch (err) {
    revert();
    fail(err);
  }
}

/** Test and Clone for every rule; Edit and Delete for the rules made on the dashboard. */
function rowActions(page: RulesPage, r: Rule): HTMLElement[] {
  const action = (label: string, onclick: () => void, cls = "btn small") =>
    h("button", { class: cls, type: "button", "aria-label": `${label} ${r.name}`, onclick }, label);
  const path = `/rules/${encodeURIComponent(r.name)}`;
  const clone = () =>
    attempt(async () => {
      const c = await post<Rule>(`${path}/clone`, {});
      toast(`Cloned to ${c.name}.`);
      page.setFilter("q", c.name);
    });
  const remove = async () => {
    const ok = await confirmDialog(
      `Delete rule ${r.name}?`,
      "This removes the rule from the store.",
      "Delete",
      true,
    );
    if (!ok) return;
    await attempt(async () => {
      await del(path);
      toast(`Deleted ${r.name}.`);
      await page.load();
      void page.loadStats();
    });
  };
  const fromDashboard = r.source === "dashboard";
  return [
    action("Test", () => page.editor.load(r, false)),
    action("Clone", () => void clone()),
    fromDashboard ? action("Edit", () => page.editor.load(r, true)) : null,
    fromDashboard ? action("Delete", () => void remove(), "btn small danger") : null,
  ].filter((b): b is HTMLButtonElement => b !== null);
}

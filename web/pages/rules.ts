/**
 * Rules: search (comma = OR), filters, inline enable/action/severity, bulk update, clone, delete,
 * custom rule creation with a live pattern test, and rule statistics.
 *
 * Longer than most pages (and `rulesPage` longer than most functions): the filters, the table's
 * inline edits, the selection with its bulk bar and the statistics share the page's state (the
 * current filter and page, the selected rules); the rule editor is its own module.
 */
import { del, get, post, put } from "../api.ts";
import { anyOf, dataTable, debounce, field, h, mount, num, pageButtons, select } from "../dom.ts";
import { confirmDialog, fail, toast } from "../feedback.ts";
import { type PageCtx, replaceParams } from "../state.ts";
import { DETECTORS, type List, RULE_ACTIONS, type Rule, type RuleStats, SEVERITIES } from "../types.ts";
import { ruleEditor } from "./rule-editor.ts";

const FILTERS = ["q", "detector", "tier", "severity", "enabled", "tag", "source"] as const;
type FilterKey = (typeof FILTERS)[number];

export async function rulesPage(ctx: PageCtx) {
  const filter = Object.fromEntries(FILTERS.map((k) => [k, ctx.params.get(k) ?? ""])) as Record<
    FilterKey,
    string
  >;
  let offset = Number(ctx.params.get("offset")) || 0;
  let limit = Number(ctx.params.get("limit")) || 50;
  let rules: Rule[] = [];
  let total = 0;
  const selected = new Set<string>();

  const statsBox = h("section", {
    class: "panel",
    "aria-labelledby": "rstats-title",
    style: "margin-bottom:14px",
  });
  const tableBox = h("div");
  const pager = h("div", { class: "pager" });
  const bulkBar = h("div", { class: "panel row", id: "bulk-bar", style: "margin-bottom:10px" });
  const totalLabel = h("span", { class: "muted", id: "rules-total" });

  const query = () => {
    const q: Record<string, string> = {};
    for (const k of FILTERS) if (filter[k]) q[k] = filter[k];
    return q;
  };

  const loadStats = async () => {
    try {
      const st = await get<RuleStats>("/rules/stats");
      if (ctx.left()) return;
      const chips = (obj: Record<string, number>, key: FilterKey) =>
        Object.entries(obj ?? {}).map(([k, v]) =>
          h(
            "button",
            {
              class: "btn small",
              type: "button",
              "aria-pressed": filter[key] === k ? "true" : "false",
              onclick: () => setFilter(key, filter[key] === k ? "" : k),
            },
            `${k} ${num(v)}`,
          ),
        );
      mount(
        statsBox,
        h("h2", { id: "rstats-title" }, "Rule statistics"),
        h(
          "div",
          { class: "grid cols-4", style: "margin:0" },
          h(
            "div",
            null,
            h("div", { class: "card-label muted" }, "Rules"),
            h("div", { class: "card-value", style: "font-size:22px;font-weight:700" }, num(st.total)),
            h("div", { class: "muted" }, `${num(st.enabled)} enabled · ${num(st.disabled)} disabled`),
          ),
          h(
            "div",
            null,
            h("div", { class: "muted" }, "By tier"),
            h("div", { class: "row" }, chips(st.by_tier, "tier")),
          ),
          h(
            "div",
            null,
            h("div", { class: "muted" }, "By detector"),
            h("div", { class: "row" }, chips(st.by_detector, "detector")),
          ),
          h(
            "div",
            null,
            h("div", { class: "muted" }, "By severity"),
            h("div", { class: "row" }, chips(st.by_severity, "severity")),
          ),
        ),
        st.tags?.length
          ? h(
              "div",
              { class: "row", style: "margin-top:10px" },
              h("span", { class: "muted" }, "Tags:"),
              chips(Object.fromEntries(st.tags.slice(0, 30).map((t) => [t.tag, t.count])), "tag"),
            )
          : null,
      );
    } catch (err) {
      fail(err);
    }
  };

  const load = async () => {
    replaceParams("rules", { ...query(), offset: offset || null, limit: limit === 50 ? null : limit });
    try {
      const res = await get<List & { rules: Rule[] }>("/rules", { ...query(), limit, offset });
      if (ctx.left()) return;
      rules = res.rules;
      total = res.total;
      renderTable();
    } catch (err) {
      fail(err);
    }
  };

  const controls: Record<FilterKey, HTMLInputElement | HTMLSelectElement> = {
    q: h("input", {
      type: "search",
      name: "q",
      value: filter.q,
      placeholder: "aws, token, email",
      id: "rule-search",
    }),
    detector: select("detector", anyOf(DETECTORS), filter.detector),
    tier: select(
      "tier",
      [
        ["", "any"],
        ["community", "community"],
        ["custom", "custom"],
      ],
      filter.tier,
    ),
    severity: select("severity", anyOf(SEVERITIES), filter.severity),
    enabled: select(
      "enabled",
      [
        ["", "any"],
        ["true", "enabled"],
        ["false", "disabled"],
      ],
      filter.enabled,
    ),
    tag: h("input", { type: "text", name: "tag", value: filter.tag, placeholder: "exact tag" }),
    source: select(
      "source",
      [
        ["", "any"],
        ["builtin", "builtin"],
        ["config", "config (YAML)"],
        ["dashboard", "dashboard"],
        ["import", "import"],
      ],
      filter.source,
    ),
  };
  const labels: Record<FilterKey, string> = {
    q: "Search name or description (comma = OR)",
    detector: "Detector",
    tier: "Tier",
    severity: "Severity",
    enabled: "Status",
    tag: "Tag",
    source: "Source",
  };
  function setFilter(k: FilterKey, v: string) {
    filter[k] = v;
    controls[k].value = v;
    offset = 0;
    selected.clear();
    void load();
    void loadStats();
  }
  const searchNow = debounce(() => setFilter("q", controls.q.value.trim()), 250);
  for (const k of FILTERS) {
    controls[k].id ||= `rule-filter-${k}`;
    if (k === "q") controls[k].addEventListener("input", searchNow);
    else controls[k].addEventListener("change", () => setFilter(k, controls[k].value.trim()));
  }

  const saveRule = async (r: Rule, update: Partial<Rule>, revert: () => void) => {
    try {
      const updated = await put<Rule>(`/rules/${encodeURIComponent(r.name)}`, update);
      Object.assign(r, updated);
      toast(`Saved ${r.name}.`);
      void loadStats();
    } catch (err) {
      revert();
      fail(err);
    }
  };

  const renderBulk = () => {
    const n = selected.size;
    const actionSel = select("bulk-action", [["-", "set action…"], ...RULE_ACTIONS], "-", {
      id: "bulk-action",
    });
    const sevSel = select(
      "bulk-severity",
      [["-", "set severity…"], ...SEVERITIES.map((s) => [s, s] as [string, string])],
      "-",
      { id: "bulk-severity" },
    );
    const apply = async (update: Record<string, unknown>) => {
      try {
        const res = await post<{
          updated: number;
          failed: Array<{ name: string; reason: string }>;
          message: string;
        }>("/rules/bulk-update", { names: [...selected], update });
        toast(res.message || `Updated ${res.updated} rules.`, res.failed.length ? "error" : "ok");
        selected.clear();
        await load();
        void loadStats();
      } catch (err) {
        fail(err);
      }
    };
    mount(
      bulkBar,
      h("strong", { id: "bulk-count" }, `${n} selected`),
      h(
        "button",
        { class: "btn", type: "button", disabled: !n, onclick: () => apply({ enabled: true }) },
        "Enable",
      ),
      h(
        "button",
        { class: "btn", type: "button", disabled: !n, onclick: () => apply({ enabled: false }) },
        "Disable",
      ),
      h("label", { class: "sr-only", for: "bulk-action" }, "Set action for selected rules"),
      actionSel,
      h("label", { class: "sr-only", for: "bulk-severity" }, "Set severity for selected rules"),
      sevSel,
      h(
        "button",
        {
          class: "btn primary",
          type: "button",
          id: "bulk-apply",
          disabled: !n,
          onclick: () => {
            const update: Record<string, unknown> = {};
            if (actionSel.value !== "-") update.action = actionSel.value;
            if (sevSel.value !== "-") update.severity = sevSel.value;
            if (Object.keys(update).length === 0)
              return toast("Choose an action or a severity first.", "info");
            void apply(update);
          },
        },
        "Apply to selected",
      ),
      n
        ? h(
            "button",
            {
              class: "btn ghost",
              type: "button",
              onclick: () => {
                selected.clear();
                renderTable();
              },
            },
            "Clear selection",
          )
        : null,
    );
  };

  const renderTable = () => {
    totalLabel.textContent = `${num(total)} rules`;
    renderBulk();
    const allOnPage = rules.length > 0 && rules.every((r) => selected.has(r.name));
    const selectAll = h("input", {
      type: "checkbox",
      "aria-label": "Select all rules on this page",
      checked: allOnPage,
      onchange: (e: Event) => {
        const on = (e.target as HTMLInputElement).checked;
        for (const r of rules) on ? selected.add(r.name) : selected.delete(r.name);
        renderTable();
      },
    });
    mount(
      tableBox,
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
            rules.map(ruleRow),
          ),
    );
    mount(
      pager,
      field(
        "Rows per page",
        select("limit", ["25", "50", "100", "200"], String(limit), {
          id: "rules-page-size",
          onchange: (e: Event) => {
            limit = Number((e.target as HTMLSelectElement).value);
            offset = 0;
            void load();
          },
        }),
      ),
      h("span", { class: "muted" }, `${offset + 1}–${Math.min(total, offset + limit)} of ${num(total)}`),
      ...pageButtons(offset, limit, total, (o) => {
        offset = o;
        void load();
      }),
    );
  };

  const ruleRow = (r: Rule) => {
    const label = (what: string) => `${what} of ${r.name}`;
    const sev = select("severity", SEVERITIES, r.severity, { "aria-label": label("Severity") });
    sev.addEventListener("change", () => {
      const old = r.severity;
      void saveRule(r, { severity: sev.value as Rule["severity"] }, () => (sev.value = old));
    });
    const act = select("action", RULE_ACTIONS, r.action, { "aria-label": label("Action") });
    act.addEventListener("change", () => {
      const old = r.action;
      void saveRule(r, { action: act.value as Rule["action"] }, () => (act.value = old));
    });
    const en = h("input", { type: "checkbox", checked: r.enabled, "aria-label": `Enable ${r.name}` });
    en.addEventListener("change", () => {
      void saveRule(r, { enabled: en.checked }, () => (en.checked = !en.checked));
    });
    return h(
      "tr",
      { dataset: { rule: r.name } },
      h(
        "td",
        null,
        h("input", {
          type: "checkbox",
          "aria-label": `Select ${r.name}`,
          checked: selected.has(r.name),
          onchange: (e: Event) => {
            (e.target as HTMLInputElement).checked ? selected.add(r.name) : selected.delete(r.name);
            renderBulk();
          },
        }),
      ),
      h(
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
                onclick: () => setFilter("tag", t),
              },
              `#${t}`,
            ),
          ),
        ),
      ),
      h("td", null, sev),
      h("td", null, act),
      h("td", null, en),
      h("td", { class: "num" }, num(r.hit_count)),
      h(
        "td",
        null,
        h(
          "div",
          { class: "row", style: "flex-wrap:nowrap" },
          h(
            "button",
            {
              class: "btn small",
              type: "button",
              "aria-label": `Test ${r.name}`,
              onclick: () => editor.load(r, false),
            },
            "Test",
          ),
          h(
            "button",
            {
              class: "btn small",
              type: "button",
              "aria-label": `Clone ${r.name}`,
              onclick: async () => {
                try {
                  const c = await post<Rule>(`/rules/${encodeURIComponent(r.name)}/clone`, {});
                  toast(`Cloned to ${c.name}.`);
                  setFilter("q", c.name);
                } catch (err) {
                  fail(err);
                }
              },
            },
            "Clone",
          ),
          r.source === "dashboard"
            ? h(
                "button",
                {
                  class: "btn small",
                  type: "button",
                  "aria-label": `Edit ${r.name}`,
                  onclick: () => editor.load(r, true),
                },
                "Edit",
              )
            : null,
          r.source === "dashboard"
            ? h(
                "button",
                {
                  class: "btn small danger",
                  type: "button",
                  "aria-label": `Delete ${r.name}`,
                  onclick: async () => {
                    if (
                      !(await confirmDialog(
                        `Delete rule ${r.name}?`,
                        "This removes the rule from the store.",
                        "Delete",
                        true,
                      ))
                    )
                      return;
                    try {
                      await del(`/rules/${encodeURIComponent(r.name)}`);
                      toast(`Deleted ${r.name}.`);
                      await load();
                      void loadStats();
                    } catch (err) {
                      fail(err);
                    }
                  },
                },
                "Delete",
              )
            : null,
        ),
      ),
    );
  };

  const editor = ruleEditor((name) => setFilter("q", name));

  mount(
    ctx.root,
    h(
      "div",
      { class: "page-head" },
      h("h1", null, "Rules"),
      totalLabel,
      h("span", { class: "spacer" }),
      h(
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
      ),
    ),
    statsBox,
    h(
      "form",
      {
        class: "filters",
        role: "search",
        "aria-label": "Filter rules",
        onsubmit: (e: Event) => e.preventDefault(),
      },
      h("div", { style: "flex: 1 1 260px" }, field(labels.q, controls.q)),
      FILTERS.filter((k) => k !== "q").map((k) => field(labels[k], controls[k])),
    ),
    bulkBar,
    tableBox,
    pager,
    editor.element,
  );
  controls.q.style.maxWidth = "none";
  controls.q.style.width = "100%";
  await Promise.all([load(), loadStats()]);
}

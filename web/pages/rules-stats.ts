/** The Rules page's statistics: counts by tier, detector, severity and tag, each a chip that filters. */
import { get } from "../api.ts";
import { type Child, chip, h, mount, num } from "../dom.ts";
import { fail } from "../feedback.ts";
import type { RuleStats } from "../types.ts";
import type { RuleFilterKey, RulesPage } from "./rules.ts";

export function rulesStats(page: RulesPage): { element: HTMLElement; load(): Promise<void> } {
  const element = h("section", {
    class: "panel",
    "aria-labelledby": "rstats-title",
    style: "margin-bottom:14px",
  });
  const load = async () => {
    try {
      const st = await get<RuleStats>("/rules/stats");
      if (page.ctx.left()) return;
      mount(element, ...statsContent(page, st));
    } catch (err) {
      fail(err);
    }
  };
  return { element, load };
}

function statsContent(page: RulesPage, st: RuleStats): Child[] {
  const { values } = page.filter;
  /** A chip per value with its count: pressing the pressed one lifts the filter. */
  const chips = (counts: Record<string, number>, key: RuleFilterKey) =>
    Object.entries(counts ?? {}).map(([k, v]) =>
      chip(`${k} ${num(v)}`, values[key] === k, () => page.setFilter(key, values[key] === k ? "" : k)),
    );
  const group = (title: string, counts: Record<string, number>, key: RuleFilterKey) =>
    h("div", null, h("div", { class: "muted" }, title), h("div", { class: "row" }, chips(counts, key)));
  return [
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
      group("By tier", st.by_tier, "tier"),
      group("By detector", st.by_detector, "detector"),
      group("By severity", st.by_severity, "severity"),
    ),
    st.tags?.length
      ? h(
          "div",
          { class: "row", style: "margin-top:10px" },
          h("span", { class: "muted" }, "Tags:"),
          chips(Object.fromEntries(st.tags.slice(0, 30).map((t) => [t.tag, t.count])), "tag"),
        )
      : null,
  ];
}

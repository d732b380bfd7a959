/** The Rules page's bulk bar: enable, disable, or set the action or severity of the selected rules. */
import { post } from "../api.ts";
import { h, mount, select } from "../dom.ts";
import { fail, toast } from "../feedback.ts";
import { RULE_ACTIONS, SEVERITIES } from "../types.ts";
import type { RulesPage } from "./rules.ts";

export interface BulkBar {
  element: HTMLElement;
  /** Draw it for the current selection. */
  render(): void;
}

interface BulkAnswer {
  updated: number;
  failed: Array<{ name: string; reason: string }>;
  message: string;
}

export function bulkBar(page: RulesPage): BulkBar {
  const element = h("div", { class: "panel row", id: "bulk-bar", style: "margin-bottom:10px" });
  const apply = async (update: Record<string, unknown>) => {
    try {
      const res = await post<BulkAnswer>("/rules/bulk-update", { names: [...page.selected], update });
      toast(res.message || `Updated ${res.updated} rules.`, res.failed.length ? "error" : "ok");
      page.selected.clear();
      await page.load();
      void page.loadStats();
    } catch (err) {
      fail(err);
    }
  };
  const render = () => {
    const n = page.selected.size;
    const actionSel = select("bulk-action", [["-", "set action…"], ...RULE_ACTIONS], "-", {
      id: "bulk-action",
    });
    const sevSel = select(
      "bulk-severity",
      [["-", "set severity…"], ...SEVERITIES.map((s) => [s, s] as [string, string])],
      "-",
      { id: "bulk-severity" },
    );
    const applyChosen = () => {
      const update: Record<string, unknown> = {};
      if (actionSel.value !== "-") update.action = actionSel.value;
      if (sevSel.value !== "-") update.severity = sevSel.value;
      if (Object.keys(update).length === 0) return toast("Choose an action or a severity first.", "info");
      void apply(update);
    };
    const button = (label: string, onclick: () => void, props = {}) =>
      h("button", { class: "btn", type: "button", disabled: !n, ...props, onclick }, label);
    mount(
      element,
      h("strong", { id: "bulk-count" }, `${n} selected`),
      button("Enable", () => apply({ enabled: true })),
      button("Disable", () => apply({ enabled: false })),
      h("label", { class: "sr-only", for: "bulk-action" }, "Set action for selected rules"),
      actionSel,
      h("label", { class: "sr-only", for: "bulk-severity" }, "Set severity for selected rules"),
      sevSel,
      button("Apply to selected", applyChosen, { class: "btn primary", id: "bulk-apply" }),
      n
        ? h(
            "button",
            {
              class: "btn ghost",
              type: "button",
              onclick: () => {
                page.selected.clear();
                page.render();
              },
            },
            "Clear selection",
          )
        : null,
    );
  };
  return { element, render };
}

/**
 * The Overview's "What sluice stopped": requests blocked, redacted and alerted today and this week
 * (`/stats` `request_actions`), and per tool and per project for the period chosen. Each count
 * links to the audit entries it counts.
 */
import { breakable, choiceChips, dataTable, h, mount, num } from "../dom.ts";
import type { ActionCounts, ActionWindow, RequestActions } from "../types.ts";

type Period = "today" | "week";

const ACTIONS = [
  ["block", "Blocked"],
  ["redact", "Redacted"],
  ["alert", "Alerted"],
] as const;

const PERIODS: Record<Period, { label: string; words: string; days: number }> = {
  today: { label: "Today", words: "today", days: 1 },
  week: { label: "This week", words: "this week", days: 7 },
};

export interface StoppedPanel {
  el: HTMLElement;
  /** Show newer counts (after live traffic). */
  update(actions: RequestActions): void;
}

export function stoppedPanel(initial: RequestActions): StoppedPanel {
  let actions = initial;
  let period: Period = "today";
  const cards = h("div", { class: "grid cols-3 stopped-cards" });
  const tables = h("div", { class: "grid cols-2" });
  const render = () => {
    mount(cards, actionCards(actions));
    mount(tables, windowTables(actions[period], period));
  };
  const periodButtons = choiceChips(
    Object.keys(PERIODS) as Period[],
    period,
    "period",
    (p) => PERIODS[p].label,
    (p) => {
      period = p;
      render();
    },
  );
  render();
  const el = h(
    "section",
    { class: "panel stopped", id: "stopped", "aria-labelledby": "stopped-title" },
    h(
      "div",
      { class: "row", style: "justify-content:space-between" },
      h("h2", { id: "stopped-title" }, "What sluice stopped"),
      h(
        "div",
        { class: "seg-group", role: "group", "aria-label": "Period of the tool and project tables" },
        periodButtons,
      ),
    ),
    cards,
    h(
      "p",
      { class: "muted stopped-note" },
      "Requests by the action sluice took: a request with several findings counts once. Today and this week start at midnight UTC.",
    ),
    tables,
  );
  return {
    el,
    update(next) {
      actions = next;
      render();
    },
  };
}

/** A card per action with its counts today and this week, each a link to the audit entries it counts. */
function actionCards(actions: RequestActions): HTMLElement[] {
  return ACTIONS.map(([action, label]) =>
    h(
      "div",
      { class: "card stopped-card", id: `stopped-${action}` },
      h("div", { class: "card-label" }, label),
      (["today", "week"] as const).map((p) => {
        const n = actions[p][action];
        return h(
          "a",
          {
            class: `stopped-count stopped-${p}`,
            href: `#/audit?action=${action}&days=${PERIODS[p].days}`,
            "aria-label": `${label}: ${num(n)} ${PERIODS[p].words}`,
          },
          h("strong", { class: "count" }, num(n)),
          ` ${PERIODS[p].words}`,
        );
      }),
    ),
  );
}

/** The period's counts per tool (each a link to its audit entries) and per project. */
function windowTables(w: ActionWindow, period: Period): HTMLElement[] {
  const words = PERIODS[period].words;
  return [
    breakdownTable("stopped-by-tool", `By tool, ${words}`, "Tool", w.by_client, (r) =>
      h(
        "a",
        { href: `#/audit?client=${encodeURIComponent(r.client)}&days=${PERIODS[period].days}` },
        r.client || "unknown",
      ),
    ),
    breakdownTable("stopped-by-project", `By project, ${words}`, "Project", w.by_project, (r) =>
      r.project === null
        ? h("span", { class: "muted" }, "not named")
        : h("span", { class: "mono" }, breakable(r.project)),
    ),
  ];
}

/** One table of a window's counts per tool or per project, titled `title`. */
function breakdownTable<R extends ActionCounts>(
  id: string,
  title: string,
  keyHead: string,
  rows: R[],
  key: (r: R) => HTMLElement,
): HTMLElement {
  const titleId = `${id}-title`;
  return h(
    "div",
    { class: "stopped-breakdown" },
    h("h3", { id: titleId }, title),
    rows.length === 0
      ? h("p", { class: "muted", id: `${id}-empty` }, "Nothing blocked, redacted or alerted.")
      : dataTable(
          { id, "aria-labelledby": titleId },
          [
            h("th", { scope: "col" }, keyHead),
            ACTIONS.map(([, label]) => h("th", { scope: "col", class: "num" }, label)),
          ],
          rows.map((r) =>
            h(
              "tr",
              null,
              h("td", null, key(r)),
              ACTIONS.map(([action]) => h("td", { class: "num" }, num(r[action]))),
            ),
          ),
        ),
  );
}

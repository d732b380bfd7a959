/**
 * The Overview's cards: findings today, the severity mix, active sessions and the last finding.
 * The stored (deduplicated) counts come from `/stats`, read again shortly after live findings and
 * acted-on requests arrive, together with the "What sluice stopped" counts.
 */
import { get } from "../api.ts";
import { severityStack } from "../charts.ts";
import { ago, coalesce, h, num } from "../dom.ts";
import { onLive } from "../live.ts";
import type { PageCtx } from "../state.ts";
import type { Stats } from "../types.ts";
import type { StoppedPanel } from "./overview-stopped.ts";

/** How long a burst of live events waits before the counts are read again. */
const REFRESH_MS = 500;
const LINK_CARD = "color:inherit;text-decoration:none";

export function overviewCards(ctx: PageCtx, stats: Stats, activeSessions: number, stopped: StoppedPanel) {
  const todayValue = h("div", { class: "card-value", id: "card-today" }, num(stats.today_count));
  const lastValue = h("div", { class: "card-value" }, ago(stats.last_finding_time));
  const totalSub = h("div", { class: "card-sub" }, `${num(stats.total_findings)} in total`);
  const refresh = coalesce(async () => {
    try {
      const st = await get<Stats>("/stats", { days: 1 });
      if (ctx.left()) return;
      todayValue.textContent = num(st.today_count);
      totalSub.textContent = `${num(st.total_findings)} in total`;
      lastValue.textContent = ago(st.last_finding_time);
      stopped.update(st.request_actions);
    } catch {
      /* the next event retries */
    }
  }, REFRESH_MS);
  ctx.onLeave(
    onLive("finding", () => {
      lastValue.textContent = "just now";
      refresh();
    }),
  );
  ctx.onLeave(
    onLive("request", (ev) => {
      if (ev.action === "block" || ev.action === "redact" || ev.action === "alert") refresh();
    }),
  );
  return h(
    "div",
    { class: "grid cols-4" },
    h(
      "a",
      { class: "panel card", href: "#/findings?days=1", style: LINK_CARD },
      h("div", { class: "card-label" }, "Findings today"),
      todayValue,
      totalSub,
    ),
    h(
      "div",
      { class: "panel card" },
      h("div", { class: "card-label" }, "Severity mix"),
      h("div", { class: "card-value" }, severityStack(stats.by_severity)),
      h(
        "div",
        { class: "card-sub" },
        ["critical", "high", "warning", "info"].map((k) =>
          h("span", null, `${num(stats.by_severity?.[k])} ${k} `),
        ),
      ),
    ),
    h(
      "a",
      { class: "panel card", href: "#/sessions", style: LINK_CARD },
      h("div", { class: "card-label" }, "Active sessions (24 h)"),
      h("div", { class: "card-value" }, num(activeSessions)),
      h("div", { class: "card-sub" }, `${num(stats.total_requests)} requests in total`),
    ),
    h(
      "div",
      { class: "panel card" },
      h("div", { class: "card-label" }, "Last finding"),
      lastValue,
      h(
        "div",
        { class: "card-sub" },
        stats.last_finding_time ? new Date(stats.last_finding_time).toLocaleString() : "—",
      ),
    ),
  );
}

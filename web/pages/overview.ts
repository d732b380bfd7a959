/**
 * Overview: today's cards (overview-cards.ts), what sluice stopped (overview-stopped.ts), the
 * findings trend, the live feed (overview-feed.ts), breakdowns, recent sessions and pipeline health
 * (overview-health.ts).
 */
import { get } from "../api.ts";
import { breakdown, trendChart } from "../charts.ts";
import { choiceChips, connectHint, empty, h, mount, num, pageHead } from "../dom.ts";
import { currentStatus, type PageCtx, proxyUrl } from "../state.ts";
import type { AuditEntry, AuditStatus, Finding, Pipeline, Session, Stats, Status } from "../types.ts";
import { overviewCards } from "./overview-cards.ts";
import { liveFeed } from "./overview-feed.ts";
import { pipelineHealth, recentSessions } from "./overview-health.ts";
import { stoppedPanel } from "./overview-stopped.ts";

/** Findings and requests the feed opens with. */
const FEED_SEED = 10;
const RANGES = [7, 30, 90];

export async function overviewPage(ctx: PageCtx) {
  let days = Number(ctx.params.get("days")) || 30;
  if (!RANGES.includes(days)) days = 30;

  const [stats, dash, pipeline, status, recentFindings, recentRequests] = await Promise.all([
    get<Stats>("/stats", { days }),
    get<{ sessions: Session[]; total: number }>("/sessions/dashboard", { limit: 10 }),
    get<Pipeline>("/pipeline"),
    get<Status>("/status"),
    get<{ findings: Finding[] }>("/findings", { limit: FEED_SEED }),
    get<{ entries: AuditEntry[] }>("/audit", { limit: FEED_SEED }),
  ]);
  if (ctx.left()) return;

  const trend = trendPanel(ctx, stats.daily_trend, days);
  const stopped = stoppedPanel(stats.request_actions);
  const feed = liveFeed(ctx, recentFindings.findings, recentRequests.entries);
  const cards = overviewCards(ctx, stats, dash.total, stopped);
  const noData = stats.total_findings === 0 && (stats.total_requests ?? 0) === 0;

  mount(
    ctx.root,
    pageHead("Overview", h("span", { class: "muted" }, statusLine())),
    auditAlert(status.audit),
    noData
      ? h(
          "section",
          { class: "panel", style: "margin-bottom:14px" },
          empty("No traffic yet", connectHint(proxyUrl())),
        )
      : null,
    cards,
    stopped.el,
    h("div", { class: "grid main-side" }, trend, feed),
    breakdowns(stats),
    h(
      "div",
      { class: "grid main-side" },
      recentSessions(dash.sessions),
      pipelineHealth(pipeline, stats, days),
    ),
  );
}

/** The findings per day, redrawn for the range chosen (7, 30 or 90 days, kept in the URL). */
function trendPanel(ctx: PageCtx, initial: Stats["daily_trend"], initialDays: number): HTMLElement {
  const trendBox = h("div", { id: "trend" });
  let days = initialDays;
  let trend = initial;
  let drawnWidth = 0;
  const drawTrend = () => {
    drawnWidth = trendBox.clientWidth;
    mount(trendBox, trendChart(trend, `Findings per day, last ${days} days`, drawnWidth || 720));
  };
  // Redraw at the real width so that axis text keeps its size at any window width.
  const resize = new ResizeObserver(() => {
    if (Math.abs(trendBox.clientWidth - drawnWidth) > 4) drawTrend();
  });
  resize.observe(trendBox);
  ctx.onLeave(() => resize.disconnect());
  const rangeButtons = choiceChips(
    RANGES,
    days,
    "days",
    (d) => `${d} days`,
    async (d) => {
      days = d;
      history.replaceState(null, "", `#/?days=${d}`);
      const s = await get<Stats>("/stats", { days: d });
      if (ctx.left()) return;
      trend = s.daily_trend;
      drawTrend();
    },
  );
  return h(
    "section",
    { class: "panel", "aria-labelledby": "trend-title" },
    h(
      "div",
      { class: "row", style: "justify-content:space-between" },
      h("h2", { id: "trend-title" }, "Findings trend"),
      h("div", { class: "seg-group", role: "group", "aria-label": "Trend range" }, rangeButtons),
    ),
    trendBox,
  );
}

/** Findings by detector, provider, client and type, each bar a link to those findings. */
function breakdowns(stats: Stats): HTMLElement {
  const to = (filter: string) => (n: string) => `#/findings?${filter}=${encodeURIComponent(n)}`;
  return h(
    "div",
    { class: "grid cols-4 breakdowns" },
    breakdown("By detector", stats.by_detector, { href: to("detector") }),
    breakdown("By provider", stats.by_provider, { href: to("provider") }),
    breakdown("By client", stats.by_client, { href: to("client") }),
    breakdown(
      "Top finding types",
      (stats.top_finding_types ?? []).map((t) => ({ name: t.finding_type, count: t.count })),
      { href: to("finding_type"), limit: 6 },
    ),
  );
}

/** A full or failing audit disk is said on the Overview, with what was lost (null while all is well). */
function auditAlert(audit: AuditStatus | undefined): HTMLElement | null {
  if (!audit || (audit.failing_since === null && audit.dropped === 0)) return null;
  const failing = audit.failing_since !== null;
  return h(
    "section",
    { class: "panel audit-alert", role: "alert", id: "audit-alert" },
    h("h2", null, failing ? "The audit trail cannot be written" : "The audit trail lost lines"),
    h(
      "p",
      null,
      failing
        ? `Since ${new Date(audit.failing_since!).toLocaleString()}: ${audit.last_error ?? "write error"}. `
        : `Last error: ${audit.last_error ?? "write error"}. `,
      `${num(audit.pending)} line(s) waiting, ${num(audit.dropped)} lost, ${num(audit.errors)} failed write(s). `,
      "Free space on the audit disk (logging.dir); the application log has the details.",
    ),
  );
}

function statusLine(): string {
  const st = currentStatus();
  if (!st) return "";
  return `proxy ${st.bind}:${st.proxy_port} · ${st.version} · up ${Math.round(st.uptime / 60)} min`;
}

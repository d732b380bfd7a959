/**
 * Overview: today's cards, what sluice stopped (overview-stopped.ts), the findings trend,
 * breakdowns, the live feed, recent sessions and pipeline health.
 */
import { BUS_EVENTS } from "../../src/core/bus.ts";
import { get } from "../api.ts";
import { breakdown, severityStack, trendChart } from "../charts.ts";
import { ago, badge, connectHint, dataTable, empty, h, mount, num, shortId, shortPreview } from "../dom.ts";
import { type LiveEvent, onLive } from "../live.ts";
import { currentStatus, type PageCtx, proxyUrl } from "../state.ts";
import type { AuditEntry, AuditStatus, Finding, Pipeline, Session, Stats, Status } from "../types.ts";
import { stoppedPanel } from "./overview-stopped.ts";

const FEED_MAX = 60;
/** Findings and requests the feed opens with. */
const FEED_SEED = 10;

export async function overviewPage(ctx: PageCtx) {
  let days = Number(ctx.params.get("days")) || 30;
  if (![7, 30, 90].includes(days)) days = 30;

  const [stats, dash, pipeline, status, recentFindings, recentRequests] = await Promise.all([
    get<Stats>("/stats", { days }),
    get<{ sessions: Session[]; total: number }>("/sessions/dashboard", { limit: 10 }),
    get<Pipeline>("/pipeline"),
    get<Status>("/status"),
    get<{ findings: Finding[] }>("/findings", { limit: FEED_SEED }),
    get<{ entries: AuditEntry[] }>("/audit", { limit: FEED_SEED }),
  ]);
  if (ctx.left()) return;

  const trendBox = h("div", { id: "trend" });
  let trend = stats.daily_trend;
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
  const rangeButtons = [7, 30, 90].map((d) =>
    h(
      "button",
      {
        class: "btn small",
        type: "button",
        "aria-pressed": d === days ? "true" : "false",
        onclick: async () => {
          days = d;
          for (const b of rangeButtons)
            b.setAttribute("aria-pressed", b.dataset.days === String(d) ? "true" : "false");
          history.replaceState(null, "", `#/?days=${d}`);
          const s = await get<Stats>("/stats", { days: d });
          if (ctx.left()) return;
          trend = s.daily_trend;
          drawTrend();
        },
        dataset: { days: String(d) },
      },
      `${d} days`,
    ),
  );

  const todayValue = h("div", { class: "card-value", id: "card-today" }, num(stats.today_count));
  const lastValue = h("div", { class: "card-value" }, ago(stats.last_finding_time));
  const totalSub = h("div", { class: "card-sub" }, `${num(stats.total_findings)} in total`);
  const stopped = stoppedPanel(stats.request_actions);
  // Stored counts (deduplicated) come from /stats, re-read shortly after live findings and acted
  // requests arrive.
  let cardsPending = false;
  const refreshCards = () => {
    if (cardsPending) return;
    cardsPending = true;
    setTimeout(async () => {
      cardsPending = false;
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
    }, 500);
  };
  const sevCard = h(
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
  );

  const feed = h("ul", {
    class: "feed",
    id: "live-feed",
    "aria-live": "polite",
    "aria-label": "Live activity",
  });
  const feedEmpty = h(
    "p",
    { class: "muted", id: "feed-empty" },
    "Waiting for traffic… new requests and findings appear here as they happen.",
  );
  const addFeed = (ev: LiveEvent) => {
    feedEmpty.remove();
    feed.prepend(feedItem(ev));
    while (feed.children.length > FEED_MAX) feed.lastElementChild?.remove();
  };
  // The feed opens with the latest findings and requests, oldest first so the newest ends on top.
  const seeded: LiveEvent[] = [
    ...recentFindings.findings.map((f) => ({ ...f, type: "finding" })),
    ...recentRequests.entries.map((e) => ({ ...e, type: "request" })),
  ];
  for (const ev of seeded.sort((a, b) => String(a.ts).localeCompare(String(b.ts)))) addFeed(ev);
  for (const name of BUS_EVENTS) ctx.onLeave(onLive(name, addFeed));
  ctx.onLeave(
    onLive("finding", () => {
      lastValue.textContent = "just now";
      refreshCards();
    }),
  );
  ctx.onLeave(
    onLive("request", (ev) => {
      if (ev.action === "block" || ev.action === "redact" || ev.action === "alert") refreshCards();
    }),
  );

  const noData = stats.total_findings === 0 && (stats.total_requests ?? 0) === 0;

  mount(
    ctx.root,
    h("div", { class: "page-head" }, h("h1", null, "Overview"), h("span", { class: "muted" }, statusLine())),
    auditAlert(status.audit),
    noData
      ? h(
          "section",
          { class: "panel", style: "margin-bottom:14px" },
          empty("No traffic yet", connectHint(proxyUrl())),
        )
      : null,
    h(
      "div",
      { class: "grid cols-4" },
      h(
        "a",
        { class: "panel card", href: "#/findings?days=1", style: "color:inherit;text-decoration:none" },
        h("div", { class: "card-label" }, "Findings today"),
        todayValue,
        totalSub,
      ),
      sevCard,
      h(
        "a",
        { class: "panel card", href: "#/sessions", style: "color:inherit;text-decoration:none" },
        h("div", { class: "card-label" }, "Active sessions (24 h)"),
        h("div", { class: "card-value" }, num(dash.total)),
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
    ),
    stopped.el,
    h(
      "div",
      { class: "grid main-side" },
      h(
        "section",
        { class: "panel", "aria-labelledby": "trend-title" },
        h(
          "div",
          { class: "row", style: "justify-content:space-between" },
          h("h2", { id: "trend-title" }, "Findings trend"),
          h("div", { class: "seg-group", role: "group", "aria-label": "Trend range" }, rangeButtons),
        ),
        trendBox,
      ),
      h(
        "section",
        { class: "panel", "aria-labelledby": "feed-title" },
        h("h2", { id: "feed-title" }, "Live activity"),
        feed.children.length === 0 ? feedEmpty : null,
        feed,
      ),
    ),
    h(
      "div",
      { class: "grid cols-4 breakdowns" },
      breakdown("By detector", stats.by_detector, {
        href: (n) => `#/findings?detector=${encodeURIComponent(n)}`,
      }),
      breakdown("By provider", stats.by_provider, {
        href: (n) => `#/findings?provider=${encodeURIComponent(n)}`,
      }),
      breakdown("By client", stats.by_client, { href: (n) => `#/findings?client=${encodeURIComponent(n)}` }),
      breakdown(
        "Top finding types",
        (stats.top_finding_types ?? []).map((t) => ({ name: t.finding_type, count: t.count })),
        { href: (n) => `#/findings?finding_type=${encodeURIComponent(n)}`, limit: 6 },
      ),
    ),
    h(
      "div",
      { class: "grid main-side" },
      h(
        "section",
        { class: "panel", "aria-labelledby": "sessions-title" },
        h("h2", { id: "sessions-title" }, "Recent sessions (24 h)"),
        dash.sessions.length === 0
          ? h("p", { class: "muted" }, "No session in the last 24 hours.")
          : dataTable(
              null,
              [
                h("th", null, "Session"),
                h("th", null, "Client"),
                h("th", null, "Last seen"),
                h("th", { class: "num" }, "Findings"),
                h("th", null, "Severity"),
              ],
              dash.sessions.map((s) =>
                h(
                  "tr",
                  null,
                  h(
                    "td",
                    null,
                    h(
                      "a",
                      { href: `#/sessions/${encodeURIComponent(s.session_id)}`, class: "mono" },
                      shortId(s.session_id),
                    ),
                  ),
                  h("td", null, s.client ?? s.provider ?? "—"),
                  h("td", null, ago(s.last_seen)),
                  h("td", { class: "num" }, num(s.finding_count)),
                  h("td", null, severityStack(s.severity)),
                ),
              ),
            ),
      ),
      h(
        "section",
        { class: "panel", "aria-labelledby": "health-title" },
        h("h2", { id: "health-title" }, "Pipeline health"),
        h(
          "ul",
          { class: "bars", style: "list-style:none" },
          pipeline.stages.map((st) =>
            h(
              "li",
              { style: "grid-template-columns:minmax(0,1fr) auto" },
              h("span", { title: st.description }, st.label || st.name),
              !st.available ? badge("not available", "off") : st.enabled ? badge("on") : badge("off", "off"),
            ),
          ),
        ),
        scanHealth(stats, days),
        h(
          "p",
          { class: "muted", style: "margin:8px 0 0" },
          "Default action: ",
          h("strong", null, pipeline.default_action),
          " · ",
          h("a", { href: "#/pipeline" }, "Settings"),
        ),
      ),
    ),
  );
}

/** What sluice could not read or keep: each line says how many, zero when all is well. */
function scanHealth(stats: Stats, days: number): HTMLElement {
  const sh = stats.scan_health;
  const list = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([k, n]) => `${k} ${num(n)}`)
      .join(", ");
  const reasons = [list(sh.unscanned.by_reason), list(sh.unscanned.by_client)].filter(Boolean).join("; ");
  const line = (id: string, label: string, n: number, detail = "") =>
    h(
      "li",
      { id, style: "grid-template-columns:minmax(0,1fr) auto" },
      h("span", null, label, detail ? h("span", { class: "muted" }, ` (${detail})`) : null),
      h("strong", { class: n > 0 ? "warn" : "" }, num(n)),
    );
  return h(
    "ul",
    {
      class: "bars",
      id: "scan-health",
      style: "list-style:none;margin-top:8px",
      "aria-label": "Scan health",
    },
    line("sh-unscanned", `Requests forwarded unread, ${days} days`, sh.unscanned.total, reasons),
    line("sh-errors", "Scan errors", sh.scan_errors),
    line("sh-dropped", "Records dropped (store, audit)", sh.store_dropped + sh.audit_dropped),
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

function feedItem(ev: LiveEvent): HTMLElement {
  const t = new Date(ev.ts || Date.now()).toLocaleTimeString();
  const str = (k: string) => (typeof ev[k] === "string" ? (ev[k] as string) : "");
  let kind: HTMLElement;
  let what: HTMLElement | string;
  switch (ev.type) {
    case "finding": {
      const f = (ev.finding as Record<string, unknown> | undefined) ?? ev;
      const sev = String(f.severity ?? "info");
      kind = badge(sev);
      what = h(
        "span",
        null,
        h("strong", null, String(f.finding_type ?? f.rule ?? "finding")),
        ` ${shortPreview(String(f.preview ?? ""))} in ${String(f.path ?? "?")} → ${String(f.action ?? "")}`,
        ev.id ? [" · ", h("a", { href: `#/findings/${String(ev.id)}` }, "details")] : null,
      );
      break;
    }
    case "request":
      kind = badge(str("action") || "pass");
      what = `${str("method")} ${str("path")} · ${str("provider")} · ${str("client")} · ${Number(ev.finding_count ?? 0)} findings · ${Number(ev.duration_ms ?? 0)} ms`;
      break;
    case "mode-changed":
      kind = badge("mode", "warning");
      what = `Proxy mode changed to ${str("mode")}`;
      break;
    case "config-reloaded":
      kind = badge("config", "info");
      what = `Configuration reloaded (${str("source")}): ${Array.isArray(ev.changes) ? ev.changes.length : 0} changes`;
      break;
    case "ws-connection":
      kind = badge("ws", "info");
      what = `WebSocket ${str("phase")} ${str("target_url")}`;
      break;
    default:
      kind = badge("mcp", "info");
      what = `MCP ${str("kind")}: ${str("message")}`;
  }
  return h(
    "li",
    { dataset: { type: ev.type } },
    h("time", null, t),
    kind,
    h("span", { class: "what" }, what),
  );
}

/**
 * The Overview's live activity: every live event as a line, newest on top, opening with the latest
 * findings and requests.
 */
import { BUS_EVENTS } from "../../src/core/bus.ts";
import { badge, h, shortPreview } from "../dom.ts";
import { type LiveEvent, onLive } from "../live.ts";
import type { PageCtx } from "../state.ts";
import type { AuditEntry, Finding } from "../types.ts";

const FEED_MAX = 60;

export function liveFeed(ctx: PageCtx, findings: Finding[], requests: AuditEntry[]): HTMLElement {
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
    ...findings.map((f) => ({ ...f, type: "finding" })),
    ...requests.map((e) => ({ ...e, type: "request" })),
  ];
  for (const ev of seeded.sort((a, b) => String(a.ts).localeCompare(String(b.ts)))) addFeed(ev);
  for (const name of BUS_EVENTS) ctx.onLeave(onLive(name, addFeed));
  return h(
    "section",
    { class: "panel", "aria-labelledby": "feed-title" },
    h("h2", { id: "feed-title" }, "Live activity"),
    feed.children.length === 0 ? feedEmpty : null,
    feed,
  );
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

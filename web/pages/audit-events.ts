/** The Audit page's WebSocket connections and MCP events: the latest of each, read again live. */
import { get } from "../api.ts";
import { ago, badge, type Child, dataTable, h, mount, num, when } from "../dom.ts";
import { fail } from "../feedback.ts";
import { type LiveEventName, onLive } from "../live.ts";
import type { PageCtx } from "../state.ts";
import type { List, McpEvent, WsConnection } from "../types.ts";

/** How many of each the panels show. */
const LATEST = 20;

/** A panel titled by `titleId` that draws what `read` returns, again on each live `event`. */
function latestPanel<T>(
  ctx: PageCtx,
  titleId: string,
  event: LiveEventName,
  read: () => Promise<T>,
  draw: (res: T) => Child[],
) {
  const element = h("section", { class: "panel", "aria-labelledby": titleId });
  const load = async () => {
    try {
      const res = await read();
      if (ctx.left()) return;
      mount(element, ...draw(res));
    } catch (err) {
      fail(err);
    }
  };
  ctx.onLeave(onLive(event, () => void load()));
  return { element, load };
}

export function wsPanel(ctx: PageCtx) {
  return latestPanel(
    ctx,
    "ws-title",
    "ws-connection",
    () => get<List & { connections: WsConnection[] }>("/ws/connections", { limit: LATEST }),
    (res) => [
      h("h2", { id: "ws-title" }, `WebSocket connections (${num(res.total)})`),
      res.connections.length === 0
        ? h("p", { class: "muted" }, "No WebSocket connection yet (Codex opens one per turn).")
        : dataTable(
            { id: "ws-table" },
            [
              ["Opened", "Target", "State"].map((t) => h("th", { scope: "col" }, t)),
              h("th", { class: "num", scope: "col" }, "Frames"),
              h("th", { class: "num", scope: "col" }, "Findings"),
            ],
            res.connections.map((c) =>
              h(
                "tr",
                null,
                h("td", { title: when(c.opened_at) }, ago(c.opened_at)),
                h("td", { class: "mono", title: c.connection_id }, c.target_url),
                h("td", null, c.state, c.close_code ? ` (${c.close_code})` : ""),
                h("td", { class: "num" }, `${num(c.frames_out)} / ${num(c.frames_in)}`),
                h("td", { class: "num" }, num(c.findings)),
              ),
            ),
          ),
    ],
  );
}

export function mcpPanel(ctx: PageCtx) {
  return latestPanel(
    ctx,
    "mcp-title",
    "mcp-event",
    () => get<List & { events: McpEvent[] }>("/mcp/events", { limit: LATEST }),
    (res) => [
      h("h2", { id: "mcp-title" }, `MCP events (${num(res.total)})`),
      res.events.length === 0
        ? h(
            "p",
            { class: "muted" },
            "No MCP event yet. Wrap a tool server with ",
            h("code", null, "sluice mcp -- <command>"),
            ".",
          )
        : h(
            "ul",
            { class: "feed", id: "mcp-events" },
            res.events.map((e) =>
              h(
                "li",
                null,
                h("time", { title: when(e.ts) }, ago(e.ts)),
                badge(e.severity || "info"),
                h("span", { class: "what" }, `${e.kind} · ${e.server}: ${e.message}`),
              ),
            ),
          ),
    ],
  );
}

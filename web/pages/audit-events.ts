/** The Audit page's WebSocket connections and MCP events: the latest of each, read again live. */
import { get } from "../api.ts";
import { ago, badge, dataTable, h, mount, num, when } from "../dom.ts";
import { fail } from "../feedback.ts";
import { onLive } from "../live.ts";
import type { PageCtx } from "../state.ts";
import type { List, McpEvent, WsConnection } from "../types.ts";

/** How many of each the panels show. */
const LATEST = 20;

export function wsPanel(ctx: PageCtx) {
  const element = h("section", { class: "panel", "aria-labelledby": "ws-title" });
  const load = async () => {
    try {
      const res = await get<List & { connections: WsConnection[] }>("/ws/connections", { limit: LATEST });
      if (ctx.left()) return;
      mount(
        element,
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
      );
    } catch (err) {
      fail(err);
    }
  };
  ctx.onLeave(onLive("ws-connection", () => void load()));
  return { element, load };
}

export function mcpPanel(ctx: PageCtx) {
  const element = h("section", { class: "panel", "aria-labelledby": "mcp-title" });
  const load = async () => {
    try {
      const res = await get<List & { events: McpEvent[] }>("/mcp/events", { limit: LATEST });
      if (ctx.left()) return;
      mount(
        element,
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
      );
    } catch (err) {
      fail(err);
    }
  };
  ctx.onLeave(onLive("mcp-event", () => void load()));
  return { element, load };
}

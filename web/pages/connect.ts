/** Connect: how to route each known client through sluice, with a copy button, and whether it was seen. */
import { get } from "../api.ts";
import { ago, h, mount } from "../dom.ts";
import { copyText, toast } from "../feedback.ts";
import { type PageCtx, proxyUrl } from "../state.ts";
import type { Client } from "../types.ts";

/** The line a user pastes, with the real proxy address. */
export function setupLine(c: Client, proxy: string): string {
  const pc = c.proxy_config;
  const fill = (s: string) =>
    s.replaceAll("http://localhost:8080", proxy).replaceAll("http://127.0.0.1:8080", proxy);
  if (pc.setup_cmd) return fill(pc.setup_cmd);
  if (pc.env_var)
    return `export ${pc.env_var}=${proxy}${c.provider === "openai" && !/BASE$/.test(pc.env_var) ? "/v1" : ""}`;
  return fill(pc.setup_instructions);
}

export async function connectPage(ctx: PageCtx) {
  const { clients } = await get<{ clients: Client[] }>("/clients");
  if (ctx.left()) return;
  const proxy = proxyUrl();
  const seen = clients.filter((c) => c.seen).length;
  mount(
    ctx.root,
    h(
      "div",
      { class: "page-head" },
      h("h1", null, "Connect a tool"),
      h("span", { class: "muted" }, `${seen} of ${clients.length} seen`),
    ),
    h(
      "p",
      { class: "muted", style: "max-width:760px" },
      `sluice listens on ${proxy}. Point a tool's provider base URL at it; your API key stays where it is and sluice forwards it upstream over HTTPS.`,
    ),
    h(
      "div",
      { class: "grid cols-2", id: "clients" },
      clients.map((c) => {
        // The lines `sluice connect` prints (every sign-in mode), else the catalog's setup line.
        const line = c.connect ? c.connect.lines.join("\n") : setupLine(c, proxy);
        return h(
          "section",
          { class: "panel client-card", "aria-labelledby": `client-${c.id}`, dataset: { client: c.id } },
          h(
            "div",
            { class: "row", style: "justify-content:space-between" },
            h("h2", { id: `client-${c.id}`, style: "margin:0" }, c.display_name),
            h(
              "span",
              { class: `seen ${c.seen ? "yes" : "no"}` },
              c.seen ? `● traffic seen ${ago(c.last_seen)}` : "○ no traffic yet",
            ),
          ),
          h("p", { class: "muted", style: "margin:4px 0 8px" }, `${c.category} · ${c.provider}`),
          h(
            "div",
            { class: "env" },
            h("pre", null, h("code", null, line)),
            h(
              "button",
              {
                class: "btn",
                type: "button",
                "aria-label": `Copy the setup line for ${c.display_name}`,
                onclick: async () =>
                  toast((await copyText(line)) ? "Copied." : "Copy failed: select the text instead.", "info"),
              },
              "Copy",
            ),
          ),
          c.connect
            ? h(
                "p",
                { class: "muted", style: "margin:8px 0 0" },
                `Or: sluice connect ${c.connect.tool} --apply`,
              )
            : c.proxy_config.setup_instructions && c.proxy_config.setup_instructions !== line
              ? h("p", { class: "muted", style: "margin:8px 0 0" }, c.proxy_config.setup_instructions)
              : null,
          c.website
            ? h(
                "p",
                { style: "margin:6px 0 0" },
                h("a", { href: c.website, rel: "noreferrer noopener", target: "_blank" }, "Website"),
              )
            : null,
        );
      }),
    ),
  );
}

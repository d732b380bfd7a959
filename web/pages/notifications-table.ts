/** The Notifications page's channel table: selection, source, enabled, events, dispatch status and actions. */
import { put } from "../api.ts";
import { ago, badge, dataTable, empty, h } from "../dom.ts";
import type { Channel, NotificationsPage } from "./notifications.ts";

export function channelTable(page: NotificationsPage, channels: Channel[]): HTMLElement {
  if (channels.length === 0)
    return empty(
      "No channels yet.",
      h("p", null, "Add one below, or under notifications.channels in the config file."),
    );
  return dataTable(
    { "aria-label": "Notification channels" },
    [
      h("th", null, h("span", { class: "sr-only" }, "Select")),
      ["Name", "Type", "Enabled", "Events", "Status", "Actions"].map((t) => h("th", null, t)),
    ],
    channels.map((c) => channelRow(page, c)),
  );
}

function channelRow(page: NotificationsPage, c: Channel): HTMLElement {
  const path = `/notifications/${encodeURIComponent(c.name)}`;
  return h(
    "tr",
    { dataset: { channel: c.name } },
    h(
      "td",
      null,
      h("input", {
        type: "checkbox",
        checked: page.selected.has(c.name),
        "aria-label": `Select ${c.name}`,
        onchange: (e: Event) => {
          if ((e.target as HTMLInputElement).checked) page.selected.add(c.name);
          else page.selected.delete(c.name);
        },
      }),
    ),
    h(
      "td",
      null,
      h("strong", null, c.name),
      " ",
      badge(c.source === "config" ? "config" : "dashboard", c.source === "config" ? "info" : "on"),
    ),
    h("td", null, c.type),
    h(
      "td",
      null,
      h("input", {
        type: "checkbox",
        checked: c.enabled,
        "aria-label": `Enable ${c.name}`,
        onchange: (e: Event) => {
          const enabled = (e.target as HTMLInputElement).checked;
          return page.run(`${c.name} ${enabled ? "enabled" : "disabled"}.`, () => put(path, { enabled }));
        },
      }),
    ),
    h("td", null, `${c.events.join(", ")} (≥ ${c.min_severity}, cooldown ${c.cooldown_seconds} s)`),
    h("td", null, statusCell(c)),
    h(
      "td",
      { class: "row" },
      h("button", { class: "btn small", type: "button", onclick: () => page.test(c) }, "Test"),
      c.read_only
        ? h("span", { class: "muted", title: "Edit the config file to change this channel" }, "read-only")
        : [
            h("button", { class: "btn small", type: "button", onclick: () => page.showForm(c) }, "Edit"),
            h(
              "button",
              { class: "btn small danger", type: "button", onclick: () => page.remove([c.name]) },
              "Delete",
            ),
          ],
    ),
  );
}

function statusCell(c: Channel) {
  if (c.error) return h("span", { style: "color:var(--critical)" }, c.error);
  const s = c.status;
  if (!s) return h("span", { class: "muted" }, "not started");
  return h(
    "div",
    null,
    h("div", null, `sent ${s.sent} · pending ${s.pending} · dropped ${s.dropped}`),
    h("div", { class: "muted" }, `last success ${ago(s.last_success)}`),
    s.last_error
      ? h("div", { style: "color:var(--critical)", title: s.last_error_at ?? "" }, s.last_error)
      : null,
  );
}

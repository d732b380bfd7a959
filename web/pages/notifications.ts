/**
 * Notifications: every channel with its dispatch status; add, edit, test and delete channels made
 * here; enable, disable and test channels from the config file (read-only otherwise); batch actions
 * over the selected rows. Secret fields are shown masked and left blank in the edit form, where
 * blank means "keep the stored value".
 *
 * The parts share one `NotificationsPage` (the selection, the channel types): the channel table is
 * notifications-table.ts, the add and edit form notifications-form.ts.
 */
import type { DeliveryStatus } from "../../src/notify/delivery.ts";
import { del, get, post } from "../api.ts";
import { badge, h, mount, pageHead } from "../dom.ts";
import { attempt, confirmDialog, fail, toast } from "../feedback.ts";
import type { PageCtx } from "../state.ts";
import { channelForm } from "./notifications-form.ts";
import { channelTable } from "./notifications-table.ts";

export interface Channel {
  name: string;
  type: string;
  enabled: boolean;
  events: string[];
  min_severity: string;
  cooldown_seconds: number;
  source: "config" | "api";
  read_only: boolean;
  error: string | null;
  status: DeliveryStatus | null;
  [field: string]: unknown;
}

export interface TypeInfo {
  type: string;
  fields: string[];
  secret_fields: string[];
}

/** The Notifications page's state and what its parts do to it. */
export interface NotificationsPage {
  ctx: PageCtx;
  types: TypeInfo[];
  selected: Set<string>;
  /** Read the channels again and draw the table. */
  load(): Promise<void>;
  /** Run `fn`, say `what` when it worked, and reload. */
  run(what: string, fn: () => Promise<unknown>): Promise<void>;
  /** Send a test message to the channel and show the answer. */
  test(c: Channel): Promise<void>;
  /** Delete channels, after asking. */
  remove(names: string[]): Promise<void>;
  /** Show the add form (no channel) or the edit form of an API channel. */
  showForm(editing?: Channel): void;
}

export async function notificationsPage(ctx: PageCtx) {
  const types = (await get<{ types: TypeInfo[] }>("/notifications/types")).types;
  const tableBox = h("div", { id: "notify-channels" });
  const testOut = h("div", { id: "notify-test-result", "aria-live": "polite" });
  const formBox = h("div");
  const page: NotificationsPage = {
    ctx,
    types,
    selected: new Set(),
    load: async () => {
      const { channels } = await get<{ channels: Channel[] }>("/notifications");
      if (ctx.left()) return;
      for (const n of [...page.selected]) if (!channels.some((c) => c.name === n)) page.selected.delete(n);
      mount(tableBox, channelTable(page, channels));
    },
    run: (what, fn) =>
      attempt(async () => {
        await fn();
        toast(what);
        await page.load();
      }),
    test: (c) => testChannel(page, testOut, c),
    remove: async (names) => {
      if (
        !(await confirmDialog("Delete channels?", `${names.join(", ")} will stop receiving.`, "Delete", true))
      )
        return;
      await page.run(`Deleted ${names.join(", ")}.`, () =>
        names.length === 1
          ? del(`/notifications/${encodeURIComponent(names[0]!)}`)
          : post("/notifications/batch", { action: "delete", names }),
      );
    },
    showForm: (editing) => mount(formBox, channelForm(page, editing)),
  };
  const batchButton = (action: "enable" | "disable" | "delete", label: string, cls = "btn small") =>
    h("button", { class: cls, type: "button", onclick: () => batch(page, action) }, label);
  mount(
    ctx.root,
    pageHead("Notifications"),
    h(
      "section",
      { class: "panel", "aria-label": "Channels" },
      h(
        "div",
        { class: "row" },
        h("span", { class: "muted" }, "Selected:"),
        batchButton("enable", "Enable"),
        batchButton("disable", "Disable"),
        batchButton("delete", "Delete", "btn small danger"),
      ),
      tableBox,
      testOut,
    ),
    formBox,
  );
  page.showForm();
  await page.load();
}

async function testChannel(page: NotificationsPage, out: HTMLElement, c: Channel) {
  mount(out, h("p", { class: "muted" }, `Sending a test message to ${c.name}…`));
  try {
    const r = await post<{ ok: boolean; answer?: string; error?: string }>(
      `/notifications/${encodeURIComponent(c.name)}/test`,
    );
    mount(
      out,
      h(
        "p",
        null,
        r.ok ? badge("delivered", "on") : badge("failed", "critical"),
        ` ${c.name}: `,
        h("code", null, (r.ok ? r.answer : r.error) ?? ""),
      ),
    );
    await page.load();
  } catch (err) {
    fail(err);
  }
}

/** Enable, disable or delete the selected channels. */
async function batch(page: NotificationsPage, action: "enable" | "disable" | "delete") {
  const names = [...page.selected];
  if (names.length === 0) return toast("Select channels first.", "info");
  if (action === "delete") return page.remove(names);
  try {
    const r = await post<{ results: { name: string; ok: boolean; error?: { message: string } }[] }>(
      "/notifications/batch",
      { action, names },
    );
    const bad = r.results.filter((x) => !x.ok);
    if (bad.length) toast(bad.map((x) => `${x.name}: ${x.error?.message}`).join("; "), "error");
    else toast(`${action === "enable" ? "Enabled" : "Disabled"} ${names.join(", ")}.`);
    await page.load();
  } catch (err) {
    fail(err);
  }
}

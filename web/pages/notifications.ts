/**
 * Notifications: every channel with its dispatch status; add, edit, test and delete channels made
 * here; enable, disable and test channels from the config file (read-only otherwise); batch actions
 * over the selected rows. Secret fields are shown masked and left blank in the edit form, where
 * blank means "keep the stored value".
 *
 * Longer than most pages (and `notificationsPage`, `load` and `showForm` longer than most functions):
 * the table, the batch bar, the test result and the form share the page's state (selection, the
 * channel being edited, the types' fields); the per-type field table is data and takes a third.
 */
import type { DeliveryStatus } from "../../src/notify/delivery.ts";
import { del, get, post, put } from "../api.ts";
import { ago, badge, dataTable, empty, field, h, mount, select } from "../dom.ts";
import { confirmDialog, fail, toast } from "../feedback.ts";
import type { PageCtx } from "../state.ts";

interface Channel {
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

interface TypeInfo {
  type: string;
  fields: string[];
  secret_fields: string[];
}

type Kind = "text" | "url" | "secret" | "number" | "bool" | "emails";

/** The fields of each type as the form shows them: name, label, kind, help. */
const TYPE_FIELDS: Record<string, [string, string, Kind, string][]> = {
  webhook: [
    ["url", "URL", "url", "Where the JSON is POSTed. Stored sealed; shown masked."],
    ["secret", "Signing secret", "secret", "HMAC-SHA256 key for the X-Sluice-Signature header."],
  ],
  email: [
    ["smtp_host", "SMTP host", "text", "e.g. smtp.example.com"],
    ["smtp_port", "SMTP port", "number", "587 for STARTTLS, 465 for TLS."],
    ["username", "Username", "text", "Leave empty for a server without authentication."],
    ["password", "Password", "secret", "Stored sealed; shown masked."],
    ["from_addr", "From", "text", "e.g. sluice@example.com"],
    ["to_addrs", "To", "emails", "One or more addresses, separated by commas."],
    ["use_tls", "Require TLS", "bool", "TLS on connect (465) or STARTTLS; off only for a local relay."],
  ],
  slack: [["webhook_url", "Incoming webhook URL", "url", "https://hooks.slack.com/services/…"]],
  teams: [["webhook_url", "Workflow webhook URL", "url", "The URL of a Teams workflow that posts a card."]],
  pagerduty: [
    ["routing_key", "Routing key", "secret", "The integration key of an Events API v2 integration."],
    ["url", "Endpoint (optional)", "url", "Leave empty for events.pagerduty.com; set for EU accounts."],
  ],
  opsgenie: [
    ["api_key", "API key", "secret", "An API integration key (GenieKey)."],
    ["url", "Endpoint (optional)", "url", "Leave empty for api.opsgenie.com; set for EU accounts."],
  ],
  jira: [
    ["url", "Site URL", "url", "e.g. https://example.atlassian.net"],
    ["email", "Account email", "text", "The account the API token belongs to."],
    ["api_token", "API token", "secret", "Stored sealed; shown masked."],
    ["project_key", "Project key", "text", "e.g. SEC"],
    ["issue_type", "Issue type", "text", "e.g. Task or Bug"],
  ],
};
const EVENTS = ["finding", "block", "scan_error", "mode_changed", "mcp"];
const SEVERITIES = ["critical", "high", "warning", "info"];

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

export async function notificationsPage(ctx: PageCtx) {
  const types = (await get<{ types: TypeInfo[] }>("/notifications/types")).types;
  const tableBox = h("div", { id: "notify-channels" });
  const testOut = h("div", { id: "notify-test-result", "aria-live": "polite" });
  const formBox = h("div");
  const selected = new Set<string>();

  const run = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
      toast(what);
      await load();
    } catch (err) {
      fail(err);
    }
  };

  const test = async (c: Channel) => {
    mount(testOut, h("p", { class: "muted" }, `Sending a test message to ${c.name}…`));
    try {
      const r = await post<{ ok: boolean; answer?: string; error?: string }>(
        `/notifications/${encodeURIComponent(c.name)}/test`,
      );
      mount(
        testOut,
        h(
          "p",
          null,
          r.ok ? badge("delivered", "on") : badge("failed", "critical"),
          ` ${c.name}: `,
          h("code", null, (r.ok ? r.answer : r.error) ?? ""),
        ),
      );
      await load();
    } catch (err) {
      fail(err);
    }
  };

  const remove = async (names: string[]) => {
    if (
      !(await confirmDialog("Delete channels?", `${names.join(", ")} will stop receiving.`, "Delete", true))
    )
      return;
    await run(`Deleted ${names.join(", ")}.`, () =>
      names.length === 1
        ? del(`/notifications/${encodeURIComponent(names[0]!)}`)
        : post("/notifications/batch", { action: "delete", names }),
    );
  };

  const batch = (action: "enable" | "disable" | "delete") => async () => {
    const names = [...selected];
    if (names.length === 0) return toast("Select channels first.", "info");
    if (action === "delete") return remove(names);
    try {
      const r = await post<{ results: { name: string; ok: boolean; error?: { message: string } }[] }>(
        "/notifications/batch",
        { action, names },
      );
      const bad = r.results.filter((x) => !x.ok);
      if (bad.length) toast(bad.map((x) => `${x.name}: ${x.error?.message}`).join("; "), "error");
      else toast(`${action === "enable" ? "Enabled" : "Disabled"} ${names.join(", ")}.`);
      await load();
    } catch (err) {
      fail(err);
    }
  };

  const load = async () => {
    const { channels } = await get<{ channels: Channel[] }>("/notifications");
    if (ctx.left()) return;
    for (const n of [...selected]) if (!channels.some((c) => c.name === n)) selected.delete(n);
    if (channels.length === 0) {
      mount(
        tableBox,
        empty(
          "No channels yet.",
          h("p", null, "Add one below, or under notifications.channels in the config file."),
        ),
      );
      return;
    }
    mount(
      tableBox,
      dataTable(
        { "aria-label": "Notification channels" },
        [
          h("th", null, h("span", { class: "sr-only" }, "Select")),
          h("th", null, "Name"),
          h("th", null, "Type"),
          h("th", null, "Enabled"),
          h("th", null, "Events"),
          h("th", null, "Status"),
          h("th", null, "Actions"),
        ],
        channels.map((c) =>
          h(
            "tr",
            { dataset: { channel: c.name } },
            h(
              "td",
              null,
              h("input", {
                type: "checkbox",
                checked: selected.has(c.name),
                "aria-label": `Select ${c.name}`,
                onchange: (e: Event) => {
                  if ((e.target as HTMLInputElement).checked) selected.add(c.name);
                  else selected.delete(c.name);
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
                onchange: (e: Event) =>
                  run(`${c.name} ${(e.target as HTMLInputElement).checked ? "enabled" : "disabled"}.`, () =>
                    put(`/notifications/${encodeURIComponent(c.name)}`, {
                      enabled: (e.target as HTMLInputElement).checked,
                    }),
                  ),
              }),
            ),
            h("td", null, `${c.events.join(", ")} (≥ ${c.min_severity}, cooldown ${c.cooldown_seconds} s)`),
            h("td", null, statusCell(c)),
            h(
              "td",
              { class: "row" },
              h("button", { class: "btn small", type: "button", onclick: () => test(c) }, "Test"),
              c.read_only
                ? h(
                    "span",
                    { class: "muted", title: "Edit the config file to change this channel" },
                    "read-only",
                  )
                : [
                    h("button", { class: "btn small", type: "button", onclick: () => showForm(c) }, "Edit"),
                    h(
                      "button",
                      { class: "btn small danger", type: "button", onclick: () => remove([c.name]) },
                      "Delete",
                    ),
                  ],
            ),
          ),
        ),
      ),
    );
  };

  /** The add form (no channel) or the edit form of an API channel. */
  const showForm = (editing?: Channel) => {
    const typeSel = select(
      "type",
      types.map((t) => t.type),
      editing?.type ?? "webhook",
      { id: "nf-type", disabled: !!editing },
    );
    const name = h("input", {
      type: "text",
      id: "nf-name",
      required: true,
      value: editing?.name ?? "",
      disabled: !!editing,
      placeholder: "sec-alerts",
    });
    const events = EVENTS.map((e) =>
      h("input", {
        type: "checkbox",
        value: e,
        checked: (editing?.events ?? ["finding", "block"]).includes(e),
      }),
    );
    const minSev = select("min_severity", SEVERITIES, editing?.min_severity ?? "high", {
      id: "nf-min-severity",
    });
    const cooldown = h("input", {
      type: "number",
      id: "nf-cooldown",
      min: 0,
      max: 86400,
      value: String(editing?.cooldown_seconds ?? 300),
    });
    const typeBox = h("div", { class: "grid cols-2" });
    let inputs: [string, Kind, HTMLInputElement][] = [];
    const renderType = () => {
      inputs = (TYPE_FIELDS[typeSel.value] ?? []).map(([f, , kind]) => {
        const current = editing?.[f];
        const input =
          kind === "bool"
            ? h("input", { type: "checkbox", checked: current === undefined ? true : current === true })
            : h("input", {
                type: kind === "number" ? "number" : kind === "secret" ? "password" : "text",
                class: "mono",
                autocomplete: "off",
                value: isSecret(f)
                  ? ""
                  : Array.isArray(current)
                    ? current.join(", ")
                    : current === undefined || current === null
                      ? ""
                      : String(current),
                placeholder: editing && isSecret(f) && current ? `unchanged (${current})` : "",
              });
        input.id = `nf-${f}`;
        return [f, kind, input] as [string, Kind, HTMLInputElement];
      });
      mount(
        typeBox,
        inputs.map(([f, , input]) => {
          const [, label, , help] = (TYPE_FIELDS[typeSel.value] ?? []).find(([x]) => x === f)!;
          return field(label, input, help);
        }),
      );
    };
    const isSecret = (f: string) =>
      types.find((t) => t.type === typeSel.value)?.secret_fields.includes(f) ?? false;
    typeSel.addEventListener("change", renderType);
    renderType();

    const body = (): Record<string, unknown> => {
      const out: Record<string, unknown> = {
        events: events.filter((e) => e.checked).map((e) => e.value),
        min_severity: minSev.value,
        cooldown_seconds: Number(cooldown.value),
      };
      if (!editing) Object.assign(out, { name: name.value.trim(), type: typeSel.value });
      for (const [f, kind, input] of inputs) {
        if (kind === "bool") out[f] = input.checked;
        else if (input.value.trim() === "") {
        } else if (kind === "number") out[f] = Number(input.value);
        else if (kind === "emails")
          out[f] = input.value
            .split(",")
            .map((x) => x.trim())
            .filter(Boolean);
        else out[f] = input.value.trim();
      }
      return out;
    };

    mount(
      formBox,
      h(
        "form",
        {
          class: "panel",
          id: "notify-form",
          "aria-labelledby": "nf-title",
          onsubmit: async (e: Event) => {
            e.preventDefault();
            try {
              if (editing) await put(`/notifications/${encodeURIComponent(editing.name)}`, body());
              else await post("/notifications", body());
              toast(editing ? `Saved ${editing.name}.` : `Added ${name.value.trim()}.`);
              showForm();
              await load();
            } catch (err) {
              fail(err);
            }
          },
        },
        h("h2", { id: "nf-title" }, editing ? `Edit ${editing.name}` : "Add a channel"),
        h(
          "div",
          { class: "grid cols-2" },
          field("Type", typeSel),
          field("Name", name, "Letters, digits, '.', '_' and '-'."),
        ),
        h(
          "fieldset",
          null,
          h("legend", null, "Events"),
          events.map((e) => h("label", { class: "row" }, e, ` ${e.value}`)),
        ),
        h(
          "div",
          { class: "grid cols-2" },
          field("Minimum severity (findings)", minSev),
          field(
            "Cooldown (seconds)",
            cooldown,
            "Events of one kind within it are counted and sent as one message.",
          ),
        ),
        typeBox,
        h(
          "div",
          { class: "row end" },
          editing ? h("button", { class: "btn", type: "button", onclick: () => showForm() }, "Cancel") : null,
          h("button", { class: "btn primary", type: "submit" }, editing ? "Save" : "Add channel"),
        ),
      ),
    );
  };

  mount(
    ctx.root,
    h("div", { class: "page-head" }, h("h1", null, "Notifications")),
    h(
      "section",
      { class: "panel", "aria-label": "Channels" },
      h(
        "div",
        { class: "row" },
        h("span", { class: "muted" }, "Selected:"),
        h("button", { class: "btn small", type: "button", onclick: batch("enable") }, "Enable"),
        h("button", { class: "btn small", type: "button", onclick: batch("disable") }, "Disable"),
        h("button", { class: "btn small danger", type: "button", onclick: batch("delete") }, "Delete"),
      ),
      tableBox,
      testOut,
    ),
    formBox,
  );
  showForm();
  await load();
}

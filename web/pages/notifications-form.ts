/**
 * The Notifications page's form: add a channel, or edit one made here. Each type has its own fields
 * (TYPE_FIELDS); a secret field is left blank when editing, and blank keeps the stored value.
 */
import { post, put } from "../api.ts";
import { field, h, mount, select } from "../dom.ts";
import { fail, toast } from "../feedback.ts";
import type { Channel, NotificationsPage, TypeInfo } from "./notifications.ts";

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

/** The fields every channel has. */
interface CommonFields {
  type: HTMLSelectElement;
  name: HTMLInputElement;
  events: HTMLInputElement[];
  minSev: HTMLSelectElement;
  cooldown: HTMLInputElement;
}

/** The add form (no channel) or the edit form of an API channel. */
export function channelForm(page: NotificationsPage, editing?: Channel): HTMLFormElement {
  const f = commonFields(page.types, editing);
  const typed = typeFields(page.types, f.type, editing);
  const body = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {
      events: f.events.filter((e) => e.checked).map((e) => e.value),
      min_severity: f.minSev.value,
      cooldown_seconds: Number(f.cooldown.value),
    };
    if (!editing) Object.assign(out, { name: f.name.value.trim(), type: f.type.value });
    return Object.assign(out, typed.values());
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      if (editing) await put(`/notifications/${encodeURIComponent(editing.name)}`, body());
      else await post("/notifications", body());
      toast(editing ? `Saved ${editing.name}.` : `Added ${f.name.value.trim()}.`);
      page.showForm();
      await page.load();
    } catch (err) {
      fail(err);
    }
  };
  return h(
    "form",
    { class: "panel", id: "notify-form", "aria-labelledby": "nf-title", onsubmit: submit },
    h("h2", { id: "nf-title" }, editing ? `Edit ${editing.name}` : "Add a channel"),
    h(
      "div",
      { class: "grid cols-2" },
      field("Type", f.type),
      field("Name", f.name, "Letters, digits, '.', '_' and '-'."),
    ),
    h(
      "fieldset",
      null,
      h("legend", null, "Events"),
      f.events.map((e) => h("label", { class: "row" }, e, ` ${e.value}`)),
    ),
    h(
      "div",
      { class: "grid cols-2" },
      field("Minimum severity (findings)", f.minSev),
      field(
        "Cooldown (seconds)",
        f.cooldown,
        "Events of one kind within it are counted and sent as one message.",
      ),
    ),
    typed.element,
    h(
      "div",
      { class: "row end" },
      editing
        ? h("button", { class: "btn", type: "button", onclick: () => page.showForm() }, "Cancel")
        : null,
      h("button", { class: "btn primary", type: "submit" }, editing ? "Save" : "Add channel"),
    ),
  );
}

function commonFields(types: TypeInfo[], editing?: Channel): CommonFields {
  return {
    type: select(
      "type",
      types.map((t) => t.type),
      editing?.type ?? "webhook",
      { id: "nf-type", disabled: !!editing },
    ),
    name: h("input", {
      type: "text",
      id: "nf-name",
      required: true,
      value: editing?.name ?? "",
      disabled: !!editing,
      placeholder: "sec-alerts",
    }),
    events: EVENTS.map((e) =>
      h("input", {
        type: "checkbox",
        value: e,
        checked: (editing?.events ?? ["finding", "block"]).includes(e),
      }),
    ),
    minSev: select("min_severity", SEVERITIES, editing?.min_severity ?? "high", { id: "nf-min-severity" }),
    cooldown: h("input", {
      type: "number",
      id: "nf-cooldown",
      min: 0,
      max: 86400,
      value: String(editing?.cooldown_seconds ?? 300),
    }),
  };
}

/** The chosen type's own fields, drawn again when the type changes; `values()` reads what is filled in. */
function typeFields(types: TypeInfo[], typeSel: HTMLSelectElement, editing?: Channel) {
  const element = h("div", { class: "grid cols-2" });
  let inputs: [string, Kind, HTMLInputElement][] = [];
  const isSecret = (f: string) =>
    types.find((t) => t.type === typeSel.value)?.secret_fields.includes(f) ?? false;
  const render = () => {
    const specs = TYPE_FIELDS[typeSel.value] ?? [];
    inputs = specs.map(([f, , kind]) => [f, kind, typeInput(f, kind, editing?.[f], !!editing, isSecret(f))]);
    mount(
      element,
      specs.map(([, label, , help], i) => field(label, inputs[i]![2], help)),
    );
  };
  typeSel.addEventListener("change", render);
  render();
  const values = () => {
    const out: Record<string, unknown> = {};
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
  return { element, values };
}

/** One type field's input, filled with the channel's value (a secret stays blank, its mask as placeholder). */
function typeInput(
  f: string,
  kind: Kind,
  current: unknown,
  editing: boolean,
  secret: boolean,
): HTMLInputElement {
  const input =
    kind === "bool"
      ? h("input", { type: "checkbox", checked: current === undefined ? true : current === true })
      : h("input", {
          type: kind === "number" ? "number" : kind === "secret" ? "password" : "text",
          class: "mono",
          autocomplete: "off",
          value: secret
            ? ""
            : Array.isArray(current)
              ? current.join(", ")
              : current === undefined || current === null
                ? ""
                : String(current),
          placeholder: editing && secret && current ? `unchanged (${current})` : "",
        });
  input.id = `nf-${f}`;
  return input;
}

/** The finding detail panel of the Findings page. */
import { post, put } from "../api.ts";
import { badge, type Child, h, kv, when } from "../dom.ts";
import { attempt, confirmDialog, toast } from "../feedback.ts";
import { actionSourceLabel, type FindingDetail } from "../types.ts";

const hashKv = (k: string, v: string | null) => [
  h("dt", null, k),
  h("dd", null, v ? h("code", { title: v }, `${v.slice(0, 16)}…`) : "—"),
];

/**
 * What detection leaves alone on purpose, so that someone testing with a published test value is
 * not left guessing why it raised nothing.
 */
const SKIPPED_BY_DESIGN =
  "Skipped by design: published test card numbers (4111 1111 1111 1111, 4242 4242 4242 4242), reserved example and test domains (example.com, *.test), no-reply addresses, documentation addresses and public resolvers (192.0.2.x, 8.8.8.8), and documentation credentials and placeholders (AKIAIOSFODNN7EXAMPLE, your-key-here, changeme). Test with values of your own format instead.";

/** The masked preview as a glob: `AKIA****MPLE` → `AKIA*MPLE`. */
export function previewToPattern(preview: string): string {
  return preview.replace(/\*{2,}|…/g, "*");
}

/**
 * One finding in full (rule, JSON path, masked preview, session context, seen count) with one click
 * to allowlist its value pattern or disable its rule. System events (mode changes, scan errors)
 * have nothing to tune.
 */
export function findingDetail(f: FindingDetail, onClose: () => void): Child[] {
  const system = f.transport === "system" || !f.preview || !f.rule;
  return [
    h(
      "div",
      { class: "row", style: "justify-content:space-between" },
      h("h2", null, `Finding #${f.id}`),
      h(
        "button",
        {
          class: "btn small ghost",
          type: "button",
          "aria-label": "Close detail",
          onclick: onClose,
        },
        "Close",
      ),
    ),
    h("p", null, badge(f.severity), " ", badge(f.action), " ", h("strong", null, f.finding_type)),
    h("p", null, h("code", { id: "detail-preview" }, f.preview || "— (no matched value)")),
    f.description ? h("p", { class: "muted" }, f.description) : null,
    f.detector === "pii" || f.detector === "secrets"
      ? h("p", { class: "muted", id: "detail-skipped-note" }, SKIPPED_BY_DESIGN)
      : null,
    facts(f),
    h("h3", null, "Session context"),
    sessionContext(f),
    h("h3", null, "Tune"),
    system
      ? h(
          "p",
          { class: "muted" },
          "A system event (mode change or scan error): there is no value or rule to tune.",
        )
      : null,
    h("div", { class: "row", hidden: system }, tuneButtons(f)),
  ];
}

/** What matched, where, how it was acted on, and the request it came in. */
function facts(f: FindingDetail): HTMLElement {
  return h(
    "dl",
    { class: "kv" },
    kv("Rule", f.rule),
    kv("Action", `${f.action} (${actionSourceLabel(f.action_source, f.detector)})`),
    kv("Also matched", (f.matched_rules ?? []).filter((r) => r !== f.rule).join(", ") || null),
    kv("Detector", f.detector),
    kv("Location", f.path),
    kv("Offsets", `${f.start}–${f.end}`),
    kv("Decoded from", f.decoded),
    kv("Seen", `${f.seen_count} request${f.seen_count === 1 ? "" : "s"}`),
    kv("First seen", when(f.ts)),
    kv("Last seen", when(f.last_seen)),
    kv("Provider", f.provider),
    kv("Model", f.model),
    kv("Client", f.client_name || f.client),
    kv("Request", f.request_id),
    kv("Transport", f.transport),
  );
}

function sessionContext(f: FindingDetail): HTMLElement {
  return h(
    "dl",
    { class: "kv" },
    [
      h("dt", null, "Session"),
      h(
        "dd",
        null,
        h("a", { href: `#/sessions/${encodeURIComponent(f.session_id)}`, class: "mono" }, f.session_id),
      ),
    ],
    kv("Account", f.account_id),
    kv("Device", f.device_id),
    kv("Source IP", f.source_ip),
    kv("Working directory", f.working_directory),
    kv("Git branch", f.git_branch),
    kv("OS", f.os_platform),
    hashKv("Content hash", f.content_hash),
    hashKv("Value hash", f.value_hash),
  );
}

/** Allowlist the value's pattern (saying first how many recent findings it matches), disable the rule, open it. */
function tuneButtons(f: FindingDetail): HTMLElement[] {
  const pattern = previewToPattern(f.preview);
  const listType = f.detector === "pii" ? "pii" : "secrets";
  const allowlist = async () => {
    let note = "";
    try {
      const t = await post<{ match_count: number }>("/allowlists/test", { pattern });
      note = ` It matches ${t.match_count} recent finding${t.match_count === 1 ? "" : "s"}.`;
    } catch {
      /* the test is informative only */
    }
    const ok = await confirmDialog(
      "Allowlist this value pattern?",
      `Values matching ${pattern} will no longer be reported as ${listType}.${note}`,
      "Add to allowlist",
    );
    if (!ok) return;
    await attempt(async () => {
      await post("/allowlists", { type: listType, pattern });
      toast(`Allowlisted ${pattern} (${listType}).`);
    });
  };
  const disable = async () => {
    const ok = await confirmDialog(
      `Disable rule ${f.rule}?`,
      "The rule stops matching on the next request. You can enable it again on the Rules page.",
      "Disable rule",
      true,
    );
    if (!ok) return;
    await attempt(async () => {
      await put(`/rules/${encodeURIComponent(f.rule)}`, { enabled: false });
      toast(`Rule ${f.rule} disabled.`);
    });
  };
  return [
    h(
      "button",
      { class: "btn", type: "button", id: "allowlist-value", onclick: allowlist },
      `Allowlist ${pattern}`,
    ),
    h(
      "button",
      { class: "btn danger", type: "button", id: "disable-rule", onclick: disable },
      "Disable rule",
    ),
    h("a", { class: "btn", href: `#/rules?q=${encodeURIComponent(f.rule)}` }, "Open rule"),
  ];
}

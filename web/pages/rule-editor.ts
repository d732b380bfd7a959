/**
 * The custom rule form on the Rules page: create a rule, edit a dashboard rule, or try a built-in
 * rule's pattern, with a live test of the pattern against sample text (web/pattern.ts).
 */
import { ApiError, post, put } from "../api.ts";
import { field, h, mount, select } from "../dom.ts";
import { fail, toast } from "../feedback.ts";
import { testPattern } from "../pattern.ts";
import {
  DETECTORS,
  RULE_ACTIONS,
  RULE_DEFAULTS,
  RULE_DESCRIPTION_MAX,
  RULE_NAME_RULE,
  RULE_PATTERN_MAX,
  type Rule,
  SEVERITIES,
} from "../types.ts";

export interface RuleEditor {
  element: HTMLFormElement;
  /** Put a rule in the form: `edit` saves over it (dashboard rules), else it is a template to test or copy. */
  load(r: Rule, edit: boolean): void;
  focus(): void;
}

/** The form's controls. */
interface Fields {
  name: HTMLInputElement;
  pattern: HTMLInputElement;
  detector: HTMLSelectElement;
  severity: HTMLSelectElement;
  action: HTMLSelectElement;
  description: HTMLInputElement;
  tags: HTMLInputElement;
  sample: HTMLTextAreaElement;
}

/** `onSaved(name)` runs after a rule was created or saved. */
export function ruleEditor(onSaved: (name: string) => void): RuleEditor {
  let editing: string | null = null;
  const f = ruleFields();
  const testOut = h("div", { id: "rule-test-result", "aria-live": "polite" });
  const formTitle = h("h2", { id: "rule-form-title" }, "Create a custom rule");
  const submitBtn = h("button", { class: "btn primary", type: "submit", id: "rule-submit" }, "Create rule");
  const cancelEdit = h(
    "button",
    { class: "btn", type: "button", hidden: true, onclick: () => reset() },
    "Cancel edit",
  );
  const runTest = () => showTest(testOut, f.pattern.value, f.sample.value);
  f.pattern.addEventListener("input", runTest);
  f.sample.addEventListener("input", runTest);

  /** Fill the form (null: empty for a new rule) and say what saving it does. */
  const fill = (r: Rule | null, edit: boolean) => {
    editing = r && edit ? r.name : null;
    f.name.value = r ? (edit ? r.name : `${r.name}-custom`) : "";
    f.name.disabled = edit;
    f.pattern.value = r?.pattern ?? "";
    f.detector.value = r?.detector ?? RULE_DEFAULTS.detector;
    f.severity.value = r?.severity ?? RULE_DEFAULTS.severity;
    f.action.value = r?.action ?? RULE_DEFAULTS.action;
    f.description.value = r?.description ?? "";
    f.tags.value = (r?.tags ?? []).join(", ");
    formTitle.textContent = !r
      ? "Create a custom rule"
      : edit
        ? `Edit ${r.name}`
        : `Test ${r.name} (or save a custom copy)`;
    submitBtn.textContent = edit ? "Save rule" : "Create rule";
    cancelEdit.hidden = !r;
    runTest();
  };
  const reset = () => fill(null, false);

  const element = h(
    "form",
    {
      class: "panel",
      id: "rule-form",
      "aria-labelledby": "rule-form-title",
      style: "margin-top:14px",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const name = await saveRule(ruleBody(f), editing);
        if (name === null) return;
        reset();
        onSaved(name);
      },
    },
    formTitle,
    fieldsGrid(f),
    field("Sample text for the live test", f.sample),
    testOut,
    h("div", { class: "row end" }, cancelEdit, submitBtn),
  );
  runTest();

  return {
    element,
    load: (r, edit) => {
      fill(r, edit);
      element.scrollIntoView({ behavior: "smooth", block: "start" });
      f.sample.focus();
    },
    focus: () => {
      f.name.focus();
      element.scrollIntoView({ block: "start" });
    },
  };
}

function ruleFields(): Fields {
  return {
    name: h("input", {
      type: "text",
      id: "rule-name",
      name: "name",
      required: true,
      placeholder: "acme-internal-token",
      autocomplete: "off",
    }),
    pattern: h("input", {
      type: "text",
      id: "rule-pattern",
      name: "pattern",
      required: true,
      placeholder: "acme_[A-Za-z0-9]{24}",
      maxlength: RULE_PATTERN_MAX,
      autocomplete: "off",
      spellcheck: "false",
      class: "mono",
    }),
    detector: select("detector", DETECTORS, RULE_DEFAULTS.detector, { id: "rule-detector" }),
    severity: select("severity", SEVERITIES, RULE_DEFAULTS.severity, { id: "rule-severity" }),
    action: select("action", RULE_ACTIONS, RULE_DEFAULTS.action, { id: "rule-action" }),
    description: h("input", {
      type: "text",
      id: "rule-description",
      name: "description",
      placeholder: "What this rule finds",
      maxlength: RULE_DESCRIPTION_MAX,
    }),
    tags: h("input", { type: "text", id: "rule-tags", name: "tags", placeholder: "internal, token" }),
    sample: h("textarea", {
      id: "rule-sample",
      rows: 4,
      placeholder: "Paste sample text; matches are highlighted as you type.",
    }),
  };
}

function fieldsGrid(f: Fields): HTMLElement {
  const wide = (el: HTMLElement) => h("div", { style: "grid-column: span 2" }, el);
  return h(
    "div",
    { class: "grid cols-3", style: "margin-bottom:10px" },
    field("Name", f.name, RULE_NAME_RULE),
    wide(
      field(
        "Pattern (regular expression)",
        f.pattern,
        "(?i) at the start: case-insensitive. With a capture group, group 1 is the finding.",
      ),
    ),
    field("Detector", f.detector),
    field("Severity", f.severity),
    field("Action", f.action, "default: the detector's action, else the pipeline default"),
    wide(field("Description", f.description)),
    field("Tags (comma separated)", f.tags),
  );
}

/** The live test: the pattern's matches in the sample highlighted, or why there are none. */
function showTest(out: HTMLElement, pattern: string, sample: string) {
  const res = testPattern(pattern, sample);
  if (!res.ok) {
    mount(
      out,
      h("p", { class: "msg", role: "alert", style: "color:var(--danger)" }, `Invalid pattern: ${res.error}`),
    );
    return;
  }
  const warn = res.warning
    ? h("p", { class: "muted", id: "rule-test-warning" }, `Note: ${res.warning}.`)
    : null;
  if (!pattern) return mount(out, h("p", { class: "muted" }, "Type a pattern to test it."));
  if (!sample) return mount(out, h("p", { class: "muted" }, "Paste sample text to test the pattern."), warn);
  const parts: Array<string | HTMLElement> = [];
  let at = 0;
  for (const m of res.matches) {
    if (m.start < at) continue;
    parts.push(sample.slice(at, m.start), h("mark", null, m.text));
    at = m.end;
  }
  parts.push(sample.slice(at));
  mount(
    out,
    h(
      "p",
      { id: "rule-test-count" },
      h("strong", null, `${res.matches.length} match${res.matches.length === 1 ? "" : "es"}`),
      res.matches.length ? " (group 1 when the pattern has a capture group)" : "",
    ),
    res.matches.length ? h("pre", { class: "matches" }, parts) : null,
    warn,
  );
}

function ruleBody(f: Fields) {
  return {
    name: f.name.value.trim(),
    pattern: f.pattern.value,
    detector: f.detector.value,
    severity: f.severity.value,
    action: f.action.value,
    description: f.description.value.trim(),
    tags: f.tags.value
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean),
  };
}

/** Create the rule, or save over `editing`; the rule's name, or null when refused (told in a toast). */
async function saveRule(body: ReturnType<typeof ruleBody>, editing: string | null): Promise<string | null> {
  const local = testPattern(body.pattern, "");
  if (!local.ok) {
    toast(`Invalid pattern: ${local.error}`, "error");
    return null;
  }
  try {
    if (editing) {
      const { name: _n, ...update } = body;
      await put<Rule>(`/rules/${encodeURIComponent(editing)}`, update);
      toast(`Saved ${editing}.`);
    } else {
      const r = await post<Rule>("/rules", body);
      toast(`Created rule ${r.name}.`);
    }
    return editing ?? body.name;
  } catch (err) {
    if (err instanceof ApiError && err.status === 409)
      toast(`A rule named ${body.name} already exists.`, "error");
    else fail(err);
    return null;
  }
}

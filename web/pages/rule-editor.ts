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

/** `onSaved(name)` runs after a rule was created or saved. */
export function ruleEditor(onSaved: (name: string) => void): RuleEditor {
  let editing: string | null = null;
  const fName = h("input", {
    type: "text",
    id: "rule-name",
    name: "name",
    required: true,
    placeholder: "acme-internal-token",
    autocomplete: "off",
  });
  const fPattern = h("input", {
    type: "text",
    id: "rule-pattern",
    name: "pattern",
    required: true,
    placeholder: "acme_[A-Za-z0-9]{24}",
    maxlength: RULE_PATTERN_MAX,
    autocomplete: "off",
    spellcheck: "false",
    class: "mono",
  });
  const fDetector = select("detector", DETECTORS, RULE_DEFAULTS.detector, { id: "rule-detector" });
  const fSeverity = select("severity", SEVERITIES, RULE_DEFAULTS.severity, { id: "rule-severity" });
  const fAction = select("action", RULE_ACTIONS, RULE_DEFAULTS.action, { id: "rule-action" });
  const fDesc = h("input", {
    type: "text",
    id: "rule-description",
    name: "description",
    placeholder: "What this rule finds",
    maxlength: RULE_DESCRIPTION_MAX,
  });
  const fTags = h("input", { type: "text", id: "rule-tags", name: "tags", placeholder: "internal, token" });
  const fSample = h("textarea", {
    id: "rule-sample",
    rows: 4,
    placeholder: "Paste sample text; matches are highlighted as you type.",
  });
  const testOut = h("div", { id: "rule-test-result", "aria-live": "polite" });
  const formTitle = h("h2", { id: "rule-form-title" }, "Create a custom rule");
  const submitBtn = h("button", { class: "btn primary", type: "submit", id: "rule-submit" }, "Create rule");
  const cancelEdit = h(
    "button",
    { class: "btn", type: "button", hidden: true, onclick: () => resetEditor() },
    "Cancel edit",
  );

  const runTest = () => {
    const res = testPattern(fPattern.value, fSample.value);
    if (!res.ok) {
      mount(
        testOut,
        h(
          "p",
          { class: "msg", role: "alert", style: "color:var(--danger)" },
          `Invalid pattern: ${res.error}`,
        ),
      );
      return;
    }
    const warn = res.warning
      ? h("p", { class: "muted", id: "rule-test-warning" }, `Note: ${res.warning}.`)
      : null;
    if (!fPattern.value) return mount(testOut, h("p", { class: "muted" }, "Type a pattern to test it."));
    if (!fSample.value)
      return mount(testOut, h("p", { class: "muted" }, "Paste sample text to test the pattern."), warn);
    const parts: Array<string | HTMLElement> = [];
    let at = 0;
    for (const m of res.matches) {
      if (m.start < at) continue;
      parts.push(fSample.value.slice(at, m.start), h("mark", null, m.text));
      at = m.end;
    }
    parts.push(fSample.value.slice(at));
    mount(
      testOut,
      h(
        "p",
        { id: "rule-test-count" },
        h("strong", null, `${res.matches.length} match${res.matches.length === 1 ? "" : "es"}`),
        res.matches.length ? " (group 1 when the pattern has a capture group)" : "",
      ),
      res.matches.length ? h("pre", { class: "matches" }, parts) : null,
      warn,
    );
  };
  fPattern.addEventListener("input", runTest);
  fSample.addEventListener("input", runTest);

  function resetEditor() {
    editing = null;
    fName.disabled = false;
    for (const el of [fName, fPattern, fDesc, fTags]) el.value = "";
    fDetector.value = RULE_DEFAULTS.detector;
    fSeverity.value = RULE_DEFAULTS.severity;
    fAction.value = RULE_DEFAULTS.action;
    formTitle.textContent = "Create a custom rule";
    submitBtn.textContent = "Create rule";
    cancelEdit.hidden = true;
    runTest();
  }

  function loadIntoEditor(r: Rule, edit: boolean) {
    editing = edit ? r.name : null;
    fName.value = edit ? r.name : `${r.name}-custom`;
    fName.disabled = edit;
    fPattern.value = r.pattern;
    fDetector.value = r.detector;
    fSeverity.value = r.severity;
    fAction.value = r.action;
    fDesc.value = r.description ?? "";
    fTags.value = (r.tags ?? []).join(", ");
    formTitle.textContent = edit ? `Edit ${r.name}` : `Test ${r.name} (or save a custom copy)`;
    submitBtn.textContent = edit ? "Save rule" : "Create rule";
    cancelEdit.hidden = false;
    runTest();
    editorPanel.scrollIntoView({ behavior: "smooth", block: "start" });
    fSample.focus();
  }

  const editorPanel = h(
    "form",
    {
      class: "panel",
      id: "rule-form",
      "aria-labelledby": "rule-form-title",
      style: "margin-top:14px",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const body = {
          name: fName.value.trim(),
          pattern: fPattern.value,
          detector: fDetector.value,
          severity: fSeverity.value,
          action: fAction.value,
          description: fDesc.value.trim(),
          tags: fTags.value
            .split(",")
            .map((t) => t.trim())
            .filter(Boolean),
        };
        const local = testPattern(body.pattern, "");
        if (!local.ok) return toast(`Invalid pattern: ${local.error}`, "error");
        try {
          if (editing) {
            const { name: _n, ...update } = body;
            await put<Rule>(`/rules/${encodeURIComponent(editing)}`, update);
            toast(`Saved ${editing}.`);
          } else {
            const r = await post<Rule>("/rules", body);
            toast(`Created rule ${r.name}.`);
          }
          const name = editing ?? body.name;
          resetEditor();
          onSaved(name);
        } catch (err) {
          if (err instanceof ApiError && err.status === 409)
            toast(`A rule named ${body.name} already exists.`, "error");
          else fail(err);
        }
      },
    },
    formTitle,
    h(
      "div",
      { class: "grid cols-3", style: "margin-bottom:10px" },
      field("Name", fName, RULE_NAME_RULE),
      h(
        "div",
        { style: "grid-column: span 2" },
        field(
          "Pattern (regular expression)",
          fPattern,
          "(?i) at the start: case-insensitive. With a capture group, group 1 is the finding.",
        ),
      ),
      field("Detector", fDetector),
      field("Severity", fSeverity),
      field("Action", fAction, "default: the detector's action, else the pipeline default"),
      h("div", { style: "grid-column: span 2" }, field("Description", fDesc)),
      field("Tags (comma separated)", fTags),
    ),
    field("Sample text for the live test", fSample),
    testOut,
    h("div", { class: "row end" }, cancelEdit, submitBtn),
  );
  runTest();

  return {
    element: editorPanel,
    load: loadIntoEditor,
    focus: () => {
      fName.focus();
      editorPanel.scrollIntoView({ block: "start" });
    },
  };
}

/** Allowlists: config entries read-only, API entries editable, and the test box. */
import { del, get, post } from "../api.ts";
import { ago, badge, field, h, mount, pageHead, select, shortPreview } from "../dom.ts";
import { attempt, confirmDialog, fail, toast } from "../feedback.ts";
import type { PageCtx } from "../state.ts";
import type { AllowEntry, Allowlists, Finding } from "../types.ts";

const TYPES = [
  ["secrets", "Secrets", "Values never reported as secrets (exact or glob, e.g. AKIA*EXAMPLE)."],
  ["pii", "Personal data", "Values never reported as personal data (e.g. *@example.com)."],
  ["paths", "Paths", "JSON paths or file globs never scanned (e.g. tools[*].description)."],
] as const;

interface TestAnswer {
  value_match: boolean;
  matches: Finding[];
  match_count: number;
}

export async function allowlistsPage(ctx: PageCtx) {
  const listsBox = h("div", { class: "grid cols-3" });
  const load = async () => {
    const lists = await get<Allowlists>("/allowlists");
    if (ctx.left()) return;
    mount(
      listsBox,
      TYPES.map(([key, title, help]) => listPanel(key, title, help, lists[key] ?? [], load)),
    );
  };
  mount(
    ctx.root,
    pageHead("Allowlists"),
    listsBox,
    h("div", { class: "grid cols-2" }, addForm(load), testForm()),
  );
  await load();
}

/** One list's entries: those from the API can be removed, those from the config file are read-only. */
function listPanel(
  key: string,
  title: string,
  help: string,
  entries: AllowEntry[],
  reload: () => Promise<void>,
) {
  const remove = async (e: AllowEntry) => {
    if (
      !(await confirmDialog(
        "Remove allowlist entry?",
        `${e.pattern} will be reported again.`,
        "Remove",
        true,
      ))
    )
      return;
    await attempt(async () => {
      await del(`/allowlists/${e.id}`);
      toast(`Removed ${e.pattern}.`);
      await reload();
    });
  };
  return h(
    "section",
    { class: "panel", "aria-labelledby": `al-${key}` },
    h("h2", { id: `al-${key}` }, title),
    h("p", { class: "muted" }, help),
    entries.length === 0
      ? h("p", { class: "muted" }, "No entries.")
      : h(
          "ul",
          { class: "bars", id: `allowlist-${key}` },
          entries.map((e) =>
            h(
              "li",
              { style: "grid-template-columns:minmax(0,1fr) auto auto" },
              h("code", { class: "bar-label", title: e.pattern }, e.pattern),
              e.source === "config" ? badge("config", "info") : badge("api", "on"),
              e.source === "api" && e.id !== undefined
                ? h(
                    "button",
                    {
                      class: "btn small danger",
                      type: "button",
                      "aria-label": `Remove ${e.pattern} from ${title}`,
                      onclick: () => remove(e),
                    },
                    "Remove",
                  )
                : h(
                    "span",
                    { class: "muted", title: "Edit the YAML file to change config entries" },
                    "read-only",
                  ),
            ),
          ),
        ),
  );
}

function addForm(reload: () => Promise<void>): HTMLFormElement {
  const addType = select(
    "type",
    TYPES.map(([k, t]) => [k, t] as [string, string]),
    "secrets",
    { id: "al-add-type" },
  );
  const addPattern = h("input", {
    type: "text",
    id: "al-add-pattern",
    required: true,
    placeholder: "AKIA*EXAMPLE",
    class: "mono",
  });
  const submit = async (e: Event) => {
    e.preventDefault();
    await attempt(async () => {
      await post("/allowlists", { type: addType.value, pattern: addPattern.value.trim() });
      toast(`Added ${addPattern.value.trim()}.`);
      addPattern.value = "";
      await reload();
    });
  };
  return h(
    "form",
    { class: "panel", "aria-labelledby": "al-add-title", onsubmit: submit },
    h("h2", { id: "al-add-title" }, "Add an entry"),
    h(
      "div",
      { class: "row", style: "align-items:flex-end" },
      field("List", addType),
      h("div", { style: "flex:1" }, field("Pattern", addPattern)),
      h("button", { class: "btn primary", type: "submit" }, "Add"),
    ),
    h(
      "p",
      { class: "muted" },
      "Entries added here take effect on the next request. Entries from the config file are read-only here.",
    ),
  );
}

/** Test a pattern: does a value match it, and which recent findings would it allowlist. */
function testForm(): HTMLFormElement {
  const tPattern = h("input", {
    type: "text",
    id: "al-test-pattern",
    required: true,
    placeholder: "*@example.com",
    class: "mono",
  });
  const tValue = h("input", {
    type: "text",
    id: "al-test-value",
    placeholder: "optional: a value to check",
    class: "mono",
  });
  const tOut = h("div", { id: "al-test-result", "aria-live": "polite" });
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await post<TestAnswer>("/allowlists/test", {
        pattern: tPattern.value,
        value: tValue.value || undefined,
      });
      mount(tOut, ...testResult(r, tValue.value !== ""));
    } catch (err) {
      fail(err);
    }
  };
  return h(
    "form",
    { class: "panel", "aria-labelledby": "al-test-title", onsubmit: submit },
    h("h2", { id: "al-test-title" }, "Test a pattern"),
    h(
      "div",
      { class: "row", style: "align-items:flex-end" },
      h("div", { style: "flex:1" }, field("Pattern", tPattern)),
      h("div", { style: "flex:1" }, field("Value", tValue)),
      h("button", { class: "btn", type: "submit" }, "Test"),
    ),
    tOut,
  );
}

function testResult(r: TestAnswer, withValue: boolean) {
  return [
    withValue
      ? h("p", null, r.value_match ? badge("value matches", "on") : badge("value does not match", "off"))
      : null,
    h("p", null, `${r.match_count} recent finding${r.match_count === 1 ? "" : "s"} would be allowlisted.`),
    r.matches.length
      ? h(
          "ul",
          { class: "bars" },
          r.matches.map((f) =>
            h(
              "li",
              { style: "grid-template-columns:auto minmax(0,1fr) auto" },
              badge(f.severity),
              h(
                "span",
                null,
                h("a", { href: `#/findings/${f.id}` }, f.finding_type),
                " ",
                h("code", { title: f.preview }, shortPreview(f.preview)),
              ),
              h("span", { class: "muted" }, ago(f.ts)),
            ),
          ),
        )
      : null,
  ];
}

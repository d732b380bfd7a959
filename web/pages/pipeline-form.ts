/**
 * The Pipeline page's settings form: the stages, the detectors with their actions, the default
 * action and the decoders, saved together through `PUT /api/v1/pipeline`.
 */
import { put } from "../api.ts";
import { badge, dataTable, field, h, num, select } from "../dom.ts";
import { fail, toast } from "../feedback.ts";
import { ACTIONS, type Pipeline, RULE_ACTIONS } from "../types.ts";

type Encoding = NonNullable<Pipeline["stages"][number]["encoding_settings"]>;
const DECODERS = ["base64", "hex", "url", "unicode"] as const;

/** The form's inputs, read when it is saved. */
interface Inputs {
  defaultAction: HTMLSelectElement;
  stages: Map<string, HTMLInputElement>;
  detectors: Map<string, { en: HTMLInputElement; act: HTMLSelectElement }>;
  decoders: Map<string, HTMLInputElement>;
  maxDepth: HTMLInputElement;
}

export function pipelineForm(pipeline: Pipeline): HTMLFormElement {
  const enc = pipeline.stages.find((s) => s.encoding_settings)?.encoding_settings;
  const inputs: Inputs = {
    defaultAction: select("default_action", ACTIONS, pipeline.default_action, { id: "default-action" }),
    stages: new Map(),
    detectors: new Map(),
    decoders: new Map(),
    maxDepth: h("input", {
      type: "number",
      min: 0,
      max: 5,
      value: String(enc?.max_depth ?? 2),
      id: "enc-max-depth",
      style: "width:80px",
    }),
  };
  const stages = stageRows(pipeline, inputs);
  const detectors = detectorRows(pipeline, inputs);
  return h(
    "form",
    {
      class: "stack",
      onsubmit: (e: Event) => save(e, pipeline, inputs, !!enc),
      "aria-label": "Pipeline settings",
    },
    h(
      "section",
      { class: "panel", "aria-labelledby": "stages-title" },
      h("h2", { id: "stages-title" }, "Stages"),
      dataTable(
        { id: "stages-table" },
        [
          ["Stage", "Description", "Group", "Enabled"].map((t) => h("th", { scope: "col" }, t)),
          h("th", { class: "num", scope: "col" }, "Findings"),
        ],
        stages,
      ),
    ),
    h(
      "div",
      { class: "grid cols-2", style: "margin:0" },
      h(
        "section",
        { class: "panel", "aria-labelledby": "det-title" },
        h("h2", { id: "det-title" }, "Detectors and actions"),
        h(
          "div",
          { style: "margin-bottom:10px" },
          field("Default action (when no rule or detector sets one)", inputs.defaultAction),
        ),
        dataTable(
          null,
          [
            ["Detector", "Enabled", "Action"].map((t) => h("th", { scope: "col" }, t)),
            h("th", { class: "num", scope: "col" }, "Findings"),
          ],
          detectors,
        ),
      ),
      encodingPanel(enc, inputs),
    ),
    h(
      "div",
      { class: "row end" },
      h("button", { class: "btn primary", type: "submit", id: "pipeline-save" }, "Save pipeline settings"),
    ),
  );
}

function stageRows(pipeline: Pipeline, inputs: Inputs): HTMLElement[] {
  return pipeline.stages.map((s) => {
    const en = h("input", {
      type: "checkbox",
      checked: s.enabled && s.available,
      disabled: !s.available,
      id: `stage-${s.name}`,
    });
    inputs.stages.set(s.name, en);
    return h(
      "tr",
      null,
      h(
        "td",
        null,
        h("label", { for: en.id }, h("strong", null, s.label || s.name)),
        h("div", { class: "muted mono" }, s.name),
      ),
      h("td", { class: "muted wrap" }, s.description),
      h("td", null, s.group),
      h("td", null, s.available ? en : badge("not available", "off")),
      h("td", { class: "num" }, num(s.finding_count)),
    );
  });
}

function detectorRows(pipeline: Pipeline, inputs: Inputs): HTMLElement[] {
  const dlp = pipeline.stages.find((s) => s.sub_detectors);
  return (dlp?.sub_detectors ?? []).map((d) => {
    const en = h("input", { type: "checkbox", checked: d.enabled, "aria-label": `${d.name} enabled` });
    const act = select(
      `det-${d.name}`,
      RULE_ACTIONS.map(([v, t]) => [v === "" ? "default" : v, t] as [string, string]),
      d.action,
      { "aria-label": `${d.name} action` },
    );
    inputs.detectors.set(d.name, { en, act });
    return h(
      "tr",
      null,
      h("td", null, h("strong", null, d.name)),
      h("td", null, en),
      h("td", null, act),
      h("td", { class: "num" }, num(d.finding_count)),
    );
  });
}

function encodingPanel(enc: Encoding | undefined, inputs: Inputs): HTMLElement {
  const decoders = enc
    ? DECODERS.map((k) => {
        const cb = h("input", { type: "checkbox", checked: enc[k], id: `enc-${k}` });
        inputs.decoders.set(k, cb);
        return h("label", { class: "row", for: cb.id, style: "gap:6px" }, cb, k);
      })
    : [];
  return h(
    "section",
    { class: "panel", "aria-labelledby": "enc-title" },
    h("h2", { id: "enc-title" }, "Encoding"),
    enc
      ? [
          h("p", { class: "muted" }, "Encoded content is decoded before scanning."),
          h("div", { class: "row", role: "group", "aria-label": "Decoders" }, decoders),
          h("div", { style: "margin-top:10px" }, field("Max decoding depth", inputs.maxDepth)),
          h(
            "p",
            { class: "muted" },
            `Decoded length: ${enc.min_decoded_length} to ${enc.max_decoded_length} characters.`,
          ),
        ]
      : h("p", { class: "muted" }, "The encoding stage is not available."),
  );
}

async function save(e: Event, pipeline: Pipeline, inputs: Inputs, hasEncoding: boolean) {
  e.preventDefault();
  const body: Record<string, unknown> = { default_action: inputs.defaultAction.value };
  body.stages = Object.fromEntries(
    pipeline.stages
      .filter((s) => s.available)
      .map((s) => [s.name, { enabled: inputs.stages.get(s.name)!.checked }]),
  );
  body.detectors = Object.fromEntries(
    [...inputs.detectors].map(([name, { en, act }]) => [
      name,
      { enabled: en.checked, action: act.value === "default" ? "" : act.value },
    ]),
  );
  if (hasEncoding)
    body.encoding_settings = {
      ...Object.fromEntries([...inputs.decoders].map(([k, cb]) => [k, cb.checked])),
      max_depth: Number(inputs.maxDepth.value),
    };
  try {
    const res = await put<{
      applied: Record<string, unknown>;
      errors: Array<{ key: string; message: string }>;
    }>("/pipeline", body);
    if (res.errors?.length)
      toast(
        `Some settings were refused: ${res.errors.map((x) => `${x.key}: ${x.message}`).join("; ")}`,
        "error",
      );
    else toast("Pipeline settings saved and applied.");
  } catch (err) {
    fail(err);
  }
}

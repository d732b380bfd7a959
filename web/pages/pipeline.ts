/**
 * Pipeline and settings: stages, detectors with their actions, the default action, encoding settings,
 * the proxy mode (with confirmation) and the sanitized configuration.
 */
import { get, put } from "../api.ts";
import { badge, dataTable, field, h, mount, num, select } from "../dom.ts";
import { confirmDialog, fail, toast } from "../feedback.ts";
import { onLive } from "../live.ts";
import { currentStatus, type PageCtx, refreshStatus } from "../state.ts";
import { ACTIONS, type Pipeline, RULE_ACTIONS } from "../types.ts";

export async function pipelinePage(ctx: PageCtx) {
  const [pipeline, config] = await Promise.all([
    get<Pipeline>("/pipeline"),
    get<Record<string, unknown>>("/config"),
  ]);
  if (ctx.left()) return;
  const st = currentStatus() ?? (await refreshStatus());
  if (ctx.left()) return;

  const configPre = h(
    "pre",
    { class: "config-pre", id: "config-json", tabindex: "0" },
    JSON.stringify(config, null, 2),
  );

  /* ---------- mode ---------- */
  const modeBox = h("section", { class: "panel", "aria-labelledby": "mode-title", id: "mode-panel" });
  const renderMode = (mode: "active" | "passthrough") => {
    const next = mode === "active" ? "passthrough" : "active";
    mount(
      modeBox,
      h("h2", { id: "mode-title" }, "Proxy mode"),
      h(
        "p",
        null,
        "Current mode: ",
        h("strong", { id: "mode-value" }, mode),
        mode === "active" ? " — every request is scanned." : " — requests are forwarded without scanning.",
      ),
      h(
        "button",
        {
          class: `btn ${next === "passthrough" ? "danger" : "primary"}`,
          type: "button",
          id: "mode-toggle",
          onclick: async () => {
            const ok = await confirmDialog(
              next === "passthrough" ? "Switch to passthrough?" : "Turn scanning back on?",
              next === "passthrough"
                ? "Requests will be forwarded without scanning: secrets and personal data are neither detected nor blocked until you switch back. The change is recorded as a mode_changed finding."
                : "Every request will be scanned again.",
              next === "passthrough" ? "Switch to passthrough" : "Switch to active",
              next === "passthrough",
            );
            if (!ok) return;
            try {
              await put("/config", { "proxy.mode": next });
              const s = await refreshStatus();
              renderMode(s.mode);
              toast(`Proxy mode: ${s.mode}.`);
            } catch (err) {
              fail(err);
            }
          },
        },
        next === "passthrough" ? "Switch to passthrough…" : "Switch to active…",
      ),
    );
  };
  renderMode(st.mode);
  ctx.onLeave(
    onLive("mode-changed", (ev) => renderMode(ev.mode === "passthrough" ? "passthrough" : "active")),
  );

  /* ---------- pipeline form ---------- */
  const defaultAction = select("default_action", ACTIONS, pipeline.default_action, { id: "default-action" });
  const stageInputs = new Map<string, HTMLInputElement>();
  const detInputs = new Map<string, { en: HTMLInputElement; act: HTMLSelectElement }>();
  const enc = pipeline.stages.find((s) => s.encoding_settings)?.encoding_settings;
  const encInputs = new Map<string, HTMLInputElement>();

  const stageRows = pipeline.stages.map((s) => {
    const en = h("input", {
      type: "checkbox",
      checked: s.enabled && s.available,
      disabled: !s.available,
      id: `stage-${s.name}`,
    });
    stageInputs.set(s.name, en);
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

  const dlp = pipeline.stages.find((s) => s.sub_detectors);
  const detRows = (dlp?.sub_detectors ?? []).map((d) => {
    const en = h("input", { type: "checkbox", checked: d.enabled, "aria-label": `${d.name} enabled` });
    const act = select(
      `det-${d.name}`,
      RULE_ACTIONS.map(([v, t]) => [v === "" ? "default" : v, t] as [string, string]),
      d.action,
      { "aria-label": `${d.name} action` },
    );
    detInputs.set(d.name, { en, act });
    return h(
      "tr",
      null,
      h("td", null, h("strong", null, d.name)),
      h("td", null, en),
      h("td", null, act),
      h("td", { class: "num" }, num(d.finding_count)),
    );
  });

  const encRows = enc
    ? (["base64", "hex", "url", "unicode"] as const).map((k) => {
        const cb = h("input", { type: "checkbox", checked: enc[k], id: `enc-${k}` });
        encInputs.set(k, cb);
        return h("label", { class: "row", for: cb.id, style: "gap:6px" }, cb, k);
      })
    : [];
  const maxDepth = h("input", {
    type: "number",
    min: 0,
    max: 5,
    value: String(enc?.max_depth ?? 2),
    id: "enc-max-depth",
    style: "width:80px",
  });

  const save = async (e: Event) => {
    e.preventDefault();
    const body: Record<string, unknown> = { default_action: defaultAction.value };
    body.stages = Object.fromEntries(
      pipeline.stages
        .filter((s) => s.available)
        .map((s) => [s.name, { enabled: stageInputs.get(s.name)!.checked }]),
    );
    body.detectors = Object.fromEntries(
      [...detInputs].map(([name, { en, act }]) => [
        name,
        { enabled: en.checked, action: act.value === "default" ? "" : act.value },
      ]),
    );
    if (enc)
      body.encoding_settings = {
        ...Object.fromEntries([...encInputs].map(([k, cb]) => [k, cb.checked])),
        max_depth: Number(maxDepth.value),
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
  };

  mount(
    ctx.root,
    h("div", { class: "page-head" }, h("h1", null, "Pipeline & settings")),
    h(
      "div",
      { class: "grid cols-2" },
      modeBox,
      h(
        "section",
        { class: "panel" },
        h("h2", null, "Build"),
        h(
          "p",
          { class: "muted mono", style: "word-break:break-all" },
          `version ${st.version} · ${st.build_id}`,
        ),
        h(
          "p",
          { class: "muted" },
          `Proxy on ${st.bind}:${st.proxy_port}, dashboard on 127.0.0.1:${st.dashboard_port}. Tier: ${st.tier}.`,
        ),
      ),
    ),
    h(
      "form",
      { class: "stack", onsubmit: save, "aria-label": "Pipeline settings" },
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
          stageRows,
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
            field("Default action (when no rule or detector sets one)", defaultAction),
          ),
          dataTable(
            null,
            [
              ["Detector", "Enabled", "Action"].map((t) => h("th", { scope: "col" }, t)),
              h("th", { class: "num", scope: "col" }, "Findings"),
            ],
            detRows,
          ),
        ),
        h(
          "section",
          { class: "panel", "aria-labelledby": "enc-title" },
          h("h2", { id: "enc-title" }, "Encoding"),
          enc
            ? [
                h("p", { class: "muted" }, "Encoded content is decoded before scanning."),
                h("div", { class: "row", role: "group", "aria-label": "Decoders" }, encRows),
                h("div", { style: "margin-top:10px" }, field("Max decoding depth", maxDepth)),
                h(
                  "p",
                  { class: "muted" },
                  `Decoded length: ${enc.min_decoded_length} to ${enc.max_decoded_length} characters.`,
                ),
              ]
            : h("p", { class: "muted" }, "The encoding stage is not available."),
        ),
      ),
      h(
        "div",
        { class: "row end" },
        h("button", { class: "btn primary", type: "submit", id: "pipeline-save" }, "Save pipeline settings"),
      ),
    ),
    proxySettings(config, async () => {
      const fresh = await get<Record<string, unknown>>("/config");
      configPre.textContent = JSON.stringify(fresh, null, 2);
    }),
    h(
      "section",
      { class: "panel", "aria-labelledby": "cfg-title", style: "margin-top:14px" },
      h("h2", { id: "cfg-title" }, "Configuration in force (sanitized)"),
      configPre,
    ),
  );
}

/** Proxy settings saved through `PUT /api/v1/config` (flat keys; the server validates and reloads). */
const PROXY_KEYS: Array<{ key: string; label: string; hint: string }> = [
  { key: "proxy.timeout", label: "Upstream timeout (s)", hint: "1 to 300" },
  { key: "proxy.retries", label: "Retries", hint: "0 to 5" },
  { key: "proxy.max_connections", label: "Max upstream connections", hint: "1 to 100, applies on restart" },
  { key: "proxy.max_body_size", label: "Max scanned body (bytes)", hint: "larger bodies pass unscanned" },
];

function proxySettings(config: Record<string, unknown>, onSaved: () => Promise<void>): HTMLElement {
  const read = (key: string): unknown =>
    key.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], config);
  const inputs = PROXY_KEYS.map(({ key }) =>
    h("input", {
      type: "number",
      id: `cfg-${key.replace(/\./g, "-")}`,
      value: String(read(key) ?? ""),
      style: "width:140px",
    }),
  );
  return h(
    "form",
    {
      class: "panel",
      style: "margin-top:14px",
      "aria-labelledby": "proxy-title",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const patch: Record<string, number> = {};
        PROXY_KEYS.forEach(({ key }, i) => {
          const v = Number(inputs[i]!.value);
          if (inputs[i]!.value !== "" && v !== read(key)) patch[key] = v;
        });
        if (Object.keys(patch).length === 0) return toast("Nothing changed.", "info");
        try {
          const res = await put<{ changes: string[] }>("/config", patch);
          toast(`Saved: ${res.changes?.length ? res.changes.join("; ") : Object.keys(patch).join(", ")}.`);
          for (const [k, v] of Object.entries(patch)) {
            const parts = k.split(".");
            const parent = parts
              .slice(0, -1)
              .reduce<Record<string, unknown>>((o, p) => (o[p] ??= {}) as Record<string, unknown>, config);
            parent[parts.at(-1)!] = v;
          }
          await onSaved();
        } catch (err) {
          fail(err);
        }
      },
    },
    h("h2", { id: "proxy-title" }, "Proxy settings"),
    h(
      "div",
      { class: "row", style: "align-items:flex-start" },
      PROXY_KEYS.map((k, i) => field(k.label, inputs[i]!, k.hint)),
    ),
    h(
      "div",
      { class: "row end" },
      h("button", { class: "btn primary", type: "submit", id: "proxy-save" }, "Save proxy settings"),
    ),
  );
}

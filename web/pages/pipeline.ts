/**
 * Pipeline and settings: the proxy mode with confirmation (pipeline-mode.ts), the build, the stages,
 * detectors with their actions, the default action and encoding settings (pipeline-form.ts), the
 * proxy settings and the sanitized configuration.
 */
import { get, put } from "../api.ts";
import { field, h, mount, pageHead } from "../dom.ts";
import { fail, toast } from "../feedback.ts";
import { currentStatus, type PageCtx, refreshStatus } from "../state.ts";
import type { Pipeline, Status } from "../types.ts";
import { pipelineForm } from "./pipeline-form.ts";
import { modePanel } from "./pipeline-mode.ts";

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
  mount(
    ctx.root,
    pageHead("Pipeline & settings"),
    h("div", { class: "grid cols-2" }, modePanel(ctx, st.mode), buildPanel(st)),
    pipelineForm(pipeline),
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

function buildPanel(st: Status): HTMLElement {
  return h(
    "section",
    { class: "panel" },
    h("h2", null, "Build"),
    h("p", { class: "muted mono", style: "word-break:break-all" }, `version ${st.version} · ${st.build_id}`),
    h(
      "p",
      { class: "muted" },
      `Proxy on ${st.bind}:${st.proxy_port}, dashboard on 127.0.0.1:${st.dashboard_port}. Tier: ${st.tier}.`,
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

/**
 * The detection pipeline over the API: its stages, detectors and decoding settings as the Pipeline
 * page shows them, and changes to them, each key read and checked on its own (a wrong key is named in
 * `errors`, the right ones are applied) and applied through the reload path.
 */
import type { Elysia } from "elysia";
import type { Config } from "../../config/schema.ts";
import { DETECTORS, RULE_ACTIONS } from "../../core/types.ts";
import type { Ctx } from "../context.ts";
import { objectBody } from "../http.ts";

function pipelineView(cfg: Config, ctx: Ctx) {
  let counts = { byDetector: {} as Record<string, number>, decoded: 0, total: 0 };
  try {
    counts = ctx.store.findings.pipelineCounts();
  } catch {
    /* database busy: show zeros */
  }
  return {
    default_action: cfg.pipeline.default_action,
    stages: [
      {
        name: "outbound_dlp",
        label: "Outbound DLP",
        description: "Scans request bodies for secrets, personal data, proprietary content and custom rules.",
        group: "request",
        enabled: cfg.pipeline.stages.outbound_dlp.enabled,
        available: true,
        finding_count: counts.total,
        sub_detectors: DETECTORS.map((d) => ({
          name: d,
          enabled: cfg.detectors[d].enabled,
          action: cfg.detectors[d].action || "default",
          finding_count: counts.byDetector[d] ?? 0,
        })),
      },
      {
        name: "encoding_decode",
        label: "Encoding decode",
        description: "Decodes base64, hex, URL and unicode escapes before scanning.",
        group: "request",
        enabled: cfg.pipeline.stages.encoding_decode.enabled,
        available: true,
        finding_count: counts.decoded,
        encoding_settings: { ...cfg.pipeline.encoding },
      },
      {
        name: "response_secrets",
        label: "Response secrets",
        description: "Scanning of responses. Not implemented: responses are forwarded without inspection.",
        group: "response",
        enabled: false,
        available: false,
        finding_count: 0,
      },
    ],
  };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** What a `PUT /pipeline` body comes to: config keys to apply, what the answer says was applied, errors. */
interface PipelineChange {
  patch: Obj;
  applied: Obj;
  errors: { key: string; message: string }[];
}

/** Note `value` as applied under `applied[group][name]`. */
function appliedIn(c: PipelineChange, group: string, name: string, value: unknown): void {
  ((c.applied[group] ??= {}) as Obj)[name] = value;
}

function readDefaultAction(value: unknown, c: PipelineChange): void {
  if (["log", "alert", "redact", "block"].includes(value as string)) {
    c.patch["pipeline.default_action"] = value;
    c.applied.default_action = value;
  } else
    c.errors.push({ key: "default_action", message: `must be one of "log", "alert", "redact", "block"` });
}

function readStages(value: unknown, c: PipelineChange): void {
  if (!isObj(value)) {
    c.errors.push({ key: "stages", message: "must be an object of stage name to {enabled}" });
    return;
  }
  for (const [name, s] of Object.entries(value)) {
    const key = `stages.${name}`;
    if (name === "response_secrets") c.errors.push({ key, message: "this stage is not available" });
    else if (name !== "outbound_dlp" && name !== "encoding_decode")
      c.errors.push({ key, message: "unknown stage" });
    else if (!isObj(s) || typeof s.enabled !== "boolean")
      c.errors.push({ key, message: "must be {enabled: boolean}" });
    else {
      c.patch[`pipeline.stages.${name}.enabled`] = s.enabled;
      appliedIn(c, "stages", name, { enabled: s.enabled });
    }
  }
}

function readDetectors(value: unknown, c: PipelineChange): void {
  if (!isObj(value)) {
    c.errors.push({ key: "detectors", message: "must be an object of detector name to {enabled, action}" });
    return;
  }
  for (const [name, d] of Object.entries(value)) {
    const key = `detectors.${name}`;
    if (!(DETECTORS as readonly string[]).includes(name)) {
      c.errors.push({ key, message: "unknown detector" });
      continue;
    }
    if (!isObj(d)) {
      c.errors.push({ key, message: "must be {enabled?, action?}" });
      continue;
    }
    const out: Obj = {};
    if ("enabled" in d) {
      if (typeof d.enabled === "boolean") out.enabled = d.enabled;
      else c.errors.push({ key: `${key}.enabled`, message: "must be a boolean" });
    }
    if ("action" in d) {
      const a = d.action === "default" ? "" : d.action;
      if ((RULE_ACTIONS as readonly unknown[]).includes(a)) out.action = a;
      else
        c.errors.push({
          key: `${key}.action`,
          message: `must be one of "default", "log", "alert", "redact", "block"`,
        });
    }
    for (const [f, v] of Object.entries(out)) c.patch[`detectors.${name}.${f}`] = v;
    if (Object.keys(out).length) appliedIn(c, "detectors", name, out);
  }
}

/** Whether `v` is right for the encoding setting `name`; null for a setting there is not. */
function encodingValueOk(name: string, v: unknown): boolean | null {
  const int = (min: number, max: number) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
  if (["base64", "hex", "url", "unicode"].includes(name)) return typeof v === "boolean";
  if (name === "max_depth") return int(0, 5);
  if (name === "min_decoded_length") return int(1, 1000);
  if (name === "max_decoded_length") return int(8, 10_000_000);
  return null;
}

function readEncoding(value: unknown, c: PipelineChange): void {
  if (!isObj(value)) {
    c.errors.push({ key: "encoding_settings", message: "must be an object" });
    return;
  }
  for (const [name, v] of Object.entries(value)) {
    const key = `encoding_settings.${name}`;
    const ok = encodingValueOk(name, v);
    if (ok === null) c.errors.push({ key, message: "unknown encoding setting" });
    else if (!ok) c.errors.push({ key, message: "invalid value (booleans; max_depth 0 to 5)" });
    else {
      c.patch[`pipeline.encoding.${name}`] = v;
      appliedIn(c, "encoding_settings", name, v);
    }
  }
}

const READERS: Record<string, (value: unknown, c: PipelineChange) => void> = {
  default_action: readDefaultAction,
  stages: readStages,
  detectors: readDetectors,
  encoding_settings: readEncoding,
};

export function pipelineRoutes(app: Elysia, ctx: Ctx): void {
  const { rt } = ctx;

  app.get("/api/v1/pipeline", () => pipelineView(rt.config(), ctx));

  app.put("/api/v1/pipeline", async ({ body }) => {
    const c: PipelineChange = { patch: {}, applied: {}, errors: [] };
    for (const [key, value] of Object.entries(objectBody(body))) {
      const read = READERS[key];
      if (read) read(value, c);
      else c.errors.push({ key, message: `unknown key (allowed: ${Object.keys(READERS).join(", ")})` });
    }
    if (Object.keys(c.patch).length) {
      const res = await rt.reload(c.patch, "api");
      if (!res.ok)
        return { applied: {}, errors: [...c.errors, { key: "(reload)", message: res.error ?? "refused" }] };
    }
    return { applied: c.applied, errors: c.errors };
  });
}

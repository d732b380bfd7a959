/**
 * Configuration, pipeline and allowlists. Every change goes through `rt.reload(patch, "api")`, the
 * same validate-and-swap path as SIGHUP; `proxy.mode` goes through `rt.setMode`.
 *
 * API allowlist entries live in the `allowlists` table and are merged into `allowlists.<type>` of the
 * configuration (through the reload path), so the scanner honours them on the next request.
 */
import type { Elysia } from "elysia";
import { getKey, sanitizeConfig, unflatten, unknownKeys } from "../../config/load.ts";
import type { Config } from "../../config/schema.ts";
import { DETECTORS, RULE_ACTIONS } from "../../core/types.ts";
import { globMatch } from "../../policy/allowlist.ts";
import type { ProxyMode } from "../../runtime/contract.ts";
import { ALLOWLIST_TYPES, type AllowlistType } from "../../store/allowlists.ts";
import type { Ctx } from "../context.ts";
import { ApiError, badRequest, notFound, objectBody } from "../http.ts";

const MODES = ["active", "passthrough"] as const;
const READ_ONLY_KEYS = [/^dashboard\.password$/, /^dashboard$/];

async function applyPatch(ctx: Ctx, patch: Record<string, unknown>) {
  const res = await ctx.rt.reload(patch, "api");
  if (!res.ok) throw new ApiError(400, "invalid_config", res.error ?? "the configuration was refused");
  return res;
}

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

export function settingsRoutes(app: Elysia, ctx: Ctx): void {
  const { rt, store } = ctx;

  app.get("/api/v1/config", () => {
    const c = sanitizeConfig(rt.config()) as Record<string, Record<string, unknown>>;
    c.proxy = { ...c.proxy, mode: rt.mode() };
    return c;
  });

  app.put("/api/v1/config", async ({ body }) => {
    const raw = objectBody(body);
    const keys = Object.keys(raw);
    if (keys.length === 0) throw badRequest("no keys to change");
    for (const k of keys) {
      if (READ_ONLY_KEYS.some((re) => re.test(k)))
        throw badRequest(
          `${k} cannot be changed through the API; edit the config file or SLUICE_DASHBOARD_PASSWORD`,
          "read_only_key",
        );
      if (!/^[a-z_][a-z0-9_]*(\.[a-z0-9_]+)*$/.test(k))
        throw badRequest(`${JSON.stringify(k)} is not a dotted config key`, "unknown_key");
    }
    const unknown = unknownKeys(unflatten(raw));
    if (unknown.length)
      throw badRequest(
        `unknown config key ${unknown.map((u) => JSON.stringify(u)).join(", ")}`,
        "unknown_key",
      );
    let mode: ProxyMode | undefined;
    if ("proxy.mode" in raw) {
      if (!(MODES as readonly unknown[]).includes(raw["proxy.mode"]))
        throw badRequest(
          `proxy.mode = ${JSON.stringify(raw["proxy.mode"])} is invalid: allowed values: "active", "passthrough"`,
          "invalid_config",
        );
      mode = raw["proxy.mode"] as ProxyMode;
    }
    const { "proxy.mode": _m, ...rest } = raw;
    let changes: string[] = [];
    let warnings: string[] = [];
    if (Object.keys(rest).length) {
      const res = await applyPatch(ctx, rest);
      changes = res.changes;
      warnings = res.warnings;
    }
    if (mode && mode !== rt.mode()) {
      const previous = rt.mode();
      rt.setMode(mode, "api");
      changes.push(`proxy.mode: ${JSON.stringify(previous)} -> ${JSON.stringify(mode)}`);
    }
    return { ok: true, changes, warnings, mode: rt.mode() };
  });

  app.get("/api/v1/pipeline", () => pipelineView(rt.config(), ctx));

  app.put("/api/v1/pipeline", async ({ body }) => {
    const raw = objectBody(body);
    const patch: Record<string, unknown> = {};
    const applied: Record<string, unknown> = {};
    const errors: { key: string; message: string }[] = [];
    const isObj = (v: unknown): v is Record<string, unknown> =>
      typeof v === "object" && v !== null && !Array.isArray(v);
    for (const [key, value] of Object.entries(raw)) {
      if (key === "default_action") {
        if (["log", "alert", "redact", "block"].includes(value as string)) {
          patch["pipeline.default_action"] = value;
          applied.default_action = value;
        } else errors.push({ key, message: `must be one of "log", "alert", "redact", "block"` });
      } else if (key === "stages") {
        if (!isObj(value)) {
          errors.push({ key, message: "must be an object of stage name to {enabled}" });
          continue;
        }
        for (const [name, s] of Object.entries(value)) {
          const k = `stages.${name}`;
          if (name === "response_secrets") errors.push({ key: k, message: "this stage is not available" });
          else if (name !== "outbound_dlp" && name !== "encoding_decode")
            errors.push({ key: k, message: "unknown stage" });
          else if (!isObj(s) || typeof s.enabled !== "boolean")
            errors.push({ key: k, message: "must be {enabled: boolean}" });
          else {
            patch[`pipeline.stages.${name}.enabled`] = s.enabled;
            ((applied.stages ??= {}) as Record<string, unknown>)[name] = { enabled: s.enabled };
          }
        }
      } else if (key === "detectors") {
        if (!isObj(value)) {
          errors.push({ key, message: "must be an object of detector name to {enabled, action}" });
          continue;
        }
        for (const [name, d] of Object.entries(value)) {
          const k = `detectors.${name}`;
          if (!(DETECTORS as readonly string[]).includes(name)) {
            errors.push({ key: k, message: "unknown detector" });
            continue;
          }
          if (!isObj(d)) {
            errors.push({ key: k, message: "must be {enabled?, action?}" });
            continue;
          }
          const out: Record<string, unknown> = {};
          if ("enabled" in d) {
            if (typeof d.enabled === "boolean") out.enabled = d.enabled;
            else errors.push({ key: `${k}.enabled`, message: "must be a boolean" });
          }
          if ("action" in d) {
            const a = d.action === "default" ? "" : d.action;
            if ((RULE_ACTIONS as readonly unknown[]).includes(a)) out.action = a;
            else
              errors.push({
                key: `${k}.action`,
                message: `must be one of "default", "log", "alert", "redact", "block"`,
              });
          }
          for (const [f, v] of Object.entries(out)) patch[`detectors.${name}.${f}`] = v;
          if (Object.keys(out).length) ((applied.detectors ??= {}) as Record<string, unknown>)[name] = out;
        }
      } else if (key === "encoding_settings") {
        if (!isObj(value)) {
          errors.push({ key, message: "must be an object" });
          continue;
        }
        for (const [name, v] of Object.entries(value)) {
          const k = `encoding_settings.${name}`;
          const ok = ["base64", "hex", "url", "unicode"].includes(name)
            ? typeof v === "boolean"
            : name === "max_depth"
              ? Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 5
              : name === "min_decoded_length"
                ? Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 1000
                : name === "max_decoded_length"
                  ? Number.isInteger(v) && (v as number) >= 8 && (v as number) <= 10_000_000
                  : null;
          if (ok === null) errors.push({ key: k, message: "unknown encoding setting" });
          else if (!ok) errors.push({ key: k, message: "invalid value (booleans; max_depth 0 to 5)" });
          else {
            patch[`pipeline.encoding.${name}`] = v;
            ((applied.encoding_settings ??= {}) as Record<string, unknown>)[name] = v;
          }
        }
      } else
        errors.push({
          key,
          message: "unknown key (allowed: default_action, stages, detectors, encoding_settings)",
        });
    }
    if (Object.keys(patch).length) {
      const res = await rt.reload(patch, "api");
      if (!res.ok)
        return { applied: {}, errors: [...errors, { key: "(reload)", message: res.error ?? "refused" }] };
    }
    return { applied, errors };
  });

  // ---------------------------------------------------------------- allowlists
  const apiPatterns = (type: AllowlistType) =>
    store.allowlists
      .list()
      .filter((e) => e.list_type === type)
      .map((e) => e.pattern);
  /** Config entries = what the config holds minus what the API added to it. */
  const configPatterns = (type: AllowlistType) => {
    const api = new Set(apiPatterns(type));
    return ((getKey(rt.config(), `allowlists.${type}`) as string[]) ?? []).filter((p) => !api.has(p));
  };

  app.get("/api/v1/allowlists", () => {
    const entries = store.allowlists.list();
    const out: Record<string, unknown> = {};
    for (const type of ALLOWLIST_TYPES)
      out[type] = [
        ...configPatterns(type).map((pattern) => ({ pattern, source: "config" })),
        ...entries
          .filter((e) => e.list_type === type)
          .map((e) => ({ id: e.id, pattern: e.pattern, source: "api" })),
      ];
    out.api_entries = entries;
    return out;
  });

  app.post("/api/v1/allowlists", async ({ body, set }) => {
    const raw = objectBody(body);
    const type = raw.type ?? raw.list_type;
    if (!(ALLOWLIST_TYPES as readonly unknown[]).includes(type))
      throw badRequest(`type must be one of "secrets", "pii", "paths"`);
    if (typeof raw.pattern !== "string" || raw.pattern.trim() === "" || raw.pattern.length > 1000)
      throw badRequest("pattern (a non-empty string up to 1000 characters) is required");
    const t = type as AllowlistType;
    if (configPatterns(t).includes(raw.pattern))
      throw new ApiError(409, "conflict", "this pattern is already in the config file's allowlist");
    const entry = store.allowlists.add(t, raw.pattern);
    if (!entry) throw new ApiError(409, "conflict", "this allowlist entry exists");
    try {
      await applyPatch(ctx, { [`allowlists.${t}`]: [...configPatterns(t), ...apiPatterns(t)] });
    } catch (e) {
      store.allowlists.delete(entry.id);
      throw e;
    }
    set.status = 201;
    return entry;
  });

  app.post("/api/v1/allowlists/test", ({ body }) => {
    const raw = objectBody(body);
    if (typeof raw.pattern !== "string" || raw.pattern === "" || raw.pattern.length > 1000)
      throw badRequest("pattern (a non-empty string) is required");
    if (raw.value !== undefined && typeof raw.value !== "string") throw badRequest("value must be a string");
    const pattern = raw.pattern;
    const exactHash = /[*?]/.test(pattern) ? null : rt.contentHash(pattern);
    const matches: Record<string, unknown>[] = [];
    let scanned = 0;
    for (const f of store.findings.iterate({}, 500)) {
      if (++scanned > 5000 || matches.length >= 20) break;
      const hit =
        (exactHash !== null && f.content_hash === exactHash) ||
        [f.path, f.working_directory, f.preview].some(
          (v) => typeof v === "string" && v !== "" && globMatch(pattern, v),
        );
      if (hit) matches.push(f);
    }
    return {
      value_match: typeof raw.value === "string" ? globMatch(pattern, raw.value) : false,
      matches,
      match_count: matches.length,
    };
  });

  app.delete("/api/v1/allowlists/:id", async ({ params }) => {
    if (!/^\d+$/.test(params.id)) throw badRequest("id must be an integer");
    const entry = store.allowlists.get(Number(params.id));
    if (!entry) throw notFound(`allowlist entry ${params.id}`);
    const cfg = configPatterns(entry.list_type);
    store.allowlists.delete(entry.id);
    try {
      await applyPatch(ctx, { [`allowlists.${entry.list_type}`]: [...cfg, ...apiPatterns(entry.list_type)] });
    } catch (e) {
      store.allowlists.add(entry.list_type, entry.pattern);
      throw e;
    }
    return { deleted: entry.id };
  });
}

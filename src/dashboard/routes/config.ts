/**
 * The configuration over the API: read it (secrets masked) and change dotted keys. Every change goes
 * through `rt.reload(patch, "api")`, the same validate-and-swap path as SIGHUP; `proxy.mode` goes
 * through `rt.setMode`.
 */
import type { Elysia } from "elysia";
import { sanitizeConfig, unflatten, unknownKeys } from "../../config/load.ts";
import type { ProxyMode } from "../../runtime/contract.ts";
import type { Ctx } from "../context.ts";
import { ApiError, badRequest, objectBody } from "../http.ts";

const MODES = ["active", "passthrough"] as const;
const READ_ONLY_KEYS = [/^dashboard\.password$/, /^dashboard$/];

/** Apply dotted config keys through the reload path; 400 `invalid_config` when it refuses them. */
export async function applyPatch(ctx: Ctx, patch: Record<string, unknown>) {
  const res = await ctx.rt.reload(patch, "api");
  if (!res.ok) throw new ApiError(400, "invalid_config", res.error ?? "the configuration was refused");
  return res;
}

export function configRoutes(app: Elysia, ctx: Ctx): void {
  const { rt } = ctx;

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
}

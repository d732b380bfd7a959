/**
 * Allowlists: the entries of the config file (read-only here) and those added through the API. API
 * entries live in the `allowlists` table and are merged into `allowlists.<type>` of the configuration
 * through the reload path, so the scanner honours them on the next request.
 */
import type { Elysia } from "elysia";
import { getKey } from "../../config/load.ts";
import { globMatch } from "../../policy/allowlist.ts";
import { ALLOWLIST_TYPES, type AllowlistType } from "../../store/allowlists.ts";
import type { Ctx } from "../context.ts";
import { ApiError, badRequest, notFound, objectBody } from "../http.ts";
import { applyPatch } from "./config.ts";

/**
 * `POST /allowlists/test`: whether a pattern matches a given value, and which stored findings it
 * would have allowed (by value hash for an exact pattern, else by path, project or preview).
 */
function testPattern({ rt, store }: Ctx, body: unknown) {
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
}

export function allowlistRoutes(app: Elysia, ctx: Ctx): void {
  const { rt, store } = ctx;
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

  app.post("/api/v1/allowlists/test", ({ body }) => testPattern(ctx, body));

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

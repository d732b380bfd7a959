/**
 * Rules: list with every filter, create, get, update, delete (dashboard rules
 * only), clone, bulk-update (≤500 names, one transaction, failures per name) and stats; the analysis
 * endpoints are in rule-analysis.ts.
 * Every change takes effect on the next request (`rt.rulesChanged()`).
 */
import type { Elysia } from "elysia";
import { z } from "zod";
import { customRuleSchema } from "../../config/schema.ts";
import {
  DETECTORS,
  RULE_ACTIONS,
  RULE_DESCRIPTION_MAX,
  RULE_TIERS,
  type RuleDef,
  SEVERITIES,
  VALIDATORS,
} from "../../core/types.ts";
import { checkUserPattern } from "../../detect/pattern.ts";
import { userPatch } from "../../store/rules.ts";
import type { Ctx } from "../context.ts";
import {
  ApiError,
  badRequest,
  boolParam,
  enumParam,
  notFound,
  objectBody,
  pageParams,
  strParam,
} from "../http.ts";

const SOURCES = ["builtin", "config", "dashboard", "import"] as const;

const editable = {
  pattern: customRuleSchema.shape.pattern,
  detector: z.enum(DETECTORS),
  severity: z.enum(SEVERITIES),
  action: z.enum(RULE_ACTIONS),
  enabled: z.boolean(),
  description: z.string().max(RULE_DESCRIPTION_MAX),
  tags: z.array(z.string().min(1).max(64)).max(50),
  validator: z.enum(VALIDATORS).nullable(),
  keywords: z.array(z.string().min(1).max(200)).max(100).nullable(),
};
const createSchema = z
  .object({
    name: customRuleSchema.shape.name,
    pattern: editable.pattern,
    detector: editable.detector.default("custom"),
    severity: editable.severity.default("high"),
    action: editable.action.default(""),
    enabled: editable.enabled.default(true),
    description: editable.description.default(""),
    tags: editable.tags.default([]),
    validator: editable.validator.optional(),
    keywords: editable.keywords.optional(),
  })
  .strict();
const updateSchema = z.object(editable).partial().strict();
type RuleUpdate = z.infer<typeof updateSchema>;

/** An action outside the allowed set is rejected with its own code (`invalid_action`). */
function checkAction(body: Record<string, unknown>): void {
  if ("action" in body && !(RULE_ACTIONS as readonly unknown[]).includes(body.action))
    throw new ApiError(
      400,
      "invalid_action",
      `action ${JSON.stringify(body.action)} is invalid: allowed values are ${RULE_ACTIONS.map((a) => JSON.stringify(a)).join(", ")}`,
    );
}

function checkPattern(pattern: string | undefined): void {
  if (pattern === undefined) return;
  const res = checkUserPattern(pattern);
  if (!res.ok) throw new ApiError(400, "invalid_pattern", res.error);
}

function parse<T>(schema: z.ZodType<T>, body: Record<string, unknown>): T {
  const r = schema.safeParse(body);
  if (!r.success) {
    const iss = r.error.issues[0]!;
    const key =
      iss.path.join(".") ||
      (iss.code === "unrecognized_keys" ? (iss as { keys: string[] }).keys.join(", ") : "body");
    throw badRequest(`${key}: ${iss.message}`);
  }
  return r.data;
}

export function ruleRoutes(app: Elysia, { store, rt }: Ctx): void {
  const changed = () => {
    store.rules.changed();
    rt.rulesChanged();
  };

  app.get("/api/v1/rules", ({ query }) => {
    const { limit, offset } = pageParams(query, 200);
    const filter = {
      search: strParam(query, "search", 500) ?? strParam(query, "q", 500),
      detector: enumParam(query, "detector", DETECTORS),
      tier: enumParam(query, "tier", RULE_TIERS),
      severity: enumParam(query, "severity", SEVERITIES),
      source: enumParam(query, "source", SOURCES),
      enabled: boolParam(query, "enabled"),
      tag: strParam(query, "tag", 64),
    };
    return { ...store.rules.list(filter, limit, offset), limit, offset };
  });

  app.get("/api/v1/rules/stats", () => store.rules.stats());

  const ruleOr404 = (name: string) => {
    const r = store.rules.get(name);
    if (!r) throw notFound(`rule ${JSON.stringify(name)}`);
    return r;
  };

  app.post("/api/v1/rules", ({ body, set }) => {
    const raw = objectBody(body);
    checkAction(raw);
    const input = parse(createSchema, raw);
    checkPattern(input.pattern);
    const rule: RuleDef = {
      ...input,
      validator: input.validator ?? null,
      keywords: input.keywords ?? null,
      tier: "custom",
      source: "dashboard",
    };
    if (!store.rules.insert(rule))
      throw new ApiError(409, "conflict", `a rule named ${JSON.stringify(input.name)} exists`);
    changed();
    set.status = 201;
    return store.rules.get(input.name);
  });

  app.post("/api/v1/rules/bulk-update", ({ body }) => {
    const raw = objectBody(body);
    const names = raw.names;
    if (!Array.isArray(names) || names.length === 0 || !names.every((n) => typeof n === "string"))
      throw badRequest("names must be a non-empty array of rule names");
    if (names.length > 500)
      throw badRequest(`at most 500 names per bulk update (got ${names.length})`, "too_many_names");
    const upd = objectBody(raw.update ?? null);
    checkAction(upd);
    const update: RuleUpdate = parse(updateSchema, upd);
    if (Object.keys(update).length === 0) throw badRequest("update holds no field to change");
    checkPattern(update.pattern);
    const failed: { name: string; reason: string }[] = [];
    let updated = 0;
    const seen = new Set<string>();
    store.rules.transaction(() => {
      for (const name of names as string[]) {
        if (seen.has(name)) {
          failed.push({ name, reason: "listed twice" });
          continue;
        }
        seen.add(name);
        const existing = store.rules.get(name);
        if (existing && store.rules.update(name, userPatch(existing, update))) updated++;
        else failed.push({ name, reason: "rule not found" });
      }
    });
    if (updated > 0) changed();
    return {
      updated,
      failed,
      message: `updated ${updated} of ${names.length} rule${names.length === 1 ? "" : "s"}${failed.length ? `; ${failed.length} failed` : ""}`,
    };
  });

  app.get("/api/v1/rules/:name", ({ params }) => ruleOr404(params.name));

  app.put("/api/v1/rules/:name", ({ params, body }) => {
    const raw = objectBody(body);
    checkAction(raw);
    const update = parse(updateSchema, raw);
    checkPattern(update.pattern);
    store.rules.update(params.name, userPatch(ruleOr404(params.name), update));
    changed();
    return store.rules.get(params.name);
  });

  app.delete("/api/v1/rules/:name", ({ params }) => {
    const r = ruleOr404(params.name);
    if (r.source !== "dashboard")
      throw new ApiError(
        409,
        "read_only",
        `rule ${JSON.stringify(r.name)} comes from ${r.source}; only dashboard rules can be deleted (disable it instead)`,
      );
    store.rules.delete(r.name);
    changed();
    return { deleted: r.name };
  });

  app.post("/api/v1/rules/:name/clone", ({ params, body, set }) => {
    const r = ruleOr404(params.name);
    const raw = body === undefined || body === null || body === "" ? {} : objectBody(body);
    let name: string;
    if (raw.name !== undefined) {
      name = parse(z.object({ name: customRuleSchema.shape.name }), { name: raw.name }).name;
      if (store.rules.get(name))
        throw new ApiError(409, "conflict", `a rule named ${JSON.stringify(name)} exists`);
    } else {
      const base = `${r.name}-copy`.slice(0, 95);
      name = base;
      for (let i = 2; store.rules.get(name); i++) name = `${base}-${i}`;
    }
    const { hit_count: _h, created_at: _c, updated_at: _u, ...def } = r;
    store.rules.insert({ ...def, name, tier: "custom", source: "dashboard", hit_count: 0 });
    changed();
    set.status = 201;
    return store.rules.get(name);
  });
}

/**
 * Rules: list with every filter, create, get, update, delete (dashboard rules
 * only), clone, bulk-update (≤500 names, one transaction, failures per name) and stats; the analysis
 * endpoints are in rule-analysis.ts.
 * Every change takes effect on the next request (`rt.rulesChanged()`).
 */
import type { Elysia } from "elysia";
import {
  API_EDITABLE_FIELDS,
  API_RULE_FIELDS,
  type RuleFieldName,
  type RuleFields,
  readRuleFields,
  withGiven,
} from "../../core/rule.ts";
import {
  DETECTORS,
  RULE_ACTIONS,
  RULE_SOURCES,
  RULE_TIERS,
  type RuleDef,
  SEVERITIES,
} from "../../core/types.ts";
import { checkUserPattern } from "../../detect/pattern.ts";
import { type RuleFilter, userPatch } from "../../store/rules.ts";
import type { Ctx } from "../context.ts";
import {
  ApiError,
  badRequest,
  boolParam,
  enumParam,
  notFound,
  objectBody,
  pageParams,
  type Query,
  strParam,
} from "../http.ts";

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

/** The rule fields of a request body, read as every rule is read (core/rule.ts); 400 names the first wrong one. */
function readBody<K extends RuleFieldName>(
  body: Record<string, unknown>,
  fields: readonly K[],
  partial = false,
): Pick<RuleFields, K> {
  checkAction(body);
  const problems: string[] = [];
  const read = readRuleFields(
    body,
    fields,
    (field, problem, given) => problems.push(`${field ?? "body"}: ${withGiven(problem, given)}`),
    { partial, strict: true },
  );
  if (!read) throw badRequest(problems[0]!);
  checkPattern((read as Partial<RuleFields>).pattern);
  return read;
}

/** The filters of `GET /rules` (`search`/`q`: comma-separated terms, any of them). */
function ruleFilter(query: Query): RuleFilter {
  return {
    search: strParam(query, "search", 500) ?? strParam(query, "q", 500),
    detector: enumParam(query, "detector", DETECTORS),
    tier: enumParam(query, "tier", RULE_TIERS),
    severity: enumParam(query, "severity", SEVERITIES),
    source: enumParam(query, "source", RULE_SOURCES),
    enabled: boolParam(query, "enabled"),
    tag: strParam(query, "tag", 64),
  };
}

/**
 * `POST /rules/bulk-update`: one update for up to 500 rules in one transaction; a name that is not
 * there, or is listed twice, fails alone and is named.
 */
function bulkUpdate(store: Ctx["store"], body: unknown, changed: () => void) {
  const raw = objectBody(body);
  const names = raw.names;
  if (!Array.isArray(names) || names.length === 0 || !names.every((n) => typeof n === "string"))
    throw badRequest("names must be a non-empty array of rule names");
  if (names.length > 500)
    throw badRequest(`at most 500 names per bulk update (got ${names.length})`, "too_many_names");
  const update = readBody(objectBody(raw.update ?? null), API_EDITABLE_FIELDS, true);
  if (Object.keys(update).length === 0) throw badRequest("update holds no field to change");
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
}

export function ruleRoutes(app: Elysia, { store, rt }: Ctx): void {
  const changed = () => {
    store.rules.changed();
    rt.rulesChanged();
  };

  app.get("/api/v1/rules", ({ query }) => {
    const { limit, offset } = pageParams(query, 200);
    return { ...store.rules.list(ruleFilter(query), limit, offset), limit, offset };
  });

  app.get("/api/v1/rules/stats", () => store.rules.stats());

  const ruleOr404 = (name: string) => {
    const r = store.rules.get(name);
    if (!r) throw notFound(`rule ${JSON.stringify(name)}`);
    return r;
  };

  app.post("/api/v1/rules", ({ body, set }) => {
    const input = readBody(objectBody(body), API_RULE_FIELDS);
    const rule: RuleDef = { ...input, tier: "custom", source: "dashboard" };
    if (!store.rules.insert(rule))
      throw new ApiError(409, "conflict", `a rule named ${JSON.stringify(input.name)} exists`);
    changed();
    set.status = 201;
    return store.rules.get(input.name);
  });

  app.post("/api/v1/rules/bulk-update", ({ body }) => bulkUpdate(store, body, changed));

  app.get("/api/v1/rules/:name", ({ params }) => ruleOr404(params.name));

  app.put("/api/v1/rules/:name", ({ params, body }) => {
    const update = readBody(objectBody(body), API_EDITABLE_FIELDS, true);
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
      name = readBody({ name: raw.name }, ["name"]).name;
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

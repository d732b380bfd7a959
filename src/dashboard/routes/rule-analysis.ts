/**
 * Rule analysis: `POST /api/v1/rules/analysis` starts a run in the background (202; 409 while one
 * runs), `GET …/status` follows it (`?since=<n>` for the log lines after the n-th), `GET` answers the
 * cached result (`{available:false}` before a run, or after the rules changed), and `POST …/dismiss`
 * hides a pair of rules from this and later results. The run itself: `../rule-analysis.ts`.
 */
import type { Elysia } from "elysia";
import type { Ctx } from "../context.ts";
import { ApiError, badRequest, notFound, objectBody } from "../http.ts";

export function ruleAnalysisRoutes(app: Elysia, { store, analysis }: Ctx) {
  app.get("/api/v1/rules/analysis", () => {
    const result = analysis.result();
    if (result) return result;
    return {
      available: false,
      reason: analysis.running
        ? "a run is in progress"
        : "no run since sluice started or since the rules last changed",
    };
  });

  app.get("/api/v1/rules/analysis/status", ({ query }) => {
    const raw = (query as Record<string, string | undefined>).since;
    const since = raw === undefined || raw === "" ? 0 : Number(raw);
    if (!Number.isInteger(since) || since < 0)
      throw badRequest("since must be a whole number of log lines, 0 or more");
    return analysis.status(since);
  });

  app.post("/api/v1/rules/analysis", ({ set }) => {
    if (!analysis.start())
      throw new ApiError(
        409,
        "analysis_running",
        "a rule analysis is running; follow it at /api/v1/rules/analysis/status",
      );
    set.status = 202;
    return { started: true, status: "/api/v1/rules/analysis/status" };
  });

  app.post("/api/v1/rules/analysis/dismiss", ({ body }) => {
    const b = objectBody(body);
    for (const key of ["rule_a", "rule_b"] as const)
      if (typeof b[key] !== "string" || b[key] === "") throw badRequest(`${key} must be a rule name`);
    const [a, z] = [b.rule_a as string, b.rule_b as string];
    if (a === z) throw badRequest("rule_a and rule_b must be two different rules");
    for (const name of [a, z]) if (!store.rules.get(name)) throw notFound(`rule ${JSON.stringify(name)}`);
    analysis.dismiss(a, z);
    return { dismissed: [a, z].sort() };
  });
}

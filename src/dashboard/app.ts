/**
 * The dashboard API as an Elysia app, without a socket: `createApp(...).app.handle(new Request(...))`
 * answers in process (tests), `startDashboard` serves it on 127.0.0.1.
 */
import { Elysia } from "elysia";
import type { Runtime } from "../runtime/contract.ts";
import type { Store } from "../store/index.ts";
import type { Ctx } from "./context.ts";
import { ApiError, errorResponse, SECURITY_HEADERS } from "./http.ts";
import { LiveHub } from "./live.ts";
import { allowlistRoutes } from "./routes/allowlists.ts";
import { configRoutes } from "./routes/config.ts";
import { notificationRoutes } from "./routes/notifications.ts";
import { pipelineRoutes } from "./routes/pipeline.ts";
import { recordRoutes } from "./routes/records.ts";
import { ruleAnalysisRoutes } from "./routes/rule-analysis.ts";
import { ruleRoutes } from "./routes/rules.ts";
import { systemRoutes } from "./routes/system.ts";
import { RuleAnalysis } from "./rule-analysis.ts";
import { Guard } from "./security.ts";

export interface AppOptions {
  port: () => number;
  heartbeatMs?: number;
  pollMs?: number;
  maxLoginFailures?: number;
}

export function createApp(rt: Runtime, store: Store, opts: AppOptions) {
  const guard = new Guard({
    port: opts.port,
    password: () => rt.config().dashboard.password,
    sessionTtlMinutes: () => rt.config().dashboard.session_ttl_minutes,
    maxLoginFailures: opts.maxLoginFailures,
  });
  guard.warm();
  const hub = new LiveHub(rt.bus, store, { heartbeatMs: opts.heartbeatMs, pollMs: opts.pollMs });
  const ctx: Ctx = { rt, store, guard, hub, analysis: new RuleAnalysis(store), port: opts.port };

  const app = new Elysia();
  app.onRequest(({ request }) => {
    try {
      guard.check(request, new URL(request.url));
    } catch (e) {
      if (e instanceof ApiError) return errorResponse(e.status, e.code, e.message, e.headers);
      throw e;
    }
  });
  app.onParse(async ({ request }) => {
    if (request.method === "GET" || request.method === "HEAD") return undefined;
    const text = await request.text();
    if (text.trim() === "") return null;
    try {
      return JSON.parse(text);
    } catch {
      throw new ApiError(400, "invalid_json", "the body is not valid JSON");
    }
  });
  app.onError(({ error, code }) => {
    if (error instanceof ApiError)
      return errorResponse(error.status, error.code, error.message, error.headers);
    if (code === "NOT_FOUND") return errorResponse(404, "not_found", "no such endpoint");
    if (code === "PARSE") return errorResponse(400, "invalid_json", "the body is not valid JSON");
    const msg = (error as Error)?.message ?? String(error);
    if (/SQLITE_BUSY|database is locked/i.test(msg))
      return errorResponse(503 as 500, "store_busy", "the database is busy; try again");
    rt.log.error("dashboard: request failed", { error: msg });
    return errorResponse(500, "internal_error", "internal error (see the application log)");
  });
  app.onAfterHandle(({ set }) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) set.headers[k] ??= v;
  });

  systemRoutes(app as unknown as Elysia, ctx);
  recordRoutes(app as unknown as Elysia, ctx);
  ruleRoutes(app as unknown as Elysia, ctx);
  ruleAnalysisRoutes(app as unknown as Elysia, ctx);
  configRoutes(app as unknown as Elysia, ctx);
  pipelineRoutes(app as unknown as Elysia, ctx);
  allowlistRoutes(app as unknown as Elysia, ctx);
  notificationRoutes(app as unknown as Elysia, ctx);

  return { app, guard, hub };
}

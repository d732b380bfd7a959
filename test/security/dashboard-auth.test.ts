/**
 * Attack: with a dashboard password set, read the dashboard without logging in. Every GET route the
 * API has (read from the app itself, so a route added later is covered too) answers 401 without a
 * session, HEAD as well, and answers with one. Exports and `/api/v1/live` are no exception: they
 * stream every finding's path, session, client and hashes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/dashboard/app.ts";
import { openStore, type Store } from "../../src/store/index.ts";
import { makeRuntime } from "../dashboard/_env.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";

const PASSWORD = "correct horse battery staple";
/** Public without a session: whether a login is needed, and the login itself (a POST). */
const OPEN = new Set(["/api/v1/auth/session"]);

let s: InProcessSluice;
let cookie = "";
let getPaths: string[] = [];

/** The GET routes of the dashboard app, with a placeholder for each path parameter. */
function dashboardGetRoutes(): string[] {
  let store: Store | null = null;
  const rt = makeRuntime(() => store!, {}, "/tmp");
  store = openStore({ configDir: mkdtempSync(join(tmpdir(), "sluice-routes-")), bus: rt.bus, log: rt.log });
  const { app, hub } = createApp(rt, store, { port: () => 0 });
  const paths = app.routes
    .filter((r) => r.method === "GET")
    .map((r) => r.path.replace(/:[a-z_]+/g, "placeholder"));
  hub.close();
  void store.close();
  return [...new Set(paths)];
}

beforeAll(async () => {
  getPaths = dashboardGetRoutes();
  s = await startSluice({ config: { dashboard: { password: PASSWORD } } });
  const r = await fetch(`${s.dashboardUrl}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ password: PASSWORD }),
  });
  expect(r.status).toBe(200);
  cookie = r.headers.get("set-cookie")!.split(";")[0]!;
});
afterAll(() => s?.stop());

test("the route list is the real one (exports, live, status and the parameterised routes are in it)", () => {
  for (const p of [
    "/api/v1/live",
    "/api/v1/findings/export",
    "/api/v1/audit/export",
    "/api/v1/status",
    "/api/v1/findings/placeholder",
  ])
    expect(getPaths).toContain(p);
  expect(getPaths.length).toBeGreaterThan(20);
});

test("every GET and HEAD without a session is 401 unauthorized", async () => {
  const answered: Record<string, number> = {};
  for (const path of getPaths.filter((p) => !OPEN.has(p)))
    for (const method of ["GET", "HEAD"]) {
      const r = await fetch(`${s.dashboardUrl}${path}?format=csv`, { method });
      answered[`${method} ${path}`] = r.status;
      if (method === "GET" && r.status === 401) expect((await r.json()).error.code).toBe("unauthorized");
      else await r.body?.cancel();
    }
  const wrong = Object.entries(answered).filter(([, status]) => status !== 401);
  expect(wrong).toEqual([]);
});

test("a forged or expired cookie is no session", async () => {
  for (const c of ["sluice_session=forged", "sluice_session=", `${cookie}x`, "other=1"]) {
    const r = await fetch(`${s.dashboardUrl}/api/v1/findings/export`, { headers: { cookie: c } });
    expect(r.status).toBe(401);
  }
});

test("every GET with the session answers (no 401/403); the live stream opens", async () => {
  const wrong: string[] = [];
  for (const path of getPaths) {
    const ac = new AbortController();
    const r = await fetch(`${s.dashboardUrl}${path}`, { headers: { cookie }, signal: ac.signal });
    if (r.status === 401 || r.status === 403 || r.status >= 500) wrong.push(`${path} ${r.status}`);
    if (path === "/api/v1/live") {
      expect(r.headers.get("content-type")).toContain("text/event-stream");
      const first = new TextDecoder().decode((await r.body!.getReader().read()).value);
      expect(first).toContain("retry:");
    }
    ac.abort();
  }
  expect(wrong).toEqual([]);
});

test("the session endpoint says a login is needed and hands out no CSRF token", async () => {
  const r = await fetch(`${s.dashboardUrl}/api/v1/auth/session`);
  expect(await r.json()).toEqual({ authenticated: false, password_required: true, csrf_token: null });
});

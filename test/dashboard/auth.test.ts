/**
 * The auth matrix over a real socket: with and without a password × no session, bad CSRF token,
 * foreign Host, foreign Origin × GET, POST, PUT, DELETE, SSE. Plus login, cookie, rate limit, CORS.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDashboard } from "../../src/dashboard/index.ts";
import { openStore, type Store } from "../../src/store/index.ts";
import { rule } from "../helpers/records.ts";
import { makeRuntime } from "./_env.ts";

interface Server {
  base: string;
  port: number;
  store: Store;
  stop(): Promise<void>;
}

async function serve(password: string | null): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-auth-"));
  let store: Store;
  const rt = makeRuntime(() => store, password ? { dashboard: { password } } : {}, dir);
  store = openStore({ configDir: dir, bus: rt.bus, log: rt.log, flushIntervalMs: 5 });
  store.importDefaultRules([rule()]);
  const h = await startDashboard(rt, store, { port: 0, hostname: "127.0.0.1", maxLoginFailures: 5 });
  return {
    base: `http://127.0.0.1:${h.port}`,
    port: h.port,
    store,
    async stop() {
      await h.stop();
      await store.close();
    },
  };
}

type Cond = "none" | "bad_csrf" | "foreign_host" | "foreign_origin" | "good";
type Verb = "GET" | "POST" | "PUT" | "DELETE" | "SSE";

let counter = 0;
async function call(
  s: Server,
  verb: Verb,
  cond: Cond,
  auth: { cookie?: string; csrf?: string },
): Promise<Response> {
  const headers: Record<string, string> = {};
  if (cond !== "none" && auth.cookie) headers.cookie = auth.cookie;
  if (verb !== "GET" && verb !== "SSE") {
    if (cond === "bad_csrf") headers["x-csrf-token"] = "not-the-token";
    else if (cond !== "none" && auth.csrf) headers["x-csrf-token"] = auth.csrf;
  }
  if (cond === "foreign_host") headers.host = `evil.example:${s.port}`;
  if (cond === "foreign_origin") headers.origin = "http://evil.example";
  const n = ++counter;
  const req: Record<Verb, [string, string, unknown?]> = {
    GET: ["GET", "/api/v1/status"],
    SSE: ["GET", "/api/v1/live"],
    POST: ["POST", "/api/v1/rules", { name: `auth-rule-${n}`, pattern: "AUTH[0-9]{6}" }],
    PUT: ["PUT", "/api/v1/config", { "proxy.timeout": 30 + (n % 100) }],
    DELETE: ["DELETE", `/api/v1/rules/auth-del-${n}`],
  };
  const [method, path, body] = req[verb];
  if (verb === "DELETE")
    s.store.rules.insert(rule({ name: `auth-del-${n}`, source: "dashboard", tier: "custom" }));
  if (body) headers["content-type"] = "application/json";
  const ac = new AbortController();
  const r = await fetch(`${s.base}${path}`, {
    method,
    headers,
    body: body ? JSON.stringify(body) : undefined,
    signal: ac.signal,
  });
  if (verb === "SSE" && r.status === 200) {
    const reader = r.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain("retry:");
    ac.abort();
  }
  return r;
}

const VERBS: Verb[] = ["GET", "POST", "PUT", "DELETE", "SSE"];
const OK: Record<Verb, number> = { GET: 200, POST: 201, PUT: 200, DELETE: 200, SSE: 200 };

function noCors(r: Response) {
  for (const [k] of r.headers) expect(k.toLowerCase().startsWith("access-control-")).toBe(false);
}

type Expected = Record<Cond, Record<Verb, [number, string?]>>;
const everyVerb = (e: [number, string?]) =>
  Object.fromEntries(VERBS.map((v) => [v, e])) as Record<Verb, [number, string?]>;

/** The rows that do not depend on whether a password is set. */
const SAME_EITHER_WAY: Pick<Expected, "foreign_host" | "foreign_origin" | "good"> = {
  foreign_host: everyVerb([403, "forbidden_host"]),
  foreign_origin: everyVerb([403, "forbidden_origin"]),
  good: Object.fromEntries(VERBS.map((v) => [v, [OK[v]]])) as Record<Verb, [number]>,
};

/** One test per condition × verb: status, no CORS headers, and the error code where one is expected. */
function matrix(expected: Expected, server: () => Server, auth: () => { cookie?: string; csrf?: string }) {
  for (const cond of Object.keys(expected) as Cond[])
    for (const verb of VERBS)
      test(`${cond} × ${verb} → ${expected[cond][verb][0]}`, async () => {
        const r = await call(server(), verb, cond, auth());
        expect(r.status).toBe(expected[cond][verb][0]);
        noCors(r);
        if (expected[cond][verb][1]) expect((await r.json()).error.code).toBe(expected[cond][verb][1]);
      });
}

describe("without a password", () => {
  let s: Server;
  let csrf = "";
  beforeAll(async () => {
    s = await serve(null);
    csrf = (await (await fetch(`${s.base}/api/v1/auth/session`)).json()).csrf_token;
  });
  afterAll(() => s.stop());

  const expected: Expected = {
    none: {
      GET: [200],
      POST: [403, "csrf_failed"],
      PUT: [403, "csrf_failed"],
      DELETE: [403, "csrf_failed"],
      SSE: [200],
    },
    bad_csrf: {
      GET: [200],
      POST: [403, "csrf_failed"],
      PUT: [403, "csrf_failed"],
      DELETE: [403, "csrf_failed"],
      SSE: [200],
    },
    ...SAME_EITHER_WAY,
  };
  matrix(
    expected,
    () => s,
    () => ({ csrf }),
  );

  test("session endpoint hands out the CSRF token; login is not needed", async () => {
    const r = await (await fetch(`${s.base}/api/v1/auth/session`)).json();
    expect(r).toEqual({ authenticated: true, password_required: false, csrf_token: csrf });
    const l = await fetch(`${s.base}/api/v1/auth/login`, {
      method: "POST",
      body: JSON.stringify({ password: "x" }),
    });
    expect(l.status).toBe(400);
  });

  test("localhost and [::1] Host names are accepted, other ports are not", async () => {
    expect(
      (await fetch(`${s.base}/api/v1/status`, { headers: { host: `localhost:${s.port}` } })).status,
    ).toBe(200);
    expect((await fetch(`${s.base}/api/v1/status`, { headers: { host: `[::1]:${s.port}` } })).status).toBe(
      200,
    );
    expect(
      (await fetch(`${s.base}/api/v1/status`, { headers: { host: `127.0.0.1:${s.port + 1}` } })).status,
    ).toBe(403);
    expect((await fetch(`${s.base}/api/v1/status`, { headers: { host: "127.0.0.1" } })).status).toBe(403);
  });

  test("same-origin Origin is accepted; Sec-Fetch-Site cross-site and Origin null are refused", async () => {
    const h = { "x-csrf-token": csrf, "content-type": "application/json" };
    const ok = await fetch(`${s.base}/api/v1/config`, {
      method: "PUT",
      headers: { ...h, origin: `http://127.0.0.1:${s.port}` },
      body: JSON.stringify({ "proxy.retries": 2 }),
    });
    expect(ok.status).toBe(200);
    expect(
      (
        await fetch(`${s.base}/api/v1/config`, {
          method: "PUT",
          headers: { ...h, origin: "null" },
          body: "{}",
        })
      ).status,
    ).toBe(403);
    expect(
      (await fetch(`${s.base}/api/v1/status`, { headers: { "sec-fetch-site": "cross-site" } })).status,
    ).toBe(403);
  });

  test("the UI page is served at /", async () => {
    const r = await fetch(`${s.base}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
  });
});

describe("with a password", () => {
  let s: Server;
  let cookie = "";
  let csrf = "";
  beforeAll(async () => {
    s = await serve("correct horse battery staple");
    const r = await fetch(`${s.base}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ password: "correct horse battery staple" }),
    });
    expect(r.status).toBe(200);
    const set = r.headers.get("set-cookie")!;
    expect(set).toContain("HttpOnly");
    expect(set).toContain("SameSite=Strict");
    expect(set).toContain("Path=/");
    cookie = set.split(";")[0]!;
    csrf = (await r.json()).csrf_token;
    expect(csrf.length).toBeGreaterThan(20);
  });
  afterAll(() => s.stop());

  const expected: Expected = {
    none: {
      GET: [401, "unauthorized"],
      POST: [401, "unauthorized"],
      PUT: [401, "unauthorized"],
      DELETE: [401, "unauthorized"],
      SSE: [401, "unauthorized"],
    },
    bad_csrf: {
      GET: [200],
      POST: [403, "csrf_failed"],
      PUT: [403, "csrf_failed"],
      DELETE: [403, "csrf_failed"],
      SSE: [200],
    },
    ...SAME_EITHER_WAY,
  };
  matrix(
    expected,
    () => s,
    () => ({ cookie, csrf }),
  );

  test("exports need a session like every other GET (stricter than the original specification)", async () => {
    expect((await fetch(`${s.base}/api/v1/findings/export?format=json`)).status).toBe(401);
    expect((await fetch(`${s.base}/api/v1/audit/export?format=csv`)).status).toBe(401);
    expect(
      (await fetch(`${s.base}/api/v1/findings/export?format=json`, { headers: { cookie } })).status,
    ).toBe(200);
    expect((await fetch(`${s.base}/api/v1/findings`)).status).toBe(401);
    expect((await fetch(`${s.base}/api/v1/config`)).status).toBe(401);
    const sess = await (await fetch(`${s.base}/api/v1/auth/session`)).json();
    expect(sess).toEqual({ authenticated: false, password_required: true, csrf_token: null });
  });

  test("path tricks do not reach an endpoint without a session", async () => {
    for (const p of [
      "//api/v1/status",
      "/%61pi/v1/status",
      "/api/v1/status/",
      "/API/v1/status",
      "/api/v1/live/../status",
    ]) {
      const r = await fetch(`${s.base}${p}`);
      expect({ p, status: r.status }).toEqual({ p, status: 401 });
    }
  });

  test("a CSRF token of another session does not work", async () => {
    const other = await fetch(`${s.base}/api/v1/auth/login`, {
      method: "POST",
      body: JSON.stringify({ password: "correct horse battery staple" }),
    });
    const otherCsrf = (await other.json()).csrf_token;
    const r = await fetch(`${s.base}/api/v1/config`, {
      method: "PUT",
      headers: { cookie, "x-csrf-token": otherCsrf },
      body: JSON.stringify({ "proxy.retries": 3 }),
    });
    expect(r.status).toBe(403);
  });

  test("logout ends the session", async () => {
    const l = await fetch(`${s.base}/api/v1/auth/login`, {
      method: "POST",
      body: JSON.stringify({ password: "correct horse battery staple" }),
    });
    const c = l.headers.get("set-cookie")!.split(";")[0]!;
    const t = (await l.json()).csrf_token;
    expect((await fetch(`${s.base}/api/v1/status`, { headers: { cookie: c } })).status).toBe(200);
    const out = await fetch(`${s.base}/api/v1/auth/logout`, {
      method: "POST",
      headers: { cookie: c, "x-csrf-token": t },
    });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await fetch(`${s.base}/api/v1/status`, { headers: { cookie: c } })).status).toBe(401);
  });

  test("wrong passwords are rate limited (429 with Retry-After), then even the right one waits", async () => {
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${s.base}/api/v1/auth/login`, {
        method: "POST",
        body: JSON.stringify({ password: `wrong-${i}` }),
      });
      expect(r.status).toBe(401);
      expect((await r.json()).error.code).toBe("invalid_password");
    }
    const r = await fetch(`${s.base}/api/v1/auth/login`, {
      method: "POST",
      body: JSON.stringify({ password: "correct horse battery staple" }),
    });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await r.json()).error.code).toBe("rate_limited");
  });
});

/** Status, build, client catalog, logs, login and the live stream. */
import { existsSync, readFileSync } from "node:fs";
import type { Elysia } from "elysia";
import { settingLines, tools } from "../../connect/tools.ts";
import { buildId, buildInfo, STANDALONE } from "../../core/build-info.ts";
import { sanitizeLine } from "../../core/log.ts";
import { type ClientEntry, clientCatalog, matchClient } from "../clients.ts";
import type { Ctx } from "../context.ts";
import { objectBody, SECURITY_HEADERS } from "../http.ts";

/**
 * `GET /api/v1/clients`: the client catalog (with the extensions' clients), when each was last seen,
 * and the lines `sluice connect` prints for the tools it knows.
 */
function clientsView({ rt, store }: Ctx) {
  const addr = rt.proxyAddress();
  const host = addr.host.includes(":") ? `[${addr.host}]` : addr.host;
  const connectTools = tools(`http://${host}:${addr.port}`, process.env);
  const catalog = [
    ...clientCatalog(`http://${host}:${addr.port}`),
    ...rt.extensionClients().map(
      (c): ClientEntry => ({
        id: c.id,
        display_name: c.display_name,
        category: "cli",
        provider: "multiple",
        ua_prefixes: c.ua_prefixes ?? [],
        proxy_config: {
          config_type: "env",
          setup_instructions: c.setup,
          env_var: null,
          setup_cmd: c.setup,
        },
        website: c.website ?? "",
      }),
    ),
  ];
  const seen = new Map<string, string>();
  let rows: { client: string; last_seen: string }[] = [];
  try {
    rows = [...store.audit.clientsSeen(), ...store.sessions.clientsSeen()];
  } catch {
    /* database busy */
  }
  for (const r of rows) {
    const e = matchClient(catalog, r.client);
    if (e && (seen.get(e.id) ?? "") < r.last_seen) seen.set(e.id, r.last_seen);
  }
  return {
    clients: catalog.map((c) => {
      // The same lines `sluice connect` prints, for the tools it knows.
      const tool = connectTools.find((t) => t.client === c.id);
      return {
        ...c,
        seen: seen.has(c.id),
        last_seen: seen.get(c.id) ?? null,
        connect: tool ? { tool: tool.id, lines: settingLines(tool) } : null,
      };
    }),
  };
}

/** `GET /api/v1/logs/download`: the application log with its rotated files, oldest first, sanitized. */
function logDownload(rt: Ctx["rt"]): Response {
  const file = rt.log.file;
  let text: string;
  if (file && existsSync(file)) {
    const parts: string[] = [];
    for (let i = rt.log.maxFiles; i >= 1; i--)
      if (existsSync(`${file}.${i}`)) parts.push(readFileSync(`${file}.${i}`, "utf8"));
    parts.push(readFileSync(file, "utf8"));
    text = parts.join("");
  } else text = rt.log.recent.join("\n");
  const body = text.split("\n").map(sanitizeLine).join("\n");
  return new Response(body.endsWith("\n") || body === "" ? body : `${body}\n`, {
    headers: {
      ...SECURITY_HEADERS,
      "content-type": "text/plain; charset=utf-8",
      "content-disposition": `attachment; filename="sluice-${new Date().toISOString().slice(0, 10)}.log"`,
    },
  });
}

export function systemRoutes(app: Elysia, ctx: Ctx): void {
  const { rt, store, guard, hub } = ctx;

  app.get("/api/v1/status", () => {
    const s = rt.stats();
    const addr = rt.proxyAddress();
    return {
      status: "ok",
      version: rt.version,
      uptime: (Date.now() - rt.startedAt.getTime()) / 1000,
      started_at: rt.startedAt.toISOString(),
      tier: "community",
      mode: rt.mode(),
      proxy_port: addr.port,
      bind: addr.host,
      standalone: STANDALONE,
      dashboard_port: ctx.port(),
      requests: s.requests,
      active_requests: s.active_requests,
      findings: s.findings,
      by_action: s.by_action,
      build_id: buildId(),
      password_required: guard.passwordRequired(),
      live_clients: hub.size,
      store: store.queueStats(),
      audit: store.auditStats(),
    };
  });

  app.get("/api/v1/build", () => buildInfo());

  app.get("/api/v1/clients", () => clientsView(ctx));

  app.get("/api/v1/logs/tail", () => ({ lines: rt.log.recent.slice(-100).map(sanitizeLine) }));

  app.get("/api/v1/logs/download", () => logDownload(rt));

  app.get("/api/v1/live", ({ request }) => hub.connect(request.signal));

  app.get("/api/v1/auth/session", ({ request }) => guard.describe(request));
  app.post("/api/v1/auth/login", async ({ body, set }) => {
    const raw = objectBody(body);
    const { cookie, csrf_token } = await guard.login(raw.password);
    set.headers["set-cookie"] = cookie;
    return { csrf_token };
  });
  app.post("/api/v1/auth/logout", ({ request, set }) => {
    set.headers["set-cookie"] = guard.logout(request);
    return { ok: true };
  });
}

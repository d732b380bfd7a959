/**
 * The agent's HTTP endpoints on 127.0.0.1 (8070 by default), without authentication:
 * `GET /health` (the agent and the sluice it runs; 200 while sluice answers, else 503) and
 * `GET /api/v1/build` (the agent's own build identity). Loopback only, and only for a loopback
 * `Host` (a web page that rebinds a DNS name to 127.0.0.1 gets 403), no CORS.
 */
import { buildInfo } from "../core/build-info.ts";

export interface AgentServerOptions {
  port: number;
  /** The `/health` record and whether the supervised sluice is up. */
  health: () => { ok: boolean; body: Record<string, unknown> };
}

const NO_STORE = { "cache-control": "no-store" };

function error(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status, headers: NO_STORE });
}

export function startAgentServer(opts: AgentServerOptions) {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port,
    fetch(req, srv) {
      const url = new URL(req.url);
      const host = (req.headers.get("host") ?? "").toLowerCase();
      const port = srv.port;
      if (![`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host))
        return error(403, "forbidden_host", "the Host header must name this agent on a loopback address");
      if (req.method !== "GET" && req.method !== "HEAD")
        return error(
          405,
          "method_not_allowed",
          `${req.method} is not allowed here: the agent only answers GET`,
        );
      if (url.pathname === "/health") {
        const h = opts.health();
        return Response.json(h.body, { status: h.ok ? 200 : 503, headers: NO_STORE });
      }
      if (url.pathname === "/api/v1/build") return Response.json(buildInfo(), { headers: NO_STORE });
      return error(404, "not_found", `no such endpoint: ${url.pathname} (try /health or /api/v1/build)`);
    },
  });
  return server;
}

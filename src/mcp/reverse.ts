/**
 * Mode 3, HTTP reverse proxy: `sluice mcp --listen :<port> --upstream http(s)://…`. MCP clients that
 * speak Streamable HTTP connect to sluice on loopback; each POST body, JSON answer and SSE event
 * passes the security core, one core per `Mcp-Session-Id`.
 */
import type { Server } from "bun";
import type { UpstreamTls } from "../config/load.ts";
import type { Logger } from "../core/log.ts";
import type { McpSession } from "./core.ts";
import { cleanHeaders, filterSse, forwardText, requestsIn, tlsInit, transportError } from "./http-common.ts";

export interface ReverseOptions {
  host: string;
  port: number;
  upstream: URL;
  log: Logger;
  /** A fresh security core for a new MCP session. */
  newSession: () => McpSession;
  headers: [string, string][];
  tls?: UpstreamTls;
}

const MAX_SESSIONS = 1000;
const LOOPBACK_HOSTS = /^(?:127\.\d+\.\d+\.\d+|localhost|\[::1\])(?::\d+)?$/i;

function jsonResponse(body: string, status = 200, headers?: Headers): Response {
  const h = headers ?? new Headers();
  h.set("content-type", "application/json");
  return new Response(body, { status, headers: h });
}

export function startReverseProxy(opts: ReverseOptions): Server<undefined> {
  const { upstream, log } = opts;
  const sessions = new Map<string, McpSession>();
  let stateless: McpSession | null = null;

  const target = (url: URL): URL => {
    if (url.pathname === "/" || url.pathname === upstream.pathname) {
      const t = new URL(upstream);
      if (url.search) t.search = url.search;
      return t;
    }
    return new URL(url.pathname + url.search, upstream.origin);
  };

  /** Remember a session's core; the oldest is forgotten beyond MAX_SESSIONS (clients that never DELETE). */
  const remember = (id: string, s: McpSession) => {
    sessions.set(id, s);
    while (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
  };

  const sessionFor = (id: string | null): McpSession => {
    if (id) {
      let s = sessions.get(id);
      if (!s) remember(id, (s = opts.newSession()));
      return s;
    }
    return opts.newSession();
  };

  const server = Bun.serve({
    hostname: opts.host,
    port: opts.port,
    idleTimeout: 255,
    maxRequestBodySize: 256 * 1024 * 1024,
    async fetch(req, srv) {
      // DNS-rebinding guard: a web page must not reach the MCP server through sluice.
      const host = req.headers.get("host") ?? "";
      if (!LOOPBACK_HOSTS.test(host))
        return new Response("sluice: Host must be a loopback address\n", { status: 403 });
      const url = new URL(req.url);
      const sid = req.headers.get("mcp-session-id");
      const method = req.method;
      const headers = cleanHeaders(req.headers);
      for (const [k, v] of opts.headers) headers.set(k, v);
      if (method !== "POST") {
        srv.timeout(req, 0);
        let res: Response;
        try {
          res = await fetch(target(url), {
            method,
            headers,
            redirect: "manual",
            signal: req.signal,
            ...tlsInit(opts.tls),
          });
        } catch (err) {
          return new Response(`sluice: cannot reach the MCP server: ${(err as Error).message}\n`, {
            status: 502,
          });
        }
        if (method === "DELETE" && res.ok && sid) sessions.delete(sid);
        const rh = cleanHeaders(res.headers);
        if (res.body && res.headers.get("content-type")?.includes("text/event-stream")) {
          const s = sid ? sessionFor(sid) : (stateless ??= opts.newSession());
          return new Response(filterSse(res.body, s), { status: res.status, headers: rh });
        }
        return new Response(res.body, { status: res.status, headers: rh });
      }

      const text = await req.text();
      const session = sid ? sessionFor(sid) : (stateless ?? opts.newSession());
      const o = await session.fromClient(text);
      const fwd = forwardText(o, text);
      const batch = text.trimStart().startsWith("[");
      if (fwd === null) {
        if (!o.replies.length) return new Response(null, { status: 202 });
        return jsonResponse(batch ? `[${o.replies.join(",")}]` : o.replies[0]!);
      }
      srv.timeout(req, 0);
      let res: Response;
      try {
        res = await fetch(target(url), {
          ...tlsInit(opts.tls),
          method,
          headers,
          body: fwd,
          redirect: "manual",
          signal: req.signal,
        });
      } catch (err) {
        log.warn(`cannot reach MCP server: ${(err as Error).message}`, { upstream: upstream.href });
        const errs = requestsIn(fwd).ids.map((id) =>
          transportError(id, `sluice could not reach the MCP server: ${(err as Error).message}`),
        );
        return jsonResponse(errs.length === 1 && !batch ? errs[0]! : `[${errs.join(",")}]`, 502);
      }
      const newSid = res.headers.get("mcp-session-id");
      if (newSid && !sessions.has(newSid)) remember(newSid, session);
      else if (!newSid && !sid && res.ok) stateless ??= session;
      const rh = cleanHeaders(res.headers);
      const type = res.headers.get("content-type") ?? "";
      if (type.includes("text/event-stream") && res.body) {
        return new Response(filterSse(res.body, session, o.replies), { status: res.status, headers: rh });
      }
      if (type.includes("application/json")) {
        const body = await res.text();
        const so = body.trim()
          ? await session.fromServer(body)
          : { forward: "original" as const, replies: [] };
        let outText = forwardText(so, body);
        if (o.replies.length) {
          const parts = outText?.trim() ? [outText.trim().replace(/^\[|\]$/g, "")] : [];
          outText = `[${[...parts, ...o.replies].join(",")}]`;
        }
        if (outText === null) return new Response(null, { status: 202, headers: rh });
        return new Response(outText, { status: res.status, headers: rh });
      }
      if (o.replies.length && (res.status === 202 || res.status === 204)) {
        await res.body?.cancel();
        return jsonResponse(`[${o.replies.join(",")}]`, 200, rh);
      }
      return new Response(res.body, { status: res.status, headers: rh });
    },
  });
  return server;
}

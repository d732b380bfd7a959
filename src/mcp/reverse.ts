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
  const proxy = new ReverseProxy(opts);
  return Bun.serve({
    hostname: opts.host,
    port: opts.port,
    idleTimeout: 255,
    maxRequestBodySize: 256 * 1024 * 1024,
    fetch: (req, srv) => proxy.handle(req, srv),
  });
}

/** The MCP sessions seen through the listener, each with its security core, and how a request is relayed. */
class ReverseProxy {
  readonly #sessions = new Map<string, McpSession>();
  /** The core of a server that keeps no session ids. */
  #stateless: McpSession | null = null;

  constructor(private readonly opts: ReverseOptions) {}

  async handle(req: Request, srv: Server<undefined>): Promise<Response> {
    // DNS-rebinding guard: a web page must not reach the MCP server through sluice.
    const host = req.headers.get("host") ?? "";
    if (!LOOPBACK_HOSTS.test(host))
      return new Response("sluice: Host must be a loopback address\n", { status: 403 });
    const headers = cleanHeaders(req.headers);
    for (const [k, v] of this.opts.headers) headers.set(k, v);
    return req.method === "POST" ? this.#post(req, srv, headers) : this.#other(req, srv, headers);
  }

  #target(url: URL): URL {
    const { upstream } = this.opts;
    if (url.pathname === "/" || url.pathname === upstream.pathname) {
      const t = new URL(upstream);
      if (url.search) t.search = url.search;
      return t;
    }
    return new URL(url.pathname + url.search, upstream.origin);
  }

  /** Remember a session's core; the oldest is forgotten beyond MAX_SESSIONS (clients that never DELETE). */
  #remember(id: string, s: McpSession): void {
    this.#sessions.set(id, s);
    while (this.#sessions.size > MAX_SESSIONS)
      this.#sessions.delete(this.#sessions.keys().next().value as string);
  }

  #sessionFor(id: string | null): McpSession {
    if (!id) return this.opts.newSession();
    let s = this.#sessions.get(id);
    if (!s) this.#remember(id, (s = this.opts.newSession()));
    return s;
  }

  /** GET (the server's event stream) and DELETE (the session's end): relayed, SSE events through the core. */
  async #other(req: Request, srv: Server<undefined>, headers: Headers): Promise<Response> {
    const sid = req.headers.get("mcp-session-id");
    srv.timeout(req, 0);
    let res: Response;
    try {
      res = await fetch(this.#target(new URL(req.url)), {
        method: req.method,
        headers,
        redirect: "manual",
        signal: req.signal,
        ...tlsInit(this.opts.tls),
      });
    } catch (err) {
      return new Response(`sluice: cannot reach the MCP server: ${(err as Error).message}\n`, {
        status: 502,
      });
    }
    if (req.method === "DELETE" && res.ok && sid) this.#sessions.delete(sid);
    const rh = cleanHeaders(res.headers);
    if (res.body && res.headers.get("content-type")?.includes("text/event-stream")) {
      const s = sid ? this.#sessionFor(sid) : (this.#stateless ??= this.opts.newSession());
      return new Response(filterSse(res.body, s), { status: res.status, headers: rh });
    }
    return new Response(res.body, { status: res.status, headers: rh });
  }

  /** A client message: through the core, then to the server (unless the core answered it), then its answer back. */
  async #post(req: Request, srv: Server<undefined>, headers: Headers): Promise<Response> {
    const { upstream, log } = this.opts;
    const sid = req.headers.get("mcp-session-id");
    const text = await req.text();
    const session = sid ? this.#sessionFor(sid) : (this.#stateless ?? this.opts.newSession());
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
      res = await fetch(this.#target(new URL(req.url)), {
        ...tlsInit(this.opts.tls),
        method: "POST",
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
    if (newSid && !this.#sessions.has(newSid)) this.#remember(newSid, session);
    else if (!newSid && !sid && res.ok) this.#stateless ??= session;
    return this.#answer(res, session, o.replies);
  }

  /** The server's answer to a POST, through the core, with the core's own replies added. */
  async #answer(res: Response, session: McpSession, replies: string[]): Promise<Response> {
    const rh = cleanHeaders(res.headers);
    const type = res.headers.get("content-type") ?? "";
    if (type.includes("text/event-stream") && res.body)
      return new Response(filterSse(res.body, session, replies), { status: res.status, headers: rh });
    if (type.includes("application/json")) {
      const body = await res.text();
      const so = body.trim() ? await session.fromServer(body) : { forward: "original" as const, replies: [] };
      let outText = forwardText(so, body);
      if (replies.length) {
        const parts = outText?.trim() ? [outText.trim().replace(/^\[|\]$/g, "")] : [];
        outText = `[${[...parts, ...replies].join(",")}]`;
      }
      if (outText === null) return new Response(null, { status: 202, headers: rh });
      return new Response(outText, { status: res.status, headers: rh });
    }
    if (replies.length && (res.status === 202 || res.status === 204)) {
      await res.body?.cancel();
      return jsonResponse(`[${replies.join(",")}]`, 200, rh);
    }
    return new Response(res.body, { status: res.status, headers: rh });
  }
}

/**
 * Mode 2, HTTP bridge: `sluice mcp --upstream http(s)://…`. The client speaks newline-delimited
 * JSON-RPC on stdio; sluice speaks Streamable HTTP to the server (POST per message, JSON or SSE
 * answers, a GET SSE stream for server-initiated messages), keeping `Mcp-Session-Id`.
 */
import type { UpstreamTls } from "../config/load.ts";
import type { Logger } from "../core/log.ts";
import type { McpSession } from "./core.ts";
import { forwardText, oneLine, requestsIn, tlsInit, transportError } from "./http-common.ts";
import { idKey } from "./jsonrpc.ts";
import { SseParser } from "./sse.ts";
import { lineText, pumpLines, StdoutWriter, untilSignal } from "./stdio.ts";

export interface HttpBridgeOptions {
  upstream: URL;
  session: McpSession;
  log: Logger;
  /** Extra request headers (`--header`), e.g. Authorization. */
  headers: [string, string][];
  tls?: UpstreamTls;
  input?: ReadableStream<Uint8Array>;
}

/** Reopening the GET stream: pause between attempts, and consecutive failures before giving up. */
const GET_RETRY_MS = 1000;
const GET_RETRIES = 5;

/** How long answers still in flight may take once the client closed its input. */
const EOF_GRACE_MS = 5000;

export async function runHttpBridge(opts: HttpBridgeOptions): Promise<number> {
  const { upstream, session, log } = opts;
  const out = new StdoutWriter();
  let sessionId: string | null = null;
  let getStream: AbortController | null = null;
  const inflight = new Set<Promise<void>>();
  /** Aborts the POST carrying a request, by request id (for notifications/cancelled). */
  const aborts = new Map<string, AbortController>();

  const headers = (accept: string): Headers => {
    const h = new Headers(opts.headers);
    h.set("accept", accept);
    if (sessionId) h.set("mcp-session-id", sessionId);
    if (session.protocolVersion) h.set("mcp-protocol-version", session.protocolVersion);
    return h;
  };

  /** One message from the server, to the client (and its replies back to the server). */
  const fromServer = async (text: string) => {
    const o = await session.fromServer(text);
    for (const r of o.replies) void post(r);
    const fwd = forwardText(o, text);
    if (fwd !== null) out.write(`${oneLine(fwd)}\n`);
  };

  /** Reads an SSE body, handing each message to fromServer; returns the last event id seen. */
  const readSse = async (body: ReadableStream<Uint8Array>): Promise<string | undefined> => {
    const parser = new SseParser();
    const decoder = new TextDecoder();
    const events: string[] = [];
    let lastId: string | undefined;
    const onEvent = (e: { data: string | null; event: string; id?: string }) => {
      if (e.id !== undefined) lastId = e.id;
      if (e.data !== null && (!e.event || e.event === "message") && e.data.trim()) events.push(e.data);
    };
    for await (const chunk of body) {
      parser.push(decoder.decode(chunk, { stream: true }), onEvent);
      while (events.length) await fromServer(events.shift()!);
    }
    parser.end(onEvent);
    while (events.length) await fromServer(events.shift()!);
    return lastId;
  };

  /**
   * The GET stream carries server-initiated messages. When it drops, it is reopened with
   * `Last-Event-ID` (the server may replay what was missed), a few times in a row at most.
   */
  const openGetStream = async () => {
    if (getStream) return;
    const ac = new AbortController();
    getStream = ac;
    let lastId: string | undefined;
    for (let failures = 0; failures < GET_RETRIES && !ac.signal.aborted; ) {
      try {
        const h = headers("text/event-stream");
        if (lastId !== undefined) h.set("last-event-id", lastId);
        const res = await fetch(upstream, {
          method: "GET",
          headers: h,
          signal: ac.signal,
          redirect: "manual",
          ...tlsInit(opts.tls),
        });
        if (!res.ok || !res.body || !res.headers.get("content-type")?.includes("text/event-stream")) {
          await res.body?.cancel();
          return; // 405: the server offers no stream; that is allowed
        }
        failures = 0;
        lastId = (await readSse(res.body)) ?? lastId;
      } catch (err) {
        if (ac.signal.aborted) return;
        failures++;
        log.debug(`GET stream ended: ${(err as Error).message}`);
      }
      if (!ac.signal.aborted) await new Promise((r) => setTimeout(r, GET_RETRY_MS));
    }
  };

  const post = async (body: string, sent = requestsIn(body)) => {
    const { ids } = sent;
    const isInit = !sessionId && sent.initialize;
    const ac = new AbortController();
    for (const id of ids) aborts.set(idKey(id), ac);
    try {
      const res = await fetch(upstream, {
        signal: ac.signal,
        method: "POST",
        headers: (() => {
          const h = headers("application/json, text/event-stream");
          h.set("content-type", "application/json");
          return h;
        })(),
        body,
        redirect: "manual",
        ...tlsInit(opts.tls),
      });
      const sid = res.headers.get("mcp-session-id");
      if (sid) sessionId = sid;
      const type = res.headers.get("content-type") ?? "";
      if (res.status === 202 || res.status === 204) {
        await res.body?.cancel();
      } else if (!res.ok) {
        const detail = (await res.text().catch(() => "")).slice(0, 300);
        log.warn(`upstream answered HTTP ${res.status}`, { upstream: upstream.href });
        let forwarded = false;
        // A JSON-RPC error body is the server's answer: forward it.
        if (type.includes("application/json") && detail.includes('"jsonrpc"')) {
          try {
            JSON.parse(detail);
            await fromServer(detail);
            forwarded = true;
          } catch {
            /* truncated or not JSON */
          }
        }
        if (!forwarded)
          for (const id of ids) {
            session.tracker.settle(id);
            out.write(`${transportError(id, `MCP server answered HTTP ${res.status}`)}\n`);
          }
      } else if (type.includes("text/event-stream") && res.body) {
        await readSse(res.body);
      } else {
        const text = await res.text();
        if (text.trim()) await fromServer(text);
      }
      if (isInit && res.ok) void openGetStream();
    } catch (err) {
      if (ac.signal.aborted) return; // cancelled by the client, or shutting down
      log.warn(`cannot reach MCP server: ${(err as Error).message}`, { upstream: upstream.href });
      for (const id of ids) {
        session.tracker.settle(id);
        out.write(
          `${transportError(id, `sluice could not reach the MCP server: ${(err as Error).message}`)}\n`,
        );
      }
    } finally {
      for (const id of ids) if (aborts.get(idKey(id)) === ac) aborts.delete(idKey(id));
    }
  };

  /** The client cancelled a request: stop waiting for its answer (the server gets the notification). */
  const onCancelled = (text: string) => {
    if (!text.includes("notifications/cancelled")) return;
    try {
      const m = JSON.parse(text) as { method?: string; params?: { requestId?: string | number } };
      const id = m.params?.requestId;
      if (m.method === "notifications/cancelled" && id !== undefined) {
        const ac = aborts.get(idKey(id));
        // Let the notification go out first, then drop the now-pointless stream.
        if (ac) setTimeout(() => ac.abort(), 100);
      }
    } catch {
      /* not JSON */
    }
  };

  const signal = untilSignal();
  const input = pumpLines(opts.input ?? Bun.stdin.stream(), async (line) => {
    const text = lineText(line);
    const o = await session.fromClient(text);
    for (const r of o.replies) out.write(`${r}\n`);
    const fwd = forwardText(o, text);
    if (fwd === null) return;
    onCancelled(fwd);
    // The initialize exchange must finish before anything else is sent (it creates the session).
    const sent = requestsIn(fwd);
    const p = post(fwd, sent);
    if (!sessionId && sent.initialize) await p;
    else {
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    }
  });
  const stoppedBy = await Promise.race([input.then(() => null), signal.promise]);
  signal.dispose();

  // The client closed its input: give answers still on their way a moment, then stop.
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    stoppedBy ? Promise.resolve() : Promise.allSettled([...inflight]),
    new Promise((resolve) => (timer = setTimeout(resolve, EOF_GRACE_MS))),
  ]);
  clearTimeout(timer);
  for (const ac of aborts.values()) ac.abort();
  (getStream as AbortController | null)?.abort();
  if (sessionId) {
    await fetch(upstream, {
      method: "DELETE",
      headers: headers("application/json"),
      ...tlsInit(opts.tls),
    }).catch(() => {});
  }
  return stoppedBy ? 128 + (stoppedBy === "SIGINT" ? 2 : stoppedBy === "SIGHUP" ? 1 : 15) : 0;
}

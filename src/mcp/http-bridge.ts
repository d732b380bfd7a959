/**
 * Mode 2, HTTP bridge: `sluice mcp --upstream http(s)://…`. The client speaks newline-delimited
 * JSON-RPC on stdio; sluice speaks Streamable HTTP to the server (POST per message, JSON or SSE
 * answers, a GET SSE stream for server-initiated messages), keeping `Mcp-Session-Id`.
 */
import {
  type BridgeOptions,
  forwardText,
  oneLine,
  requestsIn,
  tlsInit,
  transportError,
} from "./http-common.ts";
import { idKey } from "./jsonrpc.ts";
import { SseParser } from "./sse.ts";
import { lineText, pumpLines, StdoutWriter, untilSignal } from "./stdio.ts";

/** Reopening the GET stream: pause between attempts, and consecutive failures before giving up. */
const GET_RETRY_MS = 1000;
const GET_RETRIES = 5;

/** How long answers still in flight may take once the client closed its input. */
const EOF_GRACE_MS = 5000;

export async function runHttpBridge(opts: BridgeOptions): Promise<number> {
  return new HttpBridge(opts).run();
}

/** One bridged session: the client's stdio on one side, the server's Streamable HTTP on the other. */
class HttpBridge {
  readonly #out = new StdoutWriter();
  #sessionId: string | null = null;
  #getStream: AbortController | null = null;
  readonly #inflight = new Set<Promise<void>>();
  /** Aborts the POST carrying a request, by request id (for notifications/cancelled). */
  readonly #aborts = new Map<string, AbortController>();

  constructor(private readonly opts: BridgeOptions) {}

  /** Until the client closes its input or a signal comes; the exit code. */
  async run(): Promise<number> {
    const { session } = this.opts;
    const signal = untilSignal();
    const input = pumpLines(this.opts.input ?? Bun.stdin.stream(), async (line) => {
      const text = lineText(line);
      const o = await session.fromClient(text);
      for (const r of o.replies) this.#out.write(`${r}\n`);
      const fwd = forwardText(o, text);
      if (fwd === null) return;
      this.#onCancelled(fwd);
      // The initialize exchange must finish before anything else is sent (it creates the session).
      const sent = requestsIn(fwd);
      const p = this.#post(fwd, sent);
      if (!this.#sessionId && sent.initialize) await p;
      else {
        this.#inflight.add(p);
        void p.finally(() => this.#inflight.delete(p));
      }
    });
    const stoppedBy = await Promise.race([input.then(() => null), signal.promise]);
    signal.dispose();
    await this.#close(stoppedBy !== null);
    return stoppedBy ? 128 + (stoppedBy === "SIGINT" ? 2 : stoppedBy === "SIGHUP" ? 1 : 15) : 0;
  }

  /** The client is gone: give answers still on their way a moment (unless a signal came), then end the session. */
  async #close(signalled: boolean): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      signalled ? Promise.resolve() : Promise.allSettled([...this.#inflight]),
      new Promise((resolve) => (timer = setTimeout(resolve, EOF_GRACE_MS))),
    ]);
    clearTimeout(timer);
    for (const ac of this.#aborts.values()) ac.abort();
    this.#getStream?.abort();
    if (this.#sessionId)
      await fetch(this.opts.upstream, {
        method: "DELETE",
        headers: this.#headers("application/json"),
        ...tlsInit(this.opts.tls),
      }).catch(() => {});
  }

  #headers(accept: string): Headers {
    const h = new Headers(this.opts.headers);
    h.set("accept", accept);
    if (this.#sessionId) h.set("mcp-session-id", this.#sessionId);
    if (this.opts.session.protocolVersion) h.set("mcp-protocol-version", this.opts.session.protocolVersion);
    return h;
  }

  /** One message from the server, to the client (and its replies back to the server). */
  async #fromServer(text: string): Promise<void> {
    const o = await this.opts.session.fromServer(text);
    for (const r of o.replies) void this.#post(r);
    const fwd = forwardText(o, text);
    if (fwd !== null) this.#out.write(`${oneLine(fwd)}\n`);
  }

  /** Reads an SSE body, handing each message to #fromServer; returns the last event id seen. */
  async #readSse(body: ReadableStream<Uint8Array>): Promise<string | undefined> {
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
      while (events.length) await this.#fromServer(events.shift()!);
    }
    parser.end(onEvent);
    while (events.length) await this.#fromServer(events.shift()!);
    return lastId;
  }

  /**
   * The GET stream carries server-initiated messages. When it drops, it is reopened with
   * `Last-Event-ID` (the server may replay what was missed), a few times in a row at most.
   */
  async #openGetStream(): Promise<void> {
    if (this.#getStream) return;
    const ac = new AbortController();
    this.#getStream = ac;
    let lastId: string | undefined;
    for (let failures = 0; failures < GET_RETRIES && !ac.signal.aborted; ) {
      try {
        const h = this.#headers("text/event-stream");
        if (lastId !== undefined) h.set("last-event-id", lastId);
        const res = await fetch(this.opts.upstream, {
          method: "GET",
          headers: h,
          signal: ac.signal,
          redirect: "manual",
          ...tlsInit(this.opts.tls),
        });
        if (!res.ok || !res.body || !res.headers.get("content-type")?.includes("text/event-stream")) {
          await res.body?.cancel();
          return; // 405: the server offers no stream; that is allowed
        }
        failures = 0;
        lastId = (await this.#readSse(res.body)) ?? lastId;
      } catch (err) {
        if (ac.signal.aborted) return;
        failures++;
        this.opts.log.debug(`GET stream ended: ${(err as Error).message}`);
      }
      if (!ac.signal.aborted) await new Promise((r) => setTimeout(r, GET_RETRY_MS));
    }
  }

  /** POST one message (or batch) to the server and hand its answer, JSON or SSE, to the client. */
  async #post(body: string, sent = requestsIn(body)): Promise<void> {
    const { upstream, log } = this.opts;
    const { ids } = sent;
    const isInit = !this.#sessionId && sent.initialize;
    const ac = new AbortController();
    for (const id of ids) this.#aborts.set(idKey(id), ac);
    try {
      const headers = this.#headers("application/json, text/event-stream");
      headers.set("content-type", "application/json");
      const res = await fetch(upstream, {
        signal: ac.signal,
        method: "POST",
        headers,
        body,
        redirect: "manual",
        ...tlsInit(this.opts.tls),
      });
      const sid = res.headers.get("mcp-session-id");
      if (sid) this.#sessionId = sid;
      const type = res.headers.get("content-type") ?? "";
      if (res.status === 202 || res.status === 204) await res.body?.cancel();
      else if (!res.ok) await this.#refused(res, type, ids);
      else if (type.includes("text/event-stream") && res.body) await this.#readSse(res.body);
      else {
        const text = await res.text();
        if (text.trim()) await this.#fromServer(text);
      }
      if (isInit && res.ok) void this.#openGetStream();
    } catch (err) {
      if (ac.signal.aborted) return; // cancelled by the client, or shutting down
      log.warn(`cannot reach MCP server: ${(err as Error).message}`, { upstream: upstream.href });
      this.#failAll(ids, `sluice could not reach the MCP server: ${(err as Error).message}`);
    } finally {
      for (const id of ids) if (this.#aborts.get(idKey(id)) === ac) this.#aborts.delete(idKey(id));
    }
  }

  /** The server answered an error status: its JSON-RPC error body goes to the client, else a transport error. */
  async #refused(res: Response, type: string, ids: (string | number)[]): Promise<void> {
    const detail = (await res.text().catch(() => "")).slice(0, 300);
    this.opts.log.warn(`upstream answered HTTP ${res.status}`, { upstream: this.opts.upstream.href });
    if (type.includes("application/json") && detail.includes('"jsonrpc"')) {
      try {
        JSON.parse(detail);
        await this.#fromServer(detail);
        return;
      } catch {
        /* truncated or not JSON */
      }
    }
    this.#failAll(ids, `MCP server answered HTTP ${res.status}`);
  }

  /** Answer each request of `ids` with a transport error. */
  #failAll(ids: (string | number)[], message: string): void {
    for (const id of ids) {
      this.opts.session.tracker.settle(id);
      this.#out.write(`${transportError(id, message)}\n`);
    }
  }

  /** The client cancelled a request: stop waiting for its answer (the server gets the notification). */
  #onCancelled(text: string): void {
    if (!text.includes("notifications/cancelled")) return;
    try {
      const m = JSON.parse(text) as { method?: string; params?: { requestId?: string | number } };
      const id = m.params?.requestId;
      if (m.method === "notifications/cancelled" && id !== undefined) {
        const ac = this.#aborts.get(idKey(id));
        // Let the notification go out first, then drop the now-pointless stream.
        if (ac) setTimeout(() => ac.abort(), 100);
      }
    } catch {
      /* not JSON */
    }
  }
}

/**
 * An HTTPS stand-in for a provider upstream (api.anthropic.com and friends) on `Bun.serve` port 0,
 * with the test CA's certificate. It records every request it receives and answers per-route
 * handlers supplied by the test. Unmatched requests get a 404 JSON body.
 *
 * @example
 * await using up = await startUpstream();
 * up.on("POST", "/v1/messages", () => json({ id: "msg_1", type: "message", content: [] }));
 * const ctl = sse();                                   // an SSE body the test drives step by step
 * up.on("POST", "/v1/chat/completions", () => ctl.response());
 * ctl.send("data: {}\n\n"); ctl.end();
 * up.on("POST", "/slow", hang);                       // never answers
 * up.ws("/v1/responses");                              // WebSocket upgrade, echoes every frame
 * await startUpstream({ wsDeflate: true });            // its WebSockets accept permessage-deflate
 * // up.url (https://127.0.0.1:<port>), up.requests[i].sha256, up.resetUrl (TLS port that drops every connection)
 * // up.connections: TCP connections requests arrived on (requests[i].remotePort tells which)
 * const r = await up.nextRequest();                    // resolves on the next request received
 */
import type { Server, ServerWebSocket, TCPSocketListener } from "bun";
import { testTls } from "./tls.ts";

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  path: string;
  headers: Headers;
  body: Uint8Array;
  /** Hex sha256 of the body bytes. */
  sha256: string;
  /** Resolves when the client (sluice) aborts or the response finished. */
  closed: Promise<void>;
  /** True once the request's signal aborted (the client went away before the response ended). */
  aborted: boolean;
  /** The client's TCP port: requests with the same port came over the same connection. */
  remotePort: number;
}

export type Handler = (req: RecordedRequest, raw: Request) => Response | Promise<Response>;

export interface WsScript {
  /** Called after the upgrade; default does nothing. */
  open?(ws: ServerWebSocket<WsData>): void;
  /** Called for every frame; default echoes it back unchanged. */
  message?(ws: ServerWebSocket<WsData>, msg: string | Buffer): void;
  /** Headers for the 101 response. */
  headers?: Record<string, string>;
  /** Refuse the upgrade with this response instead. */
  refuse?: () => Response;
}

export interface WsData {
  path: string;
  script: WsScript;
  request: RecordedRequest;
}

type Matcher = string | RegExp | ((path: string) => boolean);
interface Route {
  method: string;
  match: Matcher;
  handler?: Handler;
  ws?: WsScript;
}

function matches(m: Matcher, path: string): boolean {
  const pathname = path.split("?")[0]!;
  if (typeof m === "string")
    return pathname === m || (m.endsWith("*") && pathname.startsWith(m.slice(0, -1)));
  if (m instanceof RegExp) return m.test(path);
  return m(path);
}

export function json(body: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  return new Response(JSON.stringify(body), { ...init, headers });
}

/** A non-streaming Anthropic Messages reply saying `text`, as `messages.create` expects it. */
export function anthropicMessage(text = "ok", model = "claude-test-model") {
  return {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

/** A handler that never answers (until the upstream stops or the client goes away). */
export const hang: Handler = (req) => req.closed.then(() => new Response(null, { status: 499 }));

export interface SseControl {
  /** The Response to return from a handler (call once). */
  response(init?: ResponseInit): Response;
  /** Enqueue one chunk (a string is UTF-8 encoded). */
  send(chunk: string | Uint8Array): void;
  end(): void;
  /** Error the stream: the connection is cut mid-body. */
  abort(): void;
  /** Resolves when the reader cancelled (the client went away). */
  cancelled: Promise<void>;
}

/** An SSE body the test drives chunk by chunk. */
export function sse(): SseControl {
  let ctl!: ReadableStreamDefaultController<Uint8Array>;
  let onCancel!: () => void;
  const cancelled = new Promise<void>((r) => (onCancel = r));
  const pending: Uint8Array[] = [];
  let ended = false;
  const enc = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      ctl = c;
      for (const p of pending) c.enqueue(p);
      if (ended) c.close();
    },
    cancel() {
      onCancel();
    },
  });
  return {
    response(init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("content-type")) headers.set("content-type", "text/event-stream");
      if (!headers.has("cache-control")) headers.set("cache-control", "no-cache");
      return new Response(stream, { ...init, headers });
    },
    send(chunk) {
      const bytes = typeof chunk === "string" ? enc.encode(chunk) : chunk;
      if (ctl) ctl.enqueue(bytes);
      else pending.push(bytes);
    },
    end() {
      ended = true;
      try {
        ctl?.close();
      } catch {
        /* already closed */
      }
    },
    abort() {
      try {
        ctl?.error(new Error("upstream aborted"));
      } catch {
        /* already closed */
      }
    },
    cancelled,
  };
}

export interface UpstreamOptions {
  /** HTTPS (default) or plain HTTP. */
  tls?: boolean;
  /** Accept permessage-deflate on WebSocket upgrades that offer it (default: never, as `Bun.serve`). */
  wsDeflate?: boolean;
}

export class Upstream {
  readonly requests: RecordedRequest[] = [];
  /** Frames received on WebSocket connections, in order. */
  readonly wsMessages: (string | Uint8Array)[] = [];
  /** Connections accepted by the reset port. */
  resets = 0;
  #routes: Route[] = [];
  #waiters: (() => void)[] = [];
  #server!: Server<WsData>;
  #resetServer!: TCPSocketListener<undefined>;
  readonly sockets = new Set<ServerWebSocket<WsData>>();
  #ports = new Set<number>();

  constructor(readonly opts: UpstreamOptions = {}) {}

  get url(): string {
    return `${this.opts.tls === false ? "http" : "https"}://127.0.0.1:${this.#server.port}`;
  }
  get port(): number {
    return this.#server.port!;
  }
  /** A TLS port that accepts connections and drops them as soon as bytes arrive (connection reset). */
  get resetUrl(): string {
    return `https://127.0.0.1:${this.#resetServer.port}`;
  }
  get server(): Server<WsData> {
    return this.#server;
  }
  /** How many TCP connections requests have arrived on (told apart by the client's port). */
  get connections(): number {
    return this.#ports.size;
  }

  /** Add a route (later routes win). `path` "/v1/x" exact, "/v1/*" prefix, RegExp on path+query, or a function. */
  on(method: string, path: Matcher, handler: Handler): this {
    this.#routes.unshift({ method: method.toUpperCase(), match: path, handler });
    return this;
  }

  /** Accept WebSocket upgrades on `path`; frames are echoed unless the script says otherwise. */
  ws(path: Matcher, script: WsScript = {}): this {
    this.#routes.unshift({ method: "GET", match: path, ws: script });
    return this;
  }

  /** Resolves with the next request received (or one already received when `index` is given). */
  nextRequest(index?: number): Promise<RecordedRequest> {
    if (index !== undefined && this.requests[index]) return Promise.resolve(this.requests[index]!);
    const want = index ?? this.requests.length;
    return new Promise((resolve) => {
      const check = () => {
        if (this.requests.length > want) resolve(this.requests[want]!);
        else this.#waiters.push(check);
      };
      this.#waiters.push(check);
    });
  }

  async start(): Promise<this> {
    const tls = testTls();
    const useTls = this.opts.tls !== false;
    this.#server = Bun.serve<WsData>({
      hostname: "127.0.0.1",
      port: 0,
      idleTimeout: 0,
      ...(useTls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
      fetch: (raw, server) => this.#handle(raw, server),
      websocket: {
        idleTimeout: 0,
        perMessageDeflate: this.opts.wsDeflate === true,
        open: (ws) => {
          this.sockets.add(ws);
          ws.data.script.open?.(ws);
        },
        message: (ws, msg) => {
          this.wsMessages.push(typeof msg === "string" ? msg : new Uint8Array(msg));
          if (ws.data.script.message) ws.data.script.message(ws, msg);
          else ws.send(msg);
        },
        close: (ws) => {
          this.sockets.delete(ws);
        },
      },
    });
    this.#resetServer = Bun.listen<undefined>({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: tls.cert, key: tls.key },
      socket: {
        open: () => {
          this.resets++;
        },
        data: (s) => {
          s.terminate();
        },
      },
    });
    return this;
  }

  async #handle(raw: Request, server: Server<WsData>): Promise<Response | undefined> {
    const url = new URL(raw.url);
    const path = url.pathname + url.search;
    const body = new Uint8Array(await raw.arrayBuffer());
    let done!: () => void;
    const closed = new Promise<void>((r) => (done = r));
    const rec: RecordedRequest = {
      method: raw.method,
      path,
      headers: raw.headers,
      body,
      sha256: new Bun.CryptoHasher("sha256").update(body).digest("hex"),
      closed,
      aborted: false,
      remotePort: server.requestIP(raw)?.port ?? 0,
    };
    this.#ports.add(rec.remotePort);
    raw.signal.addEventListener("abort", () => {
      rec.aborted = true;
      done();
    });
    this.requests.push(rec);
    const waiters = this.#waiters.splice(0);
    for (const w of waiters) w();
    const isUpgrade = raw.headers.get("upgrade")?.toLowerCase() === "websocket";
    const route = this.#routes.find(
      (r) => r.method === raw.method && matches(r.match, path) && (!!r.ws === isUpgrade || !r.ws),
    );
    if (route?.ws && isUpgrade) {
      if (route.ws.refuse) return route.ws.refuse();
      const ok = server.upgrade(raw, {
        data: { path, script: route.ws, request: rec },
        headers: route.ws.headers,
      });
      done();
      return ok ? undefined : new Response("upgrade failed", { status: 400 });
    }
    if (!route?.handler) {
      done();
      return json(
        { error: { message: `stand-in upstream: no route for ${raw.method} ${path}` } },
        { status: 404 },
      );
    }
    return route.handler(rec, raw);
  }

  async stop(): Promise<void> {
    for (const ws of this.sockets) ws.close(1001, "upstream stopping");
    this.#resetServer?.stop(true);
    await this.#server?.stop(true);
  }

  async [Symbol.asyncDispose]() {
    await this.stop();
  }
}

/** Start a stand-in upstream (HTTPS with the test CA unless `tls: false`). */
export async function startUpstream(opts: UpstreamOptions = {}): Promise<Upstream> {
  return new Upstream(opts).start();
}

/** A stand-in upstream that answers every Anthropic Messages request with `anthropicMessage()`. */
export async function startMessagesUpstream(): Promise<Upstream> {
  const up = await startUpstream();
  up.on("POST", "/v1/messages", () => json(anthropicMessage()));
  return up;
}

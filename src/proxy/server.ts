/**
 * The proxy listener on `Bun.serve`: `/health`, `/metrics`, the `/ws?url=` tunnel, and
 * every other path provider-detected, scanned and forwarded. Knows nothing of the runtime: what it
 * needs comes in through `ProxyDeps`, read on every request so that reloads apply at once.
 *
 * Longer than most files, and `#proxy` longer than most functions: the HTTP path, the WebSocket
 * tunnels and their bookkeeping (requests in flight, aborts, open sockets, the idle work, recording
 * each request) share the listener's state, while every stage they call lives in its own file
 * (decoding, charset, parsing, the scan, forwarding, error shapes). `#proxy` is one request's path
 * in order (read, decode, parse, scan, block or forward, record); cut into steps, each would pass
 * a dozen of its locals to the next.
 */
import type { Server, ServerWebSocket } from "bun";
import type { UpstreamTls } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import type { Bus, RequestEvent } from "../core/bus.ts";
import type { RequestHook, ScanRequest, Verdict } from "../core/hook.ts";
import type { Logger } from "../core/log.ts";
import { badHostResponse, requestUrl } from "../core/request-url.ts";
import {
  type Action,
  blankSession,
  type Provider,
  type ProviderLabel,
  type SessionContext,
  type UnscannedReason,
} from "../core/types.ts";
import { METRICS_CONTENT_TYPE, type Metrics } from "../metrics/index.ts";
import { knownShape } from "../payload/shape.ts";
import { blockNotice, decidingRules, decidingSource, type NoticeLinks } from "../policy/notice.ts";
import type { ProxyMode } from "../runtime/contract.ts";
import type { Tracing } from "../tracing/index.ts";
import { type Charset, declaredCharset, fromUtf8, isUtf8Charset, toUtf8 } from "./charset.ts";
import { decodeBody, encodeBody } from "./encoding.ts";
import {
  blockedCloseReason,
  blockedResponse,
  blockedWsErrorEvent,
  providerError,
  unknownEncoding,
  unknownProviderResponse,
} from "./errors.ts";
import { forward, timersFor, upstreamUrl } from "./forward.ts";
import { loggablePath, upstreamRequestHeaders } from "./headers.ts";
import { IdleWork } from "./idle.ts";
import type { HostPool } from "./pool.ts";
import { detectProvider, isStreamingRequest } from "./provider.ts";
import { scanGuarded } from "./scan.ts";
import { loginMode, SessionContexts, sessionContext } from "./session.ts";
import { LengthMismatch, StreamBlocked, type StreamScan, scanStreaming } from "./stream-scan.ts";
import { conversationKey, TurnMemory } from "./turns.ts";
import {
  chatgptBackendPath,
  isCodexAccountCheck,
  MAX_ANSWER_BYTES,
  setRoutingOverride,
  WorkspaceRoutes,
} from "./workspace-routing.ts";
import { bridge, clientClosed, connectUpstream, tunnelData, upgradeClient, type WsTunnel } from "./ws.ts";
import { checkWsTarget } from "./ws-target.ts";

export interface ProxyDeps {
  config(): Config;
  /** The running dashboard's base URL for links in block messages, or null when it is off. */
  dashboardUrl?(): string | null;
  mode(): ProxyMode;
  hook(): RequestHook;
  bus: Bus;
  log: Logger;
  metrics: Metrics;
  tls(): UpstreamTls;
  pool(): HostPool;
  /** The installation key for the stored `api_key_hash` of a request's session. */
  hmacKey: Uint8Array | null;
  /** The `/health` record. */
  health(): Record<string, unknown>;
  /** Tracing of requests, or null when it is off. */
  tracing(): Tracing | null;
  /** Work of the rest of sluice for the proxy's quiet moments between turns (the store's writes). */
  quiet?(): void;
}

/** The largest request body sluice forwards at all (bodies above proxy.max_body_size go unscanned). */
export const MAX_REQUEST_BYTES = 1024 * 1024 * 1024;

/** WebSocket close code for a frame blocked by policy (RFC 6455 policy violation). */
export const WS_POLICY_CLOSE = 1008;

const te = new TextEncoder();

/** Unread traffic of one client and reason is logged as a warning at most this often. */
const UNSCANNED_WARN_EVERY_MS = 60_000;

/** A WebSocket text frame parsed as JSON, or undefined. */
function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Read a body of unknown length: the whole of it when it fits `limit` bytes, else a stream that
 * replays what was read and continues with the rest.
 */
export async function bufferUpTo(
  body: ReadableStream<Uint8Array>,
  limit: number,
): Promise<{ bytes?: Uint8Array; stream?: ReadableStream<Uint8Array> }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
    if (total > limit) {
      const stream = new ReadableStream<Uint8Array>({
        async pull(c) {
          const head = chunks.shift();
          if (head) return c.enqueue(head);
          const next = await reader.read();
          if (next.done) c.close();
          else c.enqueue(next.value);
        },
        cancel: (r) => reader.cancel(r),
      });
      return { stream };
    }
  }
  const bytes = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    bytes.set(c, off);
    off += c.byteLength;
  }
  return { bytes };
}

export class ProxyServer {
  server: Server<WsTunnel> | null = null;
  #seq = 0;
  #inflight = new Set<Promise<unknown>>();
  /** The last turns of each conversation, to parse the next one from (`turns.ts`). */
  #turns = new TurnMemory();
  /** The last session contexts of each conversation, each given again while its inputs are the same. */
  #sessions = new SessionContexts();
  /**
   * Between turns rather than inside the next one: what the kept turns need before they can serve,
   * the writes of what the turn recorded (on the write timer alone, a batch could fall on the
   * answer's first event), and a garbage collection.
   */
  #idle = new IdleWork(
    () => this.#inflight.size > 0,
    () => {
      this.#turns.settle();
      this.deps.quiet?.();
      Bun.gc(false);
    },
  );
  #aborts = new Set<AbortController>();
  #sockets = new Set<ServerWebSocket<WsTunnel>>();
  #retired: Server<WsTunnel>[] = [];
  /** When each client and reason of unread traffic was last logged as a warning. */
  #unscannedWarned = new Map<string, number>();
  /** The back end each ChatGPT account's conversation goes to, from its account check. */
  #routes = new WorkspaceRoutes();

  constructor(private deps: ProxyDeps) {}

  get activeRequests(): number {
    return this.#inflight.size;
  }

  /** Request bodies parsed from their conversation's previous turn, and conversations kept for it. */
  turnStats(): { reparsed: number; kept: number; memory: number } {
    return this.#turns.stats();
  }

  /** Listen on host:port (0 = any free port). */
  listen(hostname: string, port: number): Server<WsTunnel> {
    this.server = Bun.serve<WsTunnel>({
      hostname,
      port,
      idleTimeout: 255,
      // Bun would answer an empty 413 above its limit: ours (MAX_REQUEST_BYTES) answers in the provider's shape.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      fetch: (req, server) => this.#handle(req, server),
      error: (err) => {
        this.deps.log.error(`proxy internal error: ${err.message}`);
        return new Response(
          JSON.stringify({ error: { code: "internal", message: "sluice internal error" } }),
          {
            status: 502,
            headers: { "content-type": "application/json" },
          },
        );
      },
      websocket: {
        idleTimeout: 0,
        maxPayloadLength: 64 * 1024 * 1024,
        // The client is on loopback, where compression saves no time and costs it twice on every
        // frame: the client deflates each turn's frame and sluice inflates it before the scan. The
        // upstream is offered compression exactly when the client offered it (`connectUpstream`).
        perMessageDeflate: false,
        open: (ws) => this.#wsOpen(ws),
        message: (ws, msg) => this.#wsMessage(ws, msg),
        close: (ws, code) => this.#wsClose(ws, code),
      },
    });
    return this.server;
  }

  /**
   * Graceful rebind: listen on the new address first, then stop accepting on the old one while its
   * requests in flight finish.
   */
  rebind(hostname: string, port: number): Server<WsTunnel> {
    const old = this.server;
    const next = this.listen(hostname, port);
    if (old) {
      this.#retired.push(old);
      void old.stop(false);
    }
    return next;
  }

  /** Step 1 of shutdown: stop accepting new connections; requests in flight continue. */
  stopAccepting(): void {
    for (const s of [this.server, ...this.#retired]) void s?.stop(false);
  }

  /** Step 2: wait until no request is in flight, or the deadline. Returns how many are left. */
  async drain(deadlineMs: number): Promise<number> {
    const until = Date.now() + deadlineMs;
    while (this.#inflight.size > 0 && Date.now() < until) {
      let t: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([...this.#inflight]),
        new Promise((r) => (t = setTimeout(r, Math.max(0, until - Date.now())))),
      ]);
      clearTimeout(t);
    }
    return this.#inflight.size;
  }

  /** Step 3: force-close what is left (requests and WebSockets). */
  async forceClose(): Promise<void> {
    this.#idle.stop();
    for (const c of this.#aborts) c.abort(new Error("sluice shutting down"));
    for (const ws of this.#sockets) {
      try {
        ws.close(1001, "sluice shutting down");
      } catch {
        /* gone */
      }
      try {
        ws.data.upstream.close(1001, "sluice shutting down");
      } catch {
        /* gone */
      }
    }
    for (const s of [this.server, ...this.#retired]) await s?.stop(true);
    this.#retired = [];
  }

  #nextId(): string {
    return `req-${++this.#seq}`;
  }

  async #handle(req: Request, server: Server<WsTunnel>): Promise<Response | undefined> {
    const url = requestUrl(req);
    if (!url) return badHostResponse();
    const { pathname } = url;
    if (pathname === "/health" && req.method === "GET")
      return Response.json(this.deps.health(), { headers: { "cache-control": "no-store" } });
    if (pathname === "/metrics" && req.method === "GET") {
      this.deps.metrics.activeRequests = this.#inflight.size;
      return new Response(this.deps.metrics.render(), { headers: { "content-type": METRICS_CONTENT_TYPE } });
    }
    if (pathname === "/ws") return this.#wsUrlTunnel(req, server, url);
    if (pathname === "/" && (req.method === "GET" || req.method === "HEAD"))
      // Tools probe the base URL (Claude Code sends HEAD /): answer like a reachable API root.
      return new Response(req.method === "HEAD" ? null : "sluice proxy: see /health and /metrics\n", {
        headers: { "content-type": "text/plain; charset=utf-8" },
      });

    const provider = detectProvider(pathname, req.headers);
    // Codex signed in with ChatGPT sends its conversation to `openai_base_url` at the OpenAI paths.
    if (provider === "chatgpt") url.pathname = chatgptBackendPath(pathname);
    this.deps.metrics.countProvider(provider);
    const requestId = this.#nextId();
    if (provider === "unknown") return this.#unknownProvider(req, server, url, requestId);
    if (req.headers.get("upgrade")?.toLowerCase() === "websocket")
      return this.#providerUpgrade(req, server, url, provider, requestId);
    const abort = new AbortController();
    this.#aborts.add(abort);
    return this.#track(
      this.#proxy(req, server, url, provider, requestId, abort).catch((e) => {
        this.#aborts.delete(abort);
        throw e;
      }),
    );
  }

  /**
   * A request no provider claims: answered 400 and not forwarded, but recorded and counted per
   * client, so that a tool that talks to sluice in a way it does not know is never silent.
   */
  #unknownProvider(req: Request, server: Server<WsTunnel>, url: URL, requestId: string): Response {
    const shownPath = loggablePath(url.pathname, url.search);
    const session = sessionContext({
      provider: "unknown",
      pathname: url.pathname,
      headers: req.headers,
      json: undefined,
      sourceIp: server.requestIP(req)?.address ?? null,
    });
    this.#noteUnscanned(session, "unknown_provider", `${req.method} ${shownPath}`, requestId);
    this.#recordRequest(session, {
      request_id: requestId,
      provider: "unknown",
      method: req.method,
      path: shownPath,
      action: "pass",
      finding_count: 0,
      rules: null,
      action_source: null,
      bytes: Number(req.headers.get("content-length") ?? 0) || 0,
      duration_ms: 0,
      upstream_status: null,
      mode: this.deps.mode(),
      error: "unknown provider: answered 400, not forwarded",
      login: loginMode("unknown", req.headers, url.search),
      unscanned: "unknown_provider",
    });
    return unknownProviderResponse(req.method, url.pathname);
  }

  /**
   * Count traffic sluice could not read, per client, and say so in the log: a warning for the first
   * of a client and reason each minute, the rest at debug level (a stream of frames is one story).
   */
  /** Links for a block message: the dashboard's findings of this session, and its allowlists. */
  #links(session: SessionContext): NoticeLinks | null {
    const dashboard = this.deps.dashboardUrl?.() ?? null;
    return dashboard ? { dashboard, session: session.session_id || null } : null;
  }

  #noteUnscanned(session: SessionContext, reason: UnscannedReason, detail: string, requestId: string) {
    this.deps.metrics.countUnscanned(session.client, reason);
    const key = `${session.client}\u0000${reason}`;
    const now = Date.now();
    const loud = now - (this.#unscannedWarned.get(key) ?? 0) >= UNSCANNED_WARN_EVERY_MS;
    if (loud) {
      if (this.#unscannedWarned.size >= 1000) this.#unscannedWarned.clear();
      this.#unscannedWarned.set(key, now);
    }
    this.deps.log.log(
      loud ? "warning" : "debug",
      `could not read ${detail} from ${session.client_name} (${reason})`,
      {
        request_id: requestId,
        session_id: session.session_id,
      },
    );
  }

  /** Count a request as in flight until its response has been fully sent to the client. */
  #track(p: Promise<{ response: Response; done: Promise<unknown> }>): Promise<Response> {
    let resolveDone!: () => void;
    const tracked = new Promise<void>((r) => (resolveDone = r));
    this.#inflight.add(tracked);
    this.deps.metrics.activeRequests = this.#inflight.size;
    const end = () => {
      this.#inflight.delete(tracked);
      this.deps.metrics.activeRequests = this.#inflight.size;
      resolveDone();
      this.#idle.settled();
    };
    return p.then(
      (r) => {
        r.done.then(end, end);
        return r.response;
      },
      (e) => {
        end();
        throw e;
      },
    );
  }

  async #proxy(
    req: Request,
    server: Server<WsTunnel>,
    url: URL,
    provider: Provider,
    requestId: string,
    abort: AbortController,
  ): Promise<{ response: Response; done: Promise<unknown> }> {
    const started = performance.now();
    const cfg = this.deps.config();
    const mode = this.deps.mode();
    const log = this.deps.log;
    server.timeout(req, 0); // no idle timer on a long stream
    // The client going away ends the request as a shutdown does: both abort `abort`, which the
    // forwarding listens to (one listener costs less than a signal combining the two).
    if (req.signal.aborted) abort.abort(req.signal.reason);
    else req.signal.addEventListener("abort", () => abort.abort(req.signal.reason), { once: true });
    const pathAndQuery = url.pathname + url.search;
    const shownPath = loggablePath(url.pathname, url.search);
    const trace = this.deps
      .tracing()
      ?.request({ method: req.method, path: shownPath, requestId, headers: req.headers, start: started });
    let scanMs = 0;

    // Body: buffered when it fits the scan limit, else streamed through unscanned.
    const declared = Number(req.headers.get("content-length") ?? "NaN");
    if (declared > MAX_REQUEST_BYTES) {
      this.#aborts.delete(abort);
      return {
        response: providerError(
          provider,
          413,
          `sluice: request body of ${declared} bytes is larger than the 1 GiB sluice forwards`,
          "bad_request",
        ),
        done: Promise.resolve(),
      };
    }
    let body: Uint8Array | ReadableStream<Uint8Array> | null = null;
    // A body over the scan limit (declared, or found while reading a chunked one) is scanned as it
    // streams (stream-scan.ts) rather than buffered whole.
    let oversize: ReadableStream<Uint8Array> | null = null;
    if (req.body && Number.isFinite(declared) && declared > cfg.proxy.max_body_size) {
      oversize = req.body;
    } else if (req.body && Number.isFinite(declared)) {
      body = await req.bytes();
    } else if (req.body) {
      const read = await bufferUpTo(req.body, cfg.proxy.max_body_size);
      if (read.bytes) body = read.bytes;
      else oversize = read.stream!;
    }
    if (
      oversize &&
      mode === "active" &&
      (req.headers.has("content-encoding") ||
        !isUtf8Charset(declaredCharset(req.headers.get("content-type"))))
    ) {
      this.#aborts.delete(abort);
      void oversize.cancel().catch(() => {});
      return {
        response: providerError(
          provider,
          413,
          `sluice: a compressed body, or one in a charset other than UTF-8, larger than proxy.max_body_size (${cfg.proxy.max_body_size} bytes) cannot be scanned, so it is not forwarded`,
          "bad_request",
        ),
        done: Promise.resolve(),
      };
    }
    if (oversize && mode !== "active") body = oversize;
    const bytes = body instanceof Uint8Array ? body : null;
    let unscanned: UnscannedReason | null = null;
    let unscannedDetail = "";
    // What is scanned: the body with its Content-Encoding undone (Codex sends zstd), or, when that
    // fails, the raw bytes as text; what is forwarded stays the client's bytes unless redacted.
    let scanBytes = bytes;
    let codings: string[] = [];
    if (scanBytes && scanBytes.byteLength > 0 && req.headers.has("content-encoding")) {
      const decoded = decodeBody(scanBytes, req.headers.get("content-encoding"), cfg.proxy.max_body_size);
      if (decoded.ok) {
        scanBytes = decoded.bytes;
        codings = decoded.codings;
      } else if (decoded.reason === "too_large" && mode === "active") {
        // A small body that inflates past the scan limit (a zip bomb, or just a very large body).
        this.#aborts.delete(abort);
        return {
          response: providerError(provider, 413, `sluice: ${decoded.error}; not forwarded`, "bad_request"),
          done: Promise.resolve(),
        };
      } else if (decoded.reason === "unknown" && mode === "active" && !cfg.proxy.allow_unknown_encoding) {
        this.#aborts.delete(abort);
        return { response: unknownEncoding(provider, decoded.error), done: Promise.resolve() };
      } else {
        unscanned = "encoded";
        unscannedDetail = decoded.error;
      }
    }
    // A body in UTF-16, UTF-32 or another charset is scanned as UTF-8, and written back in its own
    // charset when redacted.
    let charset: Charset | null = null;
    if (scanBytes && scanBytes.byteLength > 0) {
      const recoded = toUtf8(scanBytes, req.headers.get("content-type"));
      if (recoded.ok) {
        scanBytes = recoded.bytes;
        charset = recoded.charset;
      } else if (mode === "active" && !cfg.proxy.allow_unknown_encoding) {
        this.#aborts.delete(abort);
        return { response: unknownEncoding(provider, recoded.error), done: Promise.resolve() };
      } else {
        unscanned = "encoded";
        unscannedDetail = recoded.error;
      }
    }
    let json: unknown;
    let jsonSource: string | undefined;
    let session: SessionContext;
    // A body as it came (no coding undone, no charset recoded) may be parsed from its conversation's
    // previous turn.
    const turnKey =
      scanBytes === bytes && !unscanned ? conversationKey(provider, url.pathname, req.headers) : null;
    let uniqueKeys = false;
    let texts: string[] | undefined;
    try {
      const parsed =
        scanBytes && !unscanned
          ? this.#turns.read(turnKey, provider, scanBytes, req.headers.get("content-type"))
          : undefined;
      json = parsed?.json;
      jsonSource = parsed?.source;
      uniqueKeys = parsed?.uniqueKeys ?? false;
      texts = parsed?.texts;
      session = this.#sessions.get(turnKey, {
        provider,
        pathname: url.pathname,
        headers: req.headers,
        json,
        sourceIp: server.requestIP(req)?.address ?? null,
        hmacKey: this.deps.hmacKey,
      });
    } catch (e) {
      log.error(`session context failed: ${(e as Error).message}`, { request_id: requestId });
      session = blankSession({ session_id: "fp:unknown", client: "unknown", client_name: "unknown" });
    }

    if (!unscanned && scanBytes && scanBytes.byteLength > 0) {
      if (json === undefined) {
        unscanned = "non_json";
        unscannedDetail = `a body that is not JSON (${req.headers.get("content-type") ?? "no Content-Type"})`;
      } else if (!knownShape(provider, url.pathname, json)) {
        unscanned = "unknown_shape";
        unscannedDetail = `a ${provider} body of unknown shape`;
      }
    }
    if (mode === "active" && unscanned)
      this.#noteUnscanned(session, unscanned, `${req.method} ${shownPath}: ${unscannedDetail}`, requestId);

    let verdict: Verdict = { action: "pass", findings: [], scanned_bytes: 0 };
    let streamed: StreamScan | null = null;
    if (oversize && mode === "active") {
      const scanDeps = { hook: this.deps.hook(), bus: this.deps.bus, log, metrics: this.deps.metrics };
      const base = { provider, method: req.method, path: pathAndQuery, headers: req.headers, session };
      const length = Number.isFinite(declared) ? declared : null;
      streamed = scanStreaming(oversize, [], length, cfg.proxy.max_body_size, (window) =>
        scanGuarded(scanDeps, { ...base, body: window, transport: "http", id: requestId }, requestId),
      );
      body = streamed.body;
    }
    if (mode === "active" && scanBytes) {
      const scanReq: ScanRequest = {
        provider,
        method: req.method,
        path: pathAndQuery,
        headers: req.headers,
        body: scanBytes,
        json,
        jsonSource,
        session,
        transport: "http",
        id: requestId,
      };
      if (uniqueKeys) scanReq.uniqueKeys = true;
      if (texts) scanReq.texts = texts;
      const scanStart = performance.now();
      const scanned = scanGuarded(
        { hook: this.deps.hook(), bus: this.deps.bus, log, metrics: this.deps.metrics },
        scanReq,
        requestId,
      );
      verdict = scanned instanceof Promise ? await scanned : scanned;
      scanMs = performance.now() - scanStart;
      this.#idle.scanned();
      trace?.scanned(scanStart, scanStart + scanMs);
      if (
        verdict.action === "redact" &&
        verdict.body &&
        unscanned !== "encoded" &&
        (codings.length > 0 || charset)
      ) {
        const written = charset ? fromUtf8(verdict.body, charset) : verdict.body;
        verdict = { ...verdict, body: encodeBody(written, codings) };
      } else if (verdict.action === "redact" && unscanned === "encoded")
        // The raw bytes of a body that did not decode were scanned as text: there is no way to
        // rebuild the encoded body with the match replaced, so it does not leave at all.
        verdict = { ...verdict, action: "block", body: undefined };
    }
    let action: Action = verdict.action;
    const record = (status: number | null, error: string | null) => {
      this.#aborts.delete(abort);
      trace?.end({
        provider,
        bodySize: bytes?.byteLength ?? (Number.isFinite(declared) ? declared : 0),
        findings: verdict.findings.length,
        action,
        scanMs,
        status,
        error,
      });
      this.#recordRequest(session, {
        request_id: requestId,
        provider,
        method: req.method,
        path: shownPath,
        action,
        finding_count: verdict.findings.length,
        rules: decidingRules(verdict.findings, action),
        action_source: decidingSource(verdict.findings, action),
        bytes: bytes?.byteLength ?? (Number.isFinite(declared) ? declared : 0),
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
        upstream_status: status,
        mode,
        error,
        login: loginMode(provider, req.headers, url.search),
        unscanned: mode === "active" ? unscanned : null,
      });
    };

    if (action === "block") {
      const notice = blockNotice("this request", verdict.findings, this.#links(session));
      log.warn(`blocked ${req.method} ${url.pathname}: ${notice.found}`, {
        request_id: requestId,
        session_id: session.session_id,
      });
      const response = blockedResponse(provider, notice);
      record(response.status, null);
      return { response, done: Promise.resolve() };
    }
    const outBody = action === "redact" && verdict.body ? verdict.body : body;
    const route =
      provider === "chatgpt"
        ? this.#routes.upstreamFor(url.pathname, req.headers, cfg.providers.chatgpt.upstream)
        : null;
    const target = upstreamUrl(route?.base ?? cfg.providers[provider].upstream, pathAndQuery);
    const headers = upstreamRequestHeaders(req.headers);
    setRoutingOverride(headers, route?.override ?? null);
    const upstreamEnded = trace?.upstream(headers, target.host);
    const result = await forward({
      provider,
      url: target,
      method: req.method,
      headers,
      body: req.method === "GET" || req.method === "HEAD" ? null : outBody,
      streaming: isStreamingRequest(url.pathname, url.search, json),
      clientSignal: abort.signal,
      timers: timersFor(cfg.proxy.timeout),
      retries: cfg.proxy.retries,
      tls: this.deps.tls(),
      pool: this.deps.pool(),
      log,
    });
    if (streamed) {
      // The body went upstream window by window; what its scan found is known now.
      verdict = streamed.verdict();
      action = verdict.action;
      const stop = streamed.stopped();
      if (stop instanceof StreamBlocked) {
        upstreamEnded?.(null, "body stopped by a block");
        const notice = blockNotice("this request", stop.verdict.findings, this.#links(session));
        log.warn(`blocked ${req.method} ${url.pathname} while its body streamed: ${notice.found}`, {
          request_id: requestId,
          session_id: session.session_id,
        });
        const response = blockedResponse(provider, notice);
        record(response.status, null);
        return { response, done: Promise.resolve() };
      }
      if (stop instanceof LengthMismatch) {
        upstreamEnded?.(null, stop.message);
        record(400, stop.message);
        return {
          response: providerError(provider, 400, `sluice: ${stop.message}; not forwarded`, "bad_request"),
          done: Promise.resolve(),
        };
      }
    }
    // Codex learns where to send its conversation from its account check: sluice keeps that, and
    // an origin it could not take out of the answer is a route around sluice, and is said so.
    const checked =
      provider === "chatgpt" && req.method === "GET" && isCodexAccountCheck(url.pathname)
        ? await this.#accountCheck(
            result.response,
            cfg.providers.chatgpt.upstream,
            mode === "active",
            requestId,
          )
        : null;
    const done = result.done.then((o) => {
      const origins = checked?.bypassed ?? [];
      if (origins.length > 0 && mode === "active") {
        unscanned = "bypass";
        this.#noteUnscanned(
          session,
          "bypass",
          `the conversation: the ChatGPT back end routes it to ${origins.join(", ")} directly, around sluice`,
          requestId,
        );
      }
      upstreamEnded?.(o.status, o.error);
      record(o.status, o.error);
    });
    return { response: checked?.response ?? result.response, done };
  }

  /**
   * Codex's account check answer, read (a few kilobytes) for the back end of each account and, when
   * scanning, given to the client with those back ends taken out (workspace-routing.ts). An answer
   * that cannot be read or rewritten goes to the client as it came, with the origins it still names.
   */
  async #accountCheck(
    res: Response,
    upstream: string,
    rewrite: boolean,
    requestId: string,
  ): Promise<{ response: Response; bypassed: string[] }> {
    const log = this.deps.log;
    if (!res.ok || !res.body || Number(res.headers.get("content-length") ?? 0) > MAX_ANSWER_BYTES)
      return { response: res, bypassed: [] };
    const init = { status: res.status, statusText: res.statusText, headers: new Headers(res.headers) };
    let read: Awaited<ReturnType<typeof bufferUpTo>>;
    try {
      read = await bufferUpTo(res.body, MAX_ANSWER_BYTES);
    } catch (e) {
      return {
        response: providerError("chatgpt", 502, `sluice: ${(e as Error).message}`, "bad_gateway"),
        bypassed: [],
      };
    }
    if (!read.bytes) return { response: new Response(read.stream, init), bypassed: [] };
    const out = this.#routes.accountCheck(read.bytes, res.headers.get("content-encoding"), upstream, rewrite);
    for (const o of out.origins)
      if (!o.forwarded)
        log.warn(
          `the ChatGPT back end named ${o.origin} for an account's conversation, which is not HTTPS on the host of providers.chatgpt.upstream or under it: sluice sends that conversation to ${upstream}`,
          { request_id: requestId },
        );
    if (out.error && (rewrite || out.origins.length === 0))
      log.warn(`could not rewrite the ChatGPT account check answer: ${out.error}`, { request_id: requestId });
    if (!out.bytes)
      return {
        response: new Response(read.bytes as Uint8Array<ArrayBuffer>, init),
        bypassed: rewrite ? out.origins.map((o) => o.origin) : [],
      };
    init.headers.set("content-length", String(out.bytes.byteLength));
    return { response: new Response(out.bytes as Uint8Array<ArrayBuffer>, init), bypassed: [] };
  }

  async #providerUpgrade(
    req: Request,
    server: Server<WsTunnel>,
    url: URL,
    provider: Provider,
    requestId: string,
  ): Promise<Response | undefined> {
    const cfg = this.deps.config();
    const route =
      provider === "chatgpt"
        ? this.#routes.upstreamFor(url.pathname, req.headers, cfg.providers.chatgpt.upstream)
        : null;
    const base = new URL(route?.base ?? cfg.providers[provider].upstream);
    const target = upstreamUrl(base.href, url.pathname + url.search);
    target.protocol = base.protocol === "http:" ? "ws:" : "wss:";
    return this.#openRelay(
      req,
      server,
      target.href,
      provider,
      url.pathname,
      requestId,
      (msg) => providerError(provider, 502, msg, "bad_gateway"),
      undefined,
      route?.override ? { "x-openai-account-routing-override": route.override } : undefined,
    );
  }

  /**
   * `GET /ws?url=`: a WebSocket to a public target named by the client. Browsers are refused unless
   * their origin is in `websocket.allowed_origins` (empty by default), so no web page can use sluice to
   * reach anything; the target is checked and resolved once (`ws-target.ts`); the client's credentials
   * stay with sluice unless `websocket.forward_credentials` is on.
   */
  async #wsUrlTunnel(req: Request, server: Server<WsTunnel>, url: URL): Promise<Response | undefined> {
    const raw = url.searchParams.get("url");
    const bad = (message: string, status = 400) =>
      Response.json({ error: { code: "bad_ws_target", message } }, { status });
    if (req.headers.get("upgrade")?.toLowerCase() !== "websocket")
      return bad("GET /ws?url=<ws_or_wss_url> needs a WebSocket upgrade", 426);
    if (!raw) return bad("missing ?url=<ws_or_wss_url>");
    const cfg = this.deps.config();
    const origin = req.headers.get("origin");
    if (origin && !cfg.websocket.allowed_origins.includes(origin))
      return bad(`origin ${origin} is not in websocket.allowed_origins`, 403);
    const target = await checkWsTarget(raw, {
      allowedPrivate: cfg.websocket.allowed_private_targets,
      ownPorts: [server.port ?? cfg.port, cfg.port, cfg.dashboard.port, cfg.engine.port, cfg.relay.port],
    });
    if (!target.ok) {
      this.deps.log.warn(`/ws refused: ${target.message}`);
      return bad(target.message, target.status);
    }
    return this.#openRelay(
      req,
      server,
      target.connect,
      "unknown",
      new URL(target.shown).pathname,
      this.#nextId(),
      (msg) => Response.json({ error: { code: "ws_upstream_failed", message: msg } }, { status: 502 }),
      {
        host: target.host,
        servername: target.servername,
        shown: target.shown,
        credentials: cfg.websocket.forward_credentials,
      },
    );
  }

  async #openRelay(
    req: Request,
    server: Server<WsTunnel>,
    target: string,
    provider: ProviderLabel,
    /** The path the session is derived from. */
    sessionPath: string,
    id: string,
    failure: (msg: string) => Response,
    /** For `/ws?url=`: the checked target's name and how it is shown; whether credentials go along. */
    checked?: { host: string; servername?: string; shown: string; credentials: boolean },
    /** Headers set on the upstream handshake (a workspace's routing override). */
    set?: Record<string, string>,
  ): Promise<Response | undefined> {
    const cfg = this.deps.config();
    const session = sessionContext({
      provider,
      pathname: sessionPath,
      headers: req.headers,
      json: undefined,
      sourceIp: server.requestIP(req)?.address ?? null,
      hmacKey: this.deps.hmacKey,
    });
    const up = await connectUpstream(
      target,
      req.headers,
      this.deps.tls(),
      timersFor(cfg.proxy.timeout).headersMs,
      {
        host: checked?.host,
        servername: checked?.servername,
        credentials: checked?.credentials ?? true,
        set,
      },
    );
    const shown = checked?.shown ?? target;
    const host = checked?.host ?? new URL(target).host;
    if (!up.ok) {
      this.deps.log.warn(`WebSocket upstream ${host} failed: ${up.error}`, { id });
      return failure(`sluice: the upstream WebSocket at ${host} failed: ${up.error}`);
    }
    const { pathname, search } = new URL(req.url);
    const data = tunnelData(req, up, {
      id,
      provider,
      target: shown,
      path: loggablePath(pathname, search),
      session,
    });
    if (!upgradeClient(req, server, data)) {
      up.ws.close(1000);
      return failure("sluice: the client's WebSocket upgrade failed");
    }
    return undefined;
  }

  /** Count a finished request and put it on the bus (the audit trail); who sent it comes from `session`. */
  #recordRequest(
    session: SessionContext,
    e: Omit<
      RequestEvent,
      "ts" | "client" | "model" | "session_id" | "account_id" | "working_directory" | "git_branch"
    >,
  ): void {
    this.deps.metrics.countRequest(e.action);
    this.deps.metrics.countClient(session.client, e.login);
    this.deps.bus.emit("request", {
      ...e,
      ts: new Date().toISOString(),
      client: session.client,
      model: session.model,
      session_id: session.session_id,
      account_id: session.account_id,
      working_directory: session.working_directory,
      git_branch: session.git_branch,
    });
  }

  #wsEvent(d: WsTunnel, phase: "open" | "close") {
    this.deps.bus.emit("ws-connection", {
      connection_id: d.id,
      phase,
      target_url: d.target.replace(/\?.*$/, ""),
      origin: d.origin,
      provider: d.provider,
      session_id: d.session.session_id,
      duration_ms: phase === "open" ? 0 : Date.now() - d.openedAt,
      frames_in: d.framesIn,
      frames_out: d.framesOut,
      findings: d.findings,
      close_code: d.closeCode,
    });
  }

  #wsOpen(ws: ServerWebSocket<WsTunnel>) {
    this.#sockets.add(ws);
    const d = ws.data;
    d.id = d.id.startsWith("req-") ? crypto.randomUUID() : d.id;
    this.#wsEvent(d, "open");
    bridge(ws, () => this.#idle.activity());
  }

  /** A client frame: scanned, then forwarded, redacted, blocked or closed; each outcome with its events, in order. */
  #wsMessage(ws: ServerWebSocket<WsTunnel>, msg: string | Buffer) {
    const d = ws.data;
    d.framesIn++;
    this.#idle.activity();
    d.chain = d.chain.then(async () => {
      if (d.closed) return;
      const started = performance.now();
      const requestId = `${d.id}#${d.framesIn}`;
      const isText = typeof msg === "string";
      let out: string | Uint8Array = isText ? msg : new Uint8Array(msg);
      const body = isText ? te.encode(msg) : (out as Uint8Array);
      // A well-formed text frame (its bytes read back as the same text) may be parsed from the
      // socket's previous frame; otherwise the frame's text is parsed, not decoded back from `body`.
      const turnKey = isText && msg.isWellFormed() ? `websocket\u0000${d.id}` : null;
      const reparsed = turnKey ? this.#turns.reparse(turnKey, d.provider, body) : null;
      const json = reparsed ? reparsed.json : isText ? parseJsonText(msg) : undefined;
      if (turnKey && !reparsed) this.#turns.remember(turnKey, d.provider, body, json);
      const model = (json as { model?: unknown } | undefined)?.model;
      if (typeof model === "string" && model !== d.session.model) d.session = { ...d.session, model };
      const mode = this.deps.mode();
      const unscanned: UnscannedReason | null =
        json === undefined
          ? "non_json"
          : knownShape(d.provider, d.path.split("?")[0]!, json)
            ? null
            : "unknown_shape";
      if (mode === "active" && unscanned)
        this.#noteUnscanned(d.session, unscanned, `a WebSocket frame on ${d.path}`, requestId);
      let verdict: Verdict = { action: "pass", findings: [], scanned_bytes: 0 };
      if (mode === "active") {
        const scanned = scanGuarded(
          { hook: this.deps.hook(), bus: this.deps.bus, log: this.deps.log, metrics: this.deps.metrics },
          {
            provider: d.provider,
            method: "WS",
            path: d.path,
            headers: d.headers,
            body,
            json,
            ...(reparsed ? { uniqueKeys: true, ...(reparsed.texts ? { texts: reparsed.texts } : {}) } : {}),
            session: d.session,
            transport: "websocket",
            id: requestId,
          },
          requestId,
        );
        verdict = scanned instanceof Promise ? await scanned : scanned;
        d.findings += verdict.findings.length;
        this.#idle.scanned();
      }
      const decided = performance.now();
      // Every client frame is one request of the audit trail (a Codex turn).
      const record = () =>
        this.#recordRequest(d.session, {
          request_id: requestId,
          provider: d.provider,
          method: "WS",
          path: d.path,
          action: verdict.action,
          finding_count: verdict.findings.length,
          rules: decidingRules(verdict.findings, verdict.action),
          action_source: decidingSource(verdict.findings, verdict.action),
          bytes: body.byteLength,
          duration_ms: Math.round((decided - started) * 100) / 100,
          upstream_status: null,
          mode,
          error: null,
          login: loginMode(d.provider, d.headers),
          unscanned: mode === "active" ? unscanned : null,
        });
      if (verdict.action === "block") {
        record();
        const notice = blockNotice("this WebSocket message", verdict.findings, this.#links(d.session));
        if (d.provider === "openai" || d.provider === "chatgpt") {
          // A Responses socket carries one request per frame: the blocked one is answered with an
          // error event, and the socket stays open for the next.
          this.deps.log.warn(
            `blocked a WebSocket frame on ${d.path}: ${notice.found}; answered with an error event`,
            {
              session_id: d.session.session_id,
            },
          );
          ws.send(blockedWsErrorEvent(notice));
          return;
        }
        d.closed = true;
        d.closeCode = WS_POLICY_CLOSE;
        // Like a blocked HTTP request's line: what was found and where (masked, never the value).
        this.deps.log.warn(`blocked a WebSocket frame on ${d.path}: ${notice.found}; closing ${d.id}`, {
          session_id: d.session.session_id,
        });
        try {
          d.upstream.close(1000, "client frame blocked by sluice");
        } catch {
          /* gone */
        }
        ws.close(WS_POLICY_CLOSE, blockedCloseReason(notice));
        return;
      }
      if (verdict.action === "redact" && verdict.body)
        out = isText ? new TextDecoder().decode(verdict.body) : verdict.body;
      // The frame goes first and its record after: the upstream does not wait for the bookkeeping.
      try {
        if (d.upstream.readyState === WebSocket.OPEN) d.upstream.send(out as string | BufferSource);
      } finally {
        record();
      }
    });
  }

  #wsClose(ws: ServerWebSocket<WsTunnel>, code: number) {
    this.#sockets.delete(ws);
    clientClosed(ws.data, code);
    this.#wsEvent(ws.data, "close");
  }
}

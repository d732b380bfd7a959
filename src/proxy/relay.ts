/**
 * The relay of split mode: a thin forwarder on the proxy port that sends
 * traffic through the inspection engine while it is healthy, and otherwise applies `fail_mode`:
 * `open` forwards straight to the provider (uninspected), `closed` answers 503 with `Retry-After`
 * and a provider-shaped body. During the first `queue_on_startup` seconds requests wait for the engine.
 * A request the engine took and then failed on is never sent again (it may have reached the provider):
 * the client gets a 502 saying the outcome is unknown.
 * The engine is healthy only while its `GET /health` answers 200 within `health_check_timeout`.
 */
import type { Server, ServerWebSocket } from "bun";
import type { UpstreamTls } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../core/log.ts";
import { badHostResponse, requestUrl } from "../core/request-url.ts";
import type { Provider } from "../core/types.ts";
import { providerError, unknownProviderResponse } from "./errors.ts";
import { forward, timersFor, upstreamUrl } from "./forward.ts";
import { upstreamRequestHeaders } from "./headers.ts";
import type { HostPool } from "./pool.ts";
import { detectProvider, isStreamingRequest } from "./provider.ts";
import { sessionContext } from "./session.ts";
import { bridge, clientClosed, connectUpstream, tunnelData, upgradeClient, type WsTunnel } from "./ws.ts";

export type EngineState = "starting" | "healthy" | "unhealthy";

export interface RelayOptions {
  config(): Config;
  log: Logger;
  tls(): UpstreamTls;
  pool(): HostPool;
  /** Base URL of the engine, e.g. http://127.0.0.1:8090; read per request, so a reload applies at once. */
  engineUrl(): string;
  /** Read per request, so a reload applies at once. */
  failMode(): "open" | "closed";
}

export class Relay {
  state: EngineState = "starting";
  server: Server<WsTunnel> | null = null;
  #sockets = new Set<ServerWebSocket<WsTunnel>>();
  readonly startedAt = Date.now();
  #seq = 0;
  #poll: ReturnType<typeof setTimeout> | null = null;
  #waiters = new Set<() => void>();
  #stopped = false;

  constructor(readonly opts: RelayOptions) {}

  listen(hostname: string, port: number): Server<WsTunnel> {
    this.server = Bun.serve<WsTunnel>({
      hostname,
      port,
      idleTimeout: 255,
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      fetch: (req, server) => this.#handle(req, server),
      // WebSocket upgrades (Codex) are tunnelled frame for frame; the engine behind scans them.
      websocket: {
        idleTimeout: 0,
        maxPayloadLength: 64 * 1024 * 1024,
        open: (ws) => {
          this.#sockets.add(ws);
          bridge(ws);
        },
        message: (ws, msg) => {
          const up = ws.data.upstream;
          if (up.readyState === WebSocket.OPEN)
            up.send(typeof msg === "string" ? msg : (new Uint8Array(msg) as unknown as BufferSource));
        },
        close: (ws, code) => {
          this.#sockets.delete(ws);
          clientClosed(ws.data, code);
        },
      },
    });
    void this.#check();
    return this.server;
  }

  #setState(next: EngineState) {
    if (next === this.state) return;
    const prev = this.state;
    this.state = next;
    if (next === "healthy" || prev === "healthy" || prev === "starting")
      this.opts.log.warn(`engine ${this.opts.engineUrl()} is ${next}`, { fail_mode: this.opts.failMode() });
    if (next === "healthy") for (const w of this.#waiters) w();
  }

  async #check(): Promise<void> {
    if (this.#stopped) return;
    const r = this.opts.config().relay;
    try {
      const res = await fetch(new URL("/health", this.opts.engineUrl()), {
        signal: AbortSignal.timeout(r.health_check_timeout * 1000),
      });
      await res.arrayBuffer();
      this.#setState(res.status === 200 ? "healthy" : this.#notHealthy());
    } catch {
      this.#setState(this.#notHealthy());
    }
    if (!this.#stopped) this.#poll = setTimeout(() => void this.#check(), r.health_check_interval * 1000);
  }

  /** Still "starting" during the first queue_on_startup seconds, then "unhealthy". */
  #notHealthy(): EngineState {
    const q = this.opts.config().relay.queue_on_startup * 1000;
    return this.state === "starting" && Date.now() - this.startedAt < q ? "starting" : "unhealthy";
  }

  /** Wait (at most until queue_on_startup has passed since start) for the engine to become healthy. */
  async #waitWhileStarting(): Promise<void> {
    if (this.state !== "starting") return;
    const left = this.opts.config().relay.queue_on_startup * 1000 - (Date.now() - this.startedAt);
    if (left <= 0) {
      this.#setState("unhealthy");
      return;
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.#waiters.delete(done);
        resolve();
      };
      const t = setTimeout(() => {
        if (this.state === "starting") this.#setState("unhealthy");
        done();
      }, left);
      this.#waiters.add(done);
    });
  }

  /** fail_mode closed: a provider-shaped 503 that says when to try again. */
  #closed(provider: Provider, message: string): Response {
    const res = providerError(provider, 503, message, "bad_gateway");
    res.headers.set("retry-after", String(Math.ceil(this.opts.config().relay.health_check_interval)));
    return res;
  }

  /** 502: the request reached the engine, which stopped before answering. */
  #outcomeUnknown(provider: Provider, id: string, error: string): Response {
    this.opts.log.warn(`engine failed while handling ${id} (${error}): not resent, the outcome is unknown`);
    return providerError(
      provider,
      502,
      "sluice: the inspection engine stopped while handling this request; it may or may not have reached " +
        "the provider, and sluice did not send it again. Check before retrying a request with side effects.",
      "bad_gateway",
    );
  }

  health() {
    return {
      status: "ok",
      engine: this.state,
      fail_mode: this.opts.failMode(),
      uptime: (Date.now() - this.startedAt) / 1000,
    };
  }

  async #handle(req: Request, server: Server<WsTunnel>): Promise<Response | undefined> {
    const url = requestUrl(req);
    if (!url) return badHostResponse();
    if (url.pathname === "/health" && req.method === "GET") return Response.json(this.health());
    if (url.pathname === "/metrics" && req.method === "GET") {
      // The engine counts what was scanned; the relay only passes its numbers on.
      try {
        const res = await fetch(new URL("/metrics", this.opts.engineUrl()), {
          signal: AbortSignal.timeout(this.opts.config().relay.health_check_timeout * 1000),
        });
        return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
      } catch {
        return Response.json(
          { error: { code: "engine_unavailable", message: "engine unreachable" } },
          { status: 503 },
        );
      }
    }
    const provider = detectProvider(url.pathname, req.headers);
    if (provider === "unknown") return unknownProviderResponse(req.method, url.pathname);
    if (req.headers.get("upgrade")?.toLowerCase() === "websocket")
      return this.#upgrade(req, server, url, provider);
    server.timeout(req, 0);
    const cfg = this.opts.config();
    const body = req.body ? new Uint8Array(await req.arrayBuffer()) : null;
    await this.#waitWhileStarting();
    const id = `relay-${++this.#seq}`;
    const streaming =
      isStreamingRequest(url.pathname, url.search, undefined) ||
      /"stream"\s*:\s*true/.test(body ? new TextDecoder().decode(body) : "");
    const send = (to: URL, headers: Headers, retries: number) =>
      forward({
        provider,
        url: to,
        method: req.method,
        headers,
        body,
        streaming,
        clientSignal: req.signal,
        timers: timersFor(cfg.relay.timeout),
        retries,
        tls: this.opts.tls(),
        pool: this.opts.pool(),
        log: this.opts.log,
      });
    if (this.state === "healthy") {
      const headers = upstreamRequestHeaders(req.headers);
      headers.set("x-request-id", id);
      const ip = server.requestIP(req)?.address;
      if (ip) headers.set("x-forwarded-for", ip);
      const result = await send(new URL(url.pathname + url.search, this.opts.engineUrl()), headers, 0);
      // A 502 the engine itself answered, for an unreachable provider, is passed on as it is.
      if (!result.failure) return result.response;
      this.#setState("unhealthy");
      // The engine went away after the request's bytes reached it: it may have sent the request to the
      // provider already. Sending it again (fail_mode open) could deliver it twice, and saying it was
      // not sent (closed) could be false: the client is told the outcome is unknown, and nothing is resent.
      if (result.maybeSent) return this.#outcomeUnknown(provider, id, result.failure);
      // Refused before any byte reached it: fail_mode decides, as for an engine known to be down.
    }
    if (this.opts.failMode() === "closed")
      return this.#closed(
        provider,
        "sluice: the inspection engine is unavailable and fail_mode is closed; the request was not sent",
      );
    this.opts.log.warn(`engine unavailable: forwarding ${id} to ${provider} uninspected (fail_mode open)`);
    const direct = await send(
      upstreamUrl(cfg.providers[provider].upstream, url.pathname + url.search),
      upstreamRequestHeaders(req.headers),
      cfg.proxy.retries,
    );
    return direct.response;
  }

  async #upgrade(
    req: Request,
    server: Server<WsTunnel>,
    url: URL,
    provider: Provider,
  ): Promise<Response | undefined> {
    const cfg = this.opts.config();
    await this.#waitWhileStarting();
    const id = `relay-${++this.#seq}`;
    const headers = new Headers(req.headers);
    headers.set("x-request-id", id);
    const ip = server.requestIP(req)?.address;
    if (ip) headers.set("x-forwarded-for", ip);
    const timeoutMs = cfg.relay.timeout * 1000;
    const wsUrl = (base: string, tls: boolean) => {
      const u = upstreamUrl(base, url.pathname + url.search);
      u.protocol = tls ? "wss:" : "ws:";
      return u.href;
    };
    let up: Awaited<ReturnType<typeof connectUpstream>> | null = null;
    let target = "";
    if (this.state === "healthy") {
      target = wsUrl(this.opts.engineUrl(), this.opts.engineUrl().startsWith("https:"));
      up = await connectUpstream(target, headers, this.opts.tls(), timeoutMs);
      if (!up.ok) this.#setState("unhealthy");
    }
    if (!up?.ok) {
      if (this.opts.failMode() === "closed")
        return this.#closed(provider, "sluice: the inspection engine is unavailable and fail_mode is closed");
      const base = cfg.providers[provider].upstream;
      target = wsUrl(base, !base.startsWith("http:"));
      up = await connectUpstream(target, req.headers, this.opts.tls(), timeoutMs);
      if (!up.ok)
        return providerError(provider, 502, `sluice: upstream WebSocket failed: ${up.error}`, "bad_gateway");
    }
    const session = sessionContext({
      provider,
      pathname: url.pathname,
      headers: req.headers,
      json: undefined,
      sourceIp: ip ?? null,
    });
    const data = tunnelData(req, up, { id, provider, target, path: url.pathname, session });
    if (!upgradeClient(req, server, data)) {
      up.ws.close(1000);
      return providerError(provider, 502, "sluice: the client's WebSocket upgrade failed", "bad_gateway");
    }
    return undefined;
  }

  async stop(): Promise<void> {
    for (const ws of this.#sockets) {
      try {
        ws.close(1001, "sluice shutting down");
        ws.data.upstream.close(1001);
      } catch {
        /* gone */
      }
    }
    this.#stopped = true;
    if (this.#poll) clearTimeout(this.#poll);
    for (const w of this.#waiters) w();
    await this.server?.stop(false);
  }
}

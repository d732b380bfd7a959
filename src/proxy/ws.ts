/**
 * WebSocket tunnels through the proxy (Codex's Responses socket on a provider path, and `/ws?url=`):
 * the client's upgrade completes only after the upstream answered 101; frames pass both ways
 * unchanged; every client frame goes through the request-scanning hook first (in order). A blocked
 * frame on a Responses socket is answered with an error event (the socket stays open); on any other
 * tunnel a block closes both sides with 1008 (policy violation).
 */
import type { Server, ServerWebSocket } from "bun";
import type { UpstreamTls } from "../config/load.ts";
import type { ProviderLabel, SessionContext } from "../core/types.ts";
import { upstreamRequestHeaders } from "./headers.ts";

export interface WsTunnel {
  kind: "tunnel";
  id: string;
  provider: ProviderLabel;
  target: string;
  origin: string | null;
  path: string;
  headers: Headers;
  session: SessionContext;
  upstream: WebSocket;
  /** Upstream frames that arrived before the client side opened. */
  pending: (string | ArrayBuffer)[];
  /** Stop collecting into `pending` (called when the bridge takes over). */
  detachEarly: () => void;
  /** Client frames are scanned and sent in order. */
  chain: Promise<void>;
  openedAt: number;
  framesIn: number;
  framesOut: number;
  findings: number;
  closed: boolean;
  closeCode: number | null;
}

/** Codes a peer may send in a Close frame (1005/1006/1015 are reserved for local use). */
export function sendableCloseCode(code: number): number {
  if (
    code === 1000 ||
    (code >= 1001 && code <= 1003) ||
    (code >= 1007 && code <= 1014) ||
    (code >= 3000 && code <= 4999)
  )
    return code;
  return 1000;
}

/** How the upstream side of a `/ws?url=` tunnel is reached (a provider's socket needs none of it). */
export interface ConnectVia {
  /** `Host` to send when `target` names the checked address instead of the host. */
  host?: string;
  /** The host name TLS verifies, when `target` names an address. */
  servername?: string;
  /** Whether the client's Authorization and Cookie headers go to the upstream. */
  credentials: boolean;
  /** Headers set on the handshake besides the client's. */
  set?: Record<string, string>;
}

const CREDENTIALS = ["authorization", "cookie"];

/** Open the upstream side and wait for its 101 (or failure / timeout). */
export function connectUpstream(
  target: string,
  inbound: Headers,
  tls: UpstreamTls,
  timeoutMs: number,
  via: ConnectVia = { credentials: true },
): Promise<
  | { ok: true; ws: WebSocket; early: (string | ArrayBuffer)[]; detachEarly: () => void }
  | { ok: false; error: string }
> {
  const headers = upstreamRequestHeaders(inbound, { websocket: true });
  if (!via.credentials) for (const h of CREDENTIALS) headers.delete(h);
  if (via.host) headers.set("host", via.host);
  for (const [k, v] of Object.entries(via.set ?? {})) headers.set(k, v);
  // Compression is offered to the upstream as the client offered it to sluice, so the upstream
  // negotiates what it would with the client directly.
  const deflate = /(^|,)\s*permessage-deflate\s*(;|,|$)/i.test(inbound.get("sec-websocket-extensions") ?? "");
  const protocols = (inbound.get("sec-websocket-protocol") ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  return new Promise((resolve) => {
    let ws: WebSocket;
    const early: (string | ArrayBuffer)[] = [];
    try {
      ws = new WebSocket(target, {
        headers: Object.fromEntries(headers),
        protocols,
        perMessageDeflate: deflate,
        tls: via.servername ? { ...tls, servername: via.servername } : tls,
      } as unknown as string[]);
    } catch (e) {
      resolve({ ok: false, error: (e as Error).message });
      return;
    }
    ws.binaryType = "arraybuffer";
    const timer = setTimeout(() => {
      cleanup();
      try {
        ws.close();
      } catch {
        /* not open */
      }
      resolve({ ok: false, error: "upstream WebSocket handshake timed out" });
    }, timeoutMs);
    const onOpen = () => {
      cleanup();
      ws.addEventListener("message", keepEarly);
      resolve({ ok: true, ws, early, detachEarly: () => ws.removeEventListener("message", keepEarly) });
    };
    const keepEarly = (ev: MessageEvent) => early.push(ev.data as string | ArrayBuffer);
    const onFail = (ev: Event) => {
      cleanup();
      const msg =
        (ev as ErrorEvent).message || (ev as CloseEvent).reason || "upstream refused the WebSocket upgrade";
      resolve({ ok: false, error: msg });
    };
    const cleanup = () => {
      clearTimeout(timer);
      ws.removeEventListener("open", onOpen);
      ws.removeEventListener("error", onFail);
      ws.removeEventListener("close", onFail);
    };
    ws.addEventListener("open", onOpen);
    ws.addEventListener("error", onFail);
    ws.addEventListener("close", onFail);
  });
}

/** A connected upstream, as `connectUpstream` answers it. */
export type OpenUpstream = Extract<Awaited<ReturnType<typeof connectUpstream>>, { ok: true }>;

/** The state of one WebSocket tunnel: the client's upgrade request, the open upstream, and what names it. */
export function tunnelData(
  req: Request,
  up: OpenUpstream,
  named: Pick<WsTunnel, "id" | "provider" | "target" | "path" | "session">,
): WsTunnel {
  return {
    kind: "tunnel",
    ...named,
    origin: req.headers.get("origin"),
    headers: req.headers,
    upstream: up.ws,
    pending: up.early,
    detachEarly: up.detachEarly,
    chain: Promise.resolve(),
    openedAt: Date.now(),
    framesIn: 0,
    framesOut: 0,
    findings: 0,
    closed: false,
    closeCode: null,
  };
}

export function upgradeClient(req: Request, server: Server<WsTunnel>, data: WsTunnel): boolean {
  const proto = data.upstream.protocol;
  return server.upgrade(req, { data, headers: proto ? { "sec-websocket-protocol": proto } : undefined });
}

/** The client side closed: close the upstream side with a code it may send (once). */
export function clientClosed(d: WsTunnel, code: number): void {
  if (d.closed) return;
  d.closed = true;
  d.closeCode = code;
  try {
    d.upstream.close(sendableCloseCode(code));
  } catch {
    /* gone */
  }
}

/** Wire the upstream's events to the client once the client side is open; `relayed` hears each message. */
export function bridge(ws: ServerWebSocket<WsTunnel>, relayed: () => void = () => {}): void {
  const d = ws.data;
  const up = d.upstream;
  d.detachEarly();
  for (const m of d.pending.splice(0)) {
    d.framesOut++;
    ws.send(typeof m === "string" ? m : new Uint8Array(m));
  }
  up.addEventListener("message", (ev) => {
    d.framesOut++;
    const m = ev.data as string | ArrayBuffer;
    ws.send(typeof m === "string" ? m : new Uint8Array(m));
    relayed();
  });
  up.addEventListener("close", (ev) => {
    if (d.closed) return;
    d.closed = true;
    d.closeCode = ev.code;
    try {
      ws.close(sendableCloseCode(ev.code), ev.reason);
    } catch {
      /* already closed */
    }
  });
}

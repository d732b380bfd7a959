import { maskPathCredentials } from "../core/log.ts";

/**
 * Proxy header hygiene in one place: what is dropped between the client and the
 * upstream, and between the upstream and the client. Everything else passes unchanged.
 */

/** RFC 9110 §7.6.1 hop-by-hop headers, plus the ones fetch/serve set themselves. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** WebSocket handshake headers: a WebSocket tunnel makes its own handshake with the upstream. */
const WS_HANDSHAKE = new Set([
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-extensions",
  "sec-websocket-accept",
]);

function connectionTokens(h: Headers): Set<string> {
  const v = h.get("connection");
  if (!v) return new Set();
  return new Set(
    v
      .split(",")
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
}

const NONE: ReadonlySet<string> = new Set();

/**
 * A copy of `from` without the hop-by-hop headers, the ones its `Connection` lists, and those in
 * `drop` (lower case). Every header sluice relays, in any mode, passes through here.
 */
export function withoutHopByHop(from: Headers, drop: ReadonlySet<string> = NONE): Headers {
  // A native copy, then the deletions: cheaper than copying header by header (docs/benchmarks.md).
  const out = new Headers(from);
  for (const k of HOP_BY_HOP) out.delete(k);
  for (const k of connectionTokens(from)) out.delete(k);
  for (const k of drop) out.delete(k);
  return out;
}

/** `Host` (fetch sets it from the URL), `Content-Length` (fetch sets it from the body it sends), `Expect`. */
const UPSTREAM_DROP = new Set(["host", "content-length", "expect"]);
const UPSTREAM_WS_DROP = new Set([...UPSTREAM_DROP, ...WS_HANDSHAKE, "sec-websocket-protocol"]);

/**
 * Headers to send upstream: hop-by-hop and the tokens listed in `Connection` removed, `Host` dropped
 * (fetch sets it from the URL), `Content-Length` dropped (fetch sets it from the body we send, which
 * may be a redacted body). `Accept-Encoding` is kept so compressed responses pass through untouched.
 */
export function upstreamRequestHeaders(inbound: Headers, opts: { websocket?: boolean } = {}): Headers {
  return withoutHopByHop(inbound, opts.websocket ? UPSTREAM_WS_DROP : UPSTREAM_DROP);
}

const SET_COOKIE = new Set(["set-cookie"]);

/**
 * Headers to return to the client: hop-by-hop removed. `Content-Encoding` and `Content-Length` are
 * kept because the body bytes are relayed exactly as the upstream sent them (fetch `decompress: false`).
 */
export function clientResponseHeaders(upstream: Headers): Headers {
  const out = withoutHopByHop(upstream, SET_COOKIE);
  for (const c of upstream.getSetCookie()) out.append("set-cookie", c); // one by one
  return out;
}

/**
 * A path and query safe to log and store: credential-like query parameters (Gemini's `?key=`) have
 * their values replaced by `****`. The request itself is forwarded with the original query.
 */
export function loggablePath(pathname: string, search: string): string {
  return maskPathCredentials(pathname + search);
}

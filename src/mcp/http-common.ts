/**
 * Header hygiene and message helpers shared by the HTTP bridge and the HTTP reverse proxy, and the
 * options both stdio bridges (HTTP and WebSocket) take.
 */
import type { UpstreamTls } from "../config/load.ts";
import type { Logger } from "../core/log.ts";
import { withoutHopByHop } from "../proxy/headers.ts";
import type { McpSession, Outcome } from "./core.ts";
import { classify, type JsonRpcId } from "./jsonrpc.ts";
import { SseParser, sseEvent } from "./sse.ts";

/** What a stdio bridge to a remote server (`sluice mcp --upstream http(s)://… | ws(s)://…`) takes. */
export interface BridgeOptions {
  upstream: URL;
  session: McpSession;
  log: Logger;
  /** Extra request headers (`--header`), e.g. Authorization. */
  headers: [string, string][];
  tls?: UpstreamTls;
  input?: ReadableStream<Uint8Array>;
}

/** The fetch options that carry UpstreamTls (nothing when defaults apply). */
export function tlsInit(tls: UpstreamTls | undefined): { tls?: UpstreamTls } {
  return tls && (tls.ca?.length || !tls.rejectUnauthorized) ? { tls } : {};
}

/**
 * Headers sluice recomputes between an MCP client and server: the bodies are read, filtered and
 * re-encoded, so neither their length nor their encoding passes on.
 */
const RECOMPUTED = new Set(["host", "content-length", "accept-encoding", "content-encoding"]);

/** Copy headers minus hop-by-hop ones, those named in `Connection`, and the recomputed ones. */
export function cleanHeaders(from: Headers): Headers {
  return withoutHopByHop(from, RECOMPUTED);
}

/** The requests in a message (one or a batch): their ids, and whether one is `initialize`. */
export function requestsIn(text: string): { ids: JsonRpcId[]; initialize: boolean } {
  const out = { ids: [] as JsonRpcId[], initialize: false };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return out;
  }
  for (const m of Array.isArray(v) ? v : [v]) {
    const c = classify(m);
    if (c.kind !== "request") continue;
    out.ids.push(c.msg.id);
    if (c.msg.method === "initialize") out.initialize = true;
  }
  return out;
}

/** A JSON-RPC error for a request that could not reach the server (not a sluice block). */
export function transportError(id: JsonRpcId, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32000, message } });
}

/** One line for newline-delimited output: the text itself unless it spans lines. */
export function oneLine(text: string): string {
  if (!/[\r\n]/.test(text)) return text;
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text.replace(/[\r\n]+/g, " ");
  }
}

/** The text to forward for an outcome, or null. */
export function forwardText(o: Outcome, original: string): string | null {
  return o.forward === null ? null : o.forward === "original" ? original : o.forward;
}

/**
 * Run every `data` event of an SSE body through `session.fromServer`, forwarding unchanged events as
 * their raw text. `extra` events (replies for a partly blocked batch) are appended at the end.
 */
export function filterSse(
  body: ReadableStream<Uint8Array>,
  session: McpSession,
  extra: string[] = [],
): ReadableStream<Uint8Array> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const reader = body.getReader();
  let queue: Promise<void> = Promise.resolve();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      const pending: Promise<void>[] = [];
      const onEvent = (e: import("./sse.ts").SseEvent) => {
        queue = queue.then(async () => {
          if (e.data === null || (e.event && e.event !== "message")) {
            controller.enqueue(encoder.encode(e.raw));
            return;
          }
          const o = await session.fromServer(e.data);
          const text = forwardText(o, e.data);
          if (text === null) {
            if (e.id !== undefined) controller.enqueue(encoder.encode(`id: ${e.id}\n\n`));
          } else controller.enqueue(encoder.encode(o.forward === "original" ? e.raw : sseEvent(text, e)));
        });
        pending.push(queue);
      };
      if (done) {
        parser.push(decoder.decode(), onEvent);
        parser.end(onEvent);
        await Promise.all(pending);
        await queue;
        for (const r of extra) controller.enqueue(encoder.encode(sseEvent(r)));
        controller.close();
        return;
      }
      parser.push(decoder.decode(value, { stream: true }), onEvent);
      await Promise.all(pending);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

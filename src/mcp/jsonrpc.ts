/**
 * JSON-RPC 2.0 as MCP carries it: message classification, error replies, and newline framing.
 * sluice forwards the bytes it received whenever it does not change a message; these helpers only
 * look at a parsed copy.
 */
import { z } from "zod";

export type JsonRpcId = string | number;

/** The shapes sluice needs to tell messages apart (MCP messages carry more; extra keys are kept). */
export const requestSchema = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number()]),
  method: z.string(),
  params: z.unknown().optional(),
});
export const notificationSchema = z.looseObject({
  jsonrpc: z.literal("2.0"),
  method: z.string(),
  params: z.unknown().optional(),
});
export const responseSchema = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});

export type JsonRpcRequest = z.infer<typeof requestSchema>;
export type JsonRpcNotification = z.infer<typeof notificationSchema>;
export type JsonRpcResponse = z.infer<typeof responseSchema>;

export type Classified =
  | { kind: "request"; msg: JsonRpcRequest }
  | { kind: "notification"; msg: JsonRpcNotification }
  | { kind: "response"; msg: JsonRpcResponse }
  | { kind: "invalid" };

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Classify one (non-batch) message. Cheap: checks keys rather than running the schemas on hot paths. */
export function classify(v: unknown): Classified {
  if (!isObj(v) || v.jsonrpc !== "2.0") return { kind: "invalid" };
  const hasId = "id" in v && (typeof v.id === "string" || typeof v.id === "number");
  if (typeof v.method === "string") {
    return hasId
      ? { kind: "request", msg: v as JsonRpcRequest }
      : { kind: "notification", msg: v as JsonRpcNotification };
  }
  if ("result" in v || "error" in v) {
    if (hasId || v.id === null) return { kind: "response", msg: v as JsonRpcResponse };
  }
  return { kind: "invalid" };
}

/** Wire error codes (numeric, JSON-RPC); sluice's own reasons travel in `data.sluice.reason`. */
export const ERROR_BLOCKED = -32001;

export interface BlockReason {
  /** Stable string code: "secret_in_arguments", "unknown_tool", "tool_drift", "tool_poisoning", "secret_in_result". */
  reason: string;
  message: string;
  findings?: { type: string; rule: string; path: string; severity: string }[];
}

/** A JSON-RPC error response answering `id`, saying why sluice stopped the message. */
export function blockedError(id: JsonRpcId | null, why: BlockReason): JsonRpcResponse {
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: ERROR_BLOCKED,
      message: why.message,
      data: { sluice: { reason: why.reason, findings: why.findings ?? [] } },
    },
  };
}

/** `blockedError` as the text to send. */
export function blockedResponse(id: JsonRpcId | null, why: BlockReason): string {
  return JSON.stringify(blockedError(id, why));
}

/** Stable map key for a JSON-RPC id (1 and "1" are different ids). */
export const idKey = (id: JsonRpcId): string => (typeof id === "number" ? `n:${id}` : `s:${id}`);

/**
 * Splits a byte stream into newline-delimited messages without copying when a line lies inside one
 * chunk. A trailing `\r` is kept in the line's bytes (forwarded as received) and ignored by parsing.
 */
export class LineSplitter {
  #pending: Uint8Array[] = [];
  #pendingLen = 0;

  push(chunk: Uint8Array, onLine: (line: Uint8Array) => void): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      let line = chunk.subarray(start, nl);
      if (this.#pendingLen) {
        this.#pending.push(line);
        line = concat(this.#pending, this.#pendingLen + line.length);
        this.#pending = [];
        this.#pendingLen = 0;
      }
      if (line.length) onLine(line);
      start = nl + 1;
    }
    if (start < chunk.length) {
      // Copy: the caller may reuse the chunk's buffer.
      const rest = chunk.slice(start);
      this.#pending.push(rest);
      this.#pendingLen += rest.length;
    }
  }

  /** The last line when the stream ended without a newline. */
  end(onLine: (line: Uint8Array) => void): void {
    if (this.#pendingLen) onLine(concat(this.#pending, this.#pendingLen));
    this.#pending = [];
    this.#pendingLen = 0;
  }
}

export function concat(parts: Uint8Array[], total?: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total ?? parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * The request-scanning hook: the one function the proxy, the WebSocket relay and the MCP proxy call
 * to turn an outbound payload into an action. The detection engine and policy stand behind it.
 */
import type { Action, Finding, ProviderLabel, SessionContext } from "./types.ts";

export interface ScanRequest {
  provider: ProviderLabel;
  method: string;
  /** Path with query, as the client sent it. */
  path: string;
  headers: Headers;
  /** The raw body bytes (a WebSocket text frame's bytes, an MCP message's bytes). */
  body: Uint8Array;
  /** The body parsed as JSON when it is JSON, else undefined. Parsed once by the caller when it already did. */
  json?: unknown;
  session: SessionContext;
  transport: "http" | "websocket" | "mcp";
}

export interface Verdict {
  action: Action;
  /** Every finding that reached policy (including ones already seen in this session). */
  findings: Finding[];
  /** Set when action is "redact": the body to forward instead. */
  body?: Uint8Array;
  /** Bytes actually scanned (0 when skipped). */
  scanned_bytes: number;
  /** Set when scanning was skipped, e.g. "body larger than proxy.max_body_size". */
  skipped?: string;
}

export type RequestHook = (req: ScanRequest) => Verdict | Promise<Verdict>;

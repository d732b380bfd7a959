/**
 * The request-scanning hook: the one function the proxy, its WebSocket tunnels and the MCP proxy call
 * to turn an outbound payload into an action. The payload pipeline (src/policy/pipeline.ts) stands
 * behind it; a test may put its own in its place.
 */
import type { Action, Finding, ProviderLabel, SessionContext } from "./types.ts";

/** How a payload travels: an HTTP request body, a WebSocket frame, an MCP message. */
export type Transport = "http" | "websocket" | "mcp";

export interface ScanRequest {
  provider: ProviderLabel;
  /** The HTTP method; "WS" for a WebSocket frame; the JSON-RPC method for an MCP message. */
  method: string;
  /** Path with query, as the client sent it; for an MCP message, what it is (`tools/call write_file`). */
  path: string;
  headers: Headers;
  /** The raw body bytes (a WebSocket text frame's bytes, an MCP message's bytes). */
  body: Uint8Array;
  /** The body parsed as JSON when it is JSON, else undefined. Parsed once by the caller when it already did. */
  json?: unknown;
  /**
   * The text `json` was parsed from, when the caller parsed it: its strings equal the body's (non-ASCII
   * characters may be written as `\u` escapes), so what reads the JSON's structure reads it here
   * instead of decoding the body again.
   */
  jsonSource?: string;
  /**
   * The caller found that no object of the body holds a key twice (it parsed most of the body from
   * the previous turn's, `src/proxy/turns.ts`), so the pipeline does not look again.
   */
  uniqueKeys?: boolean;
  /**
   * The strings of `json` as the payload's extraction gives them (document order), when the caller
   * has them: `src/proxy/turns.ts` builds them from the previous turn's. Paths are worked out from
   * `json` when a finding needs one.
   */
  texts?: string[];
  /**
   * Scan only the strings under these places of the JSON body (key paths from its root, such as
   * `["params", "arguments"]`); default the whole body. Paths of findings and edits stay from the root.
   */
  select?: readonly (readonly (string | number)[])[];
  session: SessionContext;
  transport: Transport;
  /** The request id (`req-<n>`) or WebSocket connection id, when the caller has one. */
  id?: string;
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
  /** Set when scanning failed: the body goes out unscanned and `findings` holds a `scan_error`. */
  error?: string;
}

export type RequestHook = (req: ScanRequest) => Verdict | Promise<Verdict>;

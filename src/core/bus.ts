/**
 * In-process event bus. The proxy, MCP proxy and config reload emit; the store, the live SSE stream
 * and the logs subscribe. Emitting never throws: a failing listener is reported and skipped.
 * Payloads never hold a raw matched value: they reach the log, the store and the live stream.
 */
import type { Action, Finding, Login, ProviderLabel, SessionContext, UnscannedReason } from "./types.ts";

export interface FindingEvent {
  finding: Finding;
  session: SessionContext;
  provider: ProviderLabel;
  /** Request id (`req-<n>`), WebSocket connection id or MCP message id. */
  request_id: string;
  /** "http" | "websocket" | "mcp" | "system" (mode_changed, scan_error without a request). */
  transport: "http" | "websocket" | "mcp" | "system";
}

export interface RequestEvent {
  request_id: string;
  ts: string;
  provider: ProviderLabel;
  client: string;
  model: string | null;
  method: string;
  path: string;
  action: Action;
  finding_count: number;
  /** The rules whose findings gave the request its action (comma-separated), null when none did. */
  rules: string | null;
  /** Where that action came from (the findings' `action_source`, comma-separated), null when none did. */
  action_source: string | null;
  bytes: number;
  duration_ms: number;
  upstream_status: number | null;
  session_id: string;
  account_id: string | null;
  /** The session's project and branch as the request named them (kept on the session, not audited). */
  working_directory?: string | null;
  git_branch?: string | null;
  mode: "active" | "passthrough";
  error: string | null;
  /** How the client signed in. */
  login: Login;
  /** Set when sluice could not read the request (forwarded unscanned, not forwarded, or routed around). */
  unscanned: UnscannedReason | null;
}

export interface WsConnectionEvent {
  connection_id: string;
  phase: "open" | "close";
  target_url: string;
  origin: string | null;
  provider: ProviderLabel;
  session_id: string;
  duration_ms: number;
  frames_in: number;
  frames_out: number;
  findings: number;
  close_code: number | null;
}

export interface BusEvents {
  finding: FindingEvent;
  request: RequestEvent;
  "mode-changed": { mode: "active" | "passthrough"; previous: "active" | "passthrough" };
  "config-reloaded": { changes: string[]; source: "sighup" | "api" | "startup" };
  "ws-connection": WsConnectionEvent;
  "mcp-event": { kind: string; server: string; message: string; severity: string; [k: string]: unknown };
}

export type BusEventName = keyof BusEvents;

/** Every event of the bus, by name (what the dashboard's live stream passes on). */
export const BUS_EVENTS = [
  "finding",
  "request",
  "mode-changed",
  "config-reloaded",
  "ws-connection",
  "mcp-event",
] as const satisfies readonly BusEventName[];
/** Does not compile when an event is added to BusEvents but not to BUS_EVENTS. */
export type BusEventsAllListed = NeverOr<Exclude<BusEventName, (typeof BUS_EVENTS)[number]>>;
type NeverOr<T extends never> = T;

type Listener<K extends BusEventName> = (payload: BusEvents[K]) => void;

export class Bus {
  #listeners = new Map<BusEventName, Set<Listener<BusEventName>>>();
  /** Called when a listener throws; defaults to stderr. */
  onListenerError: (event: string, err: unknown) => void = (event, err) =>
    console.error(`sluice: listener for ${event} failed: ${(err as Error)?.message ?? err}`);

  on<K extends BusEventName>(event: K, fn: Listener<K>): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    set.add(fn as Listener<BusEventName>);
    return () => set.delete(fn as Listener<BusEventName>);
  }

  emit<K extends BusEventName>(event: K, payload: BusEvents[K]): void {
    const set = this.#listeners.get(event);
    if (!set) return;
    for (const fn of set) {
      try {
        (fn as Listener<K>)(payload);
      } catch (err) {
        this.onListenerError(event, err);
      }
    }
  }

  listenerCount(event: BusEventName): number {
    return this.#listeners.get(event)?.size ?? 0;
  }
}

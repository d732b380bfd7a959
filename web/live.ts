/**
 * One shared EventSource on `/api/v1/live` for the whole page. Pages subscribe to event names
 * (finding, request, mode-changed, config-reloaded, ws-connection, mcp-event, log) and unsubscribe
 * when they are left.
 */
import { BUS_EVENTS } from "../src/core/bus.ts";

export const LIVE_EVENTS = [...BUS_EVENTS, "log"] as const;
export type LiveEventName = (typeof LIVE_EVENTS)[number];
export type LiveEvent = { type: string; ts: string; [k: string]: unknown };
type Listener = (ev: LiveEvent) => void;

const listeners = new Map<string, Set<Listener>>();
const stateListeners = new Set<(connected: boolean) => void>();
let source: EventSource | null = null;
let connected = false;

function setConnected(v: boolean) {
  if (connected === v) return;
  connected = v;
  for (const fn of stateListeners) fn(v);
}

function dispatch(name: string, raw: string) {
  let data: LiveEvent;
  try {
    data = JSON.parse(raw) as LiveEvent;
  } catch {
    return;
  }
  if (!data.type) data.type = name;
  for (const key of [name, "*"]) for (const fn of listeners.get(key) ?? []) fn(data);
}

/** Open the stream (idempotent). EventSource reconnects by itself after a drop. */
export function startLive() {
  if (source) return;
  source = new EventSource("/api/v1/live");
  source.onopen = () => setConnected(true);
  source.onerror = () => setConnected(source?.readyState === EventSource.OPEN);
  for (const name of LIVE_EVENTS)
    source.addEventListener(name, (e) => dispatch(name, (e as MessageEvent).data));
  source.onmessage = (e) => {
    try {
      const d = JSON.parse(e.data) as LiveEvent;
      if (d.type) dispatch(d.type, e.data);
    } catch {
      /* comment or keep-alive */
    }
  };
}

export function stopLive() {
  source?.close();
  source = null;
  setConnected(false);
}

/** Subscribe to one event name, or "*" for all. Returns the unsubscribe function. */
export function onLive(name: LiveEventName | "*", fn: Listener): () => void {
  let set = listeners.get(name);
  if (!set) listeners.set(name, (set = new Set()));
  set.add(fn);
  return () => set.delete(fn);
}

export function onLiveState(fn: (connected: boolean) => void): () => void {
  stateListeners.add(fn);
  fn(connected);
  return () => stateListeners.delete(fn);
}

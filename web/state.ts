/** Page-wide state: the proxy status (mode, ports) shared by the header, the banner and pages. */
import { get } from "./api.ts";
import type { Status } from "./types.ts";

let status: Status | null = null;
const listeners = new Set<(s: Status) => void>();

export function currentStatus(): Status | null {
  return status;
}

export async function refreshStatus(): Promise<Status> {
  status = await get<Status>("/status");
  for (const fn of listeners) fn(status);
  return status;
}

export function onStatus(fn: (s: Status) => void): () => void {
  listeners.add(fn);
  if (status) fn(status);
  return () => listeners.delete(fn);
}

/** The proxy's base URL as a tool should use it. */
export function proxyUrl(): string {
  const port = status?.proxy_port ?? 8080;
  return `http://127.0.0.1:${port}`;
}

/** Page context handed to each page renderer. */
export interface PageCtx {
  root: HTMLElement;
  /** Hash path segments after the page name: `#/sessions/abc` → ["abc"]. */
  rest: string[];
  params: URLSearchParams;
  /** Register work to undo when the user leaves the page (SSE listeners, timers). */
  onLeave(fn: () => void): void;
  /** True once the user has left (drop late responses). */
  left(): boolean;
}

/** Write the page's filter into the address bar without re-rendering. */
export function replaceParams(page: string, params: Record<string, string | number | null | undefined>) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== null && v !== undefined && v !== "") p.set(k, String(v));
  const q = p.toString();
  history.replaceState(null, "", `#/${page}${q ? `?${q}` : ""}`);
}

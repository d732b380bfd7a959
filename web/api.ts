/**
 * The dashboard API client: the one place that knows the CSRF token, the error shape
 * (`{"error":{"code","message"}}`) and what a 401 means (the session expired: sign in again).
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
const unauthorizedListeners = new Set<(message: string) => void>();

export function setCsrfToken(token: string | null) {
  csrfToken = token;
}

/** Called with a readable message when the API answers 401 (no or expired session). */
export function onUnauthorized(fn: (message: string) => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

export type Query = Record<string, string | number | boolean | null | undefined>;

/** `?a=1&b=x`, skipping empty values. */
export function qs(query: Query | undefined): string {
  if (!query) return "";
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === null || v === undefined || v === "") continue;
    p.set(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : "";
}

export interface RequestOptions {
  method?: "GET" | "POST" | "PUT" | "DELETE";
  query?: Query;
  body?: unknown;
  /** Do not announce a 401 (used by the login form and the first session probe). */
  quiet401?: boolean;
}

export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const method = opts.method ?? "GET";
  const headers: Record<string, string> = { accept: "application/json" };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrfToken) headers["x-csrf-token"] = csrfToken;
  let res: Response;
  try {
    res = await fetch(`/api/v1${path}${qs(opts.query)}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      credentials: "same-origin",
    });
  } catch {
    throw new ApiError(0, "network_error", "sluice is not reachable. Is `sluice serve` still running?");
  }
  const text = await res.text();
  let data: unknown = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    const err = (data as { error?: { code?: string; message?: string } } | null)?.error;
    const code = err?.code ?? `http_${res.status}`;
    let message = err?.message ?? `${method} ${path} failed with HTTP ${res.status}`;
    if (res.status === 401 && !opts.quiet401) {
      message = "Your session expired. Sign in again.";
      for (const fn of unauthorizedListeners) fn(message);
    } else if (res.status === 403 && /csrf/i.test(code)) {
      message = "Your session token is no longer valid. Reload the page or sign in again.";
    }
    throw new ApiError(res.status, code, message);
  }
  return data as T;
}

export const get = <T>(path: string, query?: Query) => api<T>(path, { query });
export const post = <T>(path: string, body?: unknown) => api<T>(path, { method: "POST", body: body ?? {} });
export const put = <T>(path: string, body: unknown) => api<T>(path, { method: "PUT", body });
export const del = <T>(path: string) => api<T>(path, { method: "DELETE" });

/** URL of a download endpoint (exports), with the current filter. */
export function downloadUrl(path: string, query: Query): string {
  return `/api/v1${path}${qs(query)}`;
}

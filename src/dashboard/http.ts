/**
 * HTTP vocabulary of the dashboard API: the error shape (`{"error":{"code","message"}}`, see
 * docs/api.md), query parameter parsing with bounds, and JSON body reading. Route handlers throw `ApiError`; the app turns it into a response.
 */

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500;

/** An API failure that knows its status and its `{"error":{"code","message"}}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const SECURITY_HEADERS: Record<string, string> = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
};

export function errorResponse(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
) {
  return new Response(JSON.stringify({ error: { code, message } }), {
    status,
    headers: { "content-type": "application/json", ...SECURITY_HEADERS, ...headers },
  });
}

export const badRequest = (message: string, code = "invalid_request") => new ApiError(400, code, message);
export const notFound = (what: string) => new ApiError(404, "not_found", `${what} not found`);

export type Query = Record<string, string | undefined>;

/** An integer query parameter within [min, max]; absent → default; anything else → 400. */
export function intParam(q: Query, name: string, def: number, min: number, max: number): number {
  const raw = q[name];
  if (raw === undefined || raw === "") return def;
  if (!/^-?\d+$/.test(raw)) throw badRequest(`${name} must be an integer from ${min} to ${max}`);
  const n = Number(raw);
  if (n < min || n > max) throw badRequest(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

/** The `limit` (default 50, 1 to `maxLimit`) and `offset` (0 to 10,000,000) of a list endpoint. */
export function pageParams(q: Query, maxLimit: number): { limit: number; offset: number } {
  return { limit: intParam(q, "limit", 50, 1, maxLimit), offset: intParam(q, "offset", 0, 0, 10_000_000) };
}

export function optionalInt(q: Query, name: string, min: number, max: number): number | undefined {
  if (q[name] === undefined || q[name] === "") return undefined;
  return intParam(q, name, min, min, max);
}

/** A query parameter restricted to a set of values; absent → undefined. */
export function enumParam<T extends string>(q: Query, name: string, values: readonly T[]): T | undefined {
  const raw = q[name];
  if (raw === undefined || raw === "") return undefined;
  if (!(values as readonly string[]).includes(raw))
    throw badRequest(`${name} must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}`);
  return raw as T;
}

export function strParam(q: Query, name: string, max = 500): string | undefined {
  const raw = q[name];
  if (raw === undefined || raw === "") return undefined;
  if (raw.length > max) throw badRequest(`${name} is longer than ${max} characters`);
  return raw;
}

export function boolParam(q: Query, name: string): boolean | undefined {
  const raw = q[name];
  if (raw === undefined || raw === "") return undefined;
  if (raw === "true") return true;
  if (raw === "false") return false;
  throw badRequest(`${name} must be "true" or "false"`);
}

/** The body as a JSON object; anything else is a 400. */
export function objectBody(body: unknown): Record<string, unknown> {
  let v = body;
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      throw badRequest("the body is not valid JSON");
    }
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw badRequest("the body must be a JSON object");
  return v as Record<string, unknown>;
}

/** One CSV field; cells starting with a formula character are prefixed with `'`. */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return "";
  let s = typeof v === "object" ? JSON.stringify(v) : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Stream rows as CSV or a JSON array without holding them all in memory. */
export function exportResponse(
  rows: Iterable<Record<string, unknown>>,
  format: "csv" | "json",
  name: string,
  columns: string[],
): Response {
  const enc = new TextEncoder();
  const it = rows[Symbol.iterator]();
  let first = true;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const parts: string[] = [];
      for (let i = 0; i < 500; i++) {
        const n = it.next();
        if (n.done) {
          if (format === "json") parts.push(first ? "[]\n" : "\n]\n");
          else if (first) parts.push(`${columns.join(",")}\n`);
          controller.enqueue(enc.encode(parts.join("")));
          controller.close();
          return;
        }
        const row = n.value;
        if (format === "json") {
          parts.push(`${first ? "[\n" : ",\n"}${JSON.stringify(row)}`);
        } else {
          if (first) parts.push(`${columns.join(",")}\n`);
          parts.push(`${columns.map((c) => csvField(row[c])).join(",")}\n`);
        }
        first = false;
      }
      controller.enqueue(enc.encode(parts.join("")));
    },
  });
  const stamp = new Date().toISOString().slice(0, 10);
  return new Response(stream, {
    headers: {
      "content-type": format === "csv" ? "text/csv; charset=utf-8" : "application/json",
      "content-disposition": `attachment; filename="sluice-${name}-${stamp}.${format}"`,
      ...SECURITY_HEADERS,
    },
  });
}

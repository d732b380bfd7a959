/**
 * Codex signed in with ChatGPT asks the back end where to send its conversation: the answer to
 * `GET /backend-api/wham/accounts/check` names, per account, a `workspace_backend_origin`, and Codex
 * then opens `<origin>/backend-api/codex/responses` itself, whatever `chatgpt_base_url` says. It
 * accepts only an HTTPS origin, so an origin there is always a route around sluice (which listens on
 * plain HTTP). This reads a copy of that answer, as the client receives it, and returns the origins
 * it names; the response itself is relayed untouched.
 */
import { decodeBody } from "./encoding.ts";

/** The account check answers are a few kilobytes; anything larger is not read. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** Whether `pathname` is Codex's account check (the origins are in its answer). */
export function isCodexAccountCheck(pathname: string): boolean {
  return pathname.startsWith("/backend-api/") && pathname.endsWith("/accounts/check");
}

/** The `workspace_backend_origin` values of an account check answer (a list or a map of accounts). */
export function routedOrigins(answer: unknown): string[] {
  const accounts = (answer as { accounts?: unknown } | null)?.accounts;
  const list = Array.isArray(accounts)
    ? accounts
    : accounts && typeof accounts === "object"
      ? Object.values(accounts)
      : [];
  const origins = new Set<string>();
  for (const a of list) {
    const entry = a && typeof a === "object" ? (a as Record<string, unknown>) : {};
    const inner =
      entry.account && typeof entry.account === "object" ? (entry.account as Record<string, unknown>) : {};
    for (const o of [entry.workspace_backend_origin, inner.workspace_backend_origin])
      if (typeof o === "string" && o !== "") origins.add(o.slice(0, 256));
  }
  return [...origins];
}

/**
 * The origins Codex will send its conversation to, read from a copy of the account check answer;
 * [] for any other path, a failed answer, or one that cannot be read. Never throws.
 */
export async function watchCodexRouting(pathname: string, response: Response): Promise<string[]> {
  if (!isCodexAccountCheck(pathname) || !response.ok || !response.body) return [];
  try {
    const copy = response.clone();
    const declared = Number(copy.headers.get("content-length") ?? "0");
    if (declared > MAX_ANSWER_BYTES) {
      await copy.body?.cancel();
      return [];
    }
    const raw = new Uint8Array(await copy.arrayBuffer());
    if (raw.byteLength > MAX_ANSWER_BYTES) return [];
    const decoded = decodeBody(raw, copy.headers.get("content-encoding"), MAX_ANSWER_BYTES);
    if (!decoded.ok) return [];
    return routedOrigins(JSON.parse(new TextDecoder().decode(decoded.bytes)));
  } catch {
    return [];
  }
}

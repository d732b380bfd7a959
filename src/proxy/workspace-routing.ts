/**
 * Where Codex signed in with ChatGPT sends its conversation, kept on sluice's side.
 *
 * Codex first asks the back end which server holds the account (`GET /backend-api/wham/accounts/
 * check`): each account of the answer names a `workspace_backend_origin`. Codex accepts only an HTTPS
 * origin there and sends the conversation to it directly, whatever `chatgpt_base_url` says, so with
 * sluice listening on plain HTTP the conversation would go around it. What sluice does instead:
 *
 * - it remembers each account's origin (by account id), when it is one sluice forwards to: HTTPS,
 *   no credentials, path or query, on the host of `providers.chatgpt.upstream` or under it. Any other
 *   origin is not remembered: that account's conversation goes to `providers.chatgpt.upstream`, so
 *   an answer cannot make sluice forward to a host of its choosing;
 * - the answer the client receives names `NO_CONSTRAINT` instead of any origin, every other byte as
 *   it came. Codex then sends its conversation to `openai_base_url` when that is another origin than
 *   `chatgpt_base_url` (what `sluice connect codex` writes: both are sluice, under two names), and
 *   refuses to send it at all when they are one origin. It never reaches the back end unscanned;
 * - the conversation reaching sluice, at `/backend-api/codex/…` or at the OpenAI paths with the
 *   account's `chatgpt-account-id` header (how Codex sends it to `openai_base_url`), is forwarded to
 *   the remembered origin with the `x-openai-account-routing-override` Codex would have sent there.
 *
 * An answer that cannot be read or rewritten is relayed as it came (the tool keeps working), and the
 * origins it names are reported, so the way around sluice is never silent. See docs/logins.md.
 */
import { CHATGPT_RESPONSES_PATH } from "../payload/chatgpt.ts";
import { decodeBody, encodeBody } from "./encoding.ts";

/** The account check answers are a few kilobytes; a larger one is not read. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** The value that tells Codex the account has no back end of its own. */
export const NO_CONSTRAINT = "NO_CONSTRAINT";

/** The header Codex sends to a workspace's back end with the account's routing override. */
const OVERRIDE_HEADER = "x-openai-account-routing-override";

/** The routing overrides Codex accepts; it sends the header for all but NO_CONSTRAINT. */
const OVERRIDES = new Set(["us", "us_cr"]);

/** Accounts remembered at most: the oldest is forgotten first. */
const MAX_ACCOUNTS = 4096;

/** Whether `pathname` is Codex's account check (the origins are in its answer). */
export function isCodexAccountCheck(pathname: string): boolean {
  return pathname.startsWith("/backend-api/") && pathname.endsWith("/accounts/check");
}

/**
 * The ChatGPT back-end path of a request Codex sent to its `openai_base_url`: `/v1/responses…` and
 * `/v1/models…` are `/backend-api/codex/responses…` and `/backend-api/codex/models…` there; any
 * other path is kept.
 */
export function chatgptBackendPath(pathname: string): string {
  const m = /^\/v1\/(responses|models)(?=\/|$)/.exec(pathname);
  return m ? `/backend-api/codex/${m[1]}${pathname.slice(m[0].length)}` : pathname;
}

interface Entry {
  id: string;
  origin: unknown;
  override: unknown;
}

/** The accounts of an answer (a list, or a map by id), each with its origin and override. */
function accountsOf(answer: unknown): Entry[] {
  const accounts = (answer as { accounts?: unknown } | null)?.accounts;
  const list: [string, unknown][] = Array.isArray(accounts)
    ? accounts.map((a) => ["", a])
    : accounts && typeof accounts === "object"
      ? Object.entries(accounts)
      : [];
  const out: Entry[] = [];
  for (const [key, a] of list) {
    const entry = a && typeof a === "object" ? (a as Record<string, unknown>) : {};
    const inner =
      entry.account && typeof entry.account === "object" ? (entry.account as Record<string, unknown>) : {};
    const id = [entry.id, entry.account_id, inner.id, inner.account_id, key].find(
      (v) => typeof v === "string" && v !== "",
    );
    out.push({
      id: (id as string | undefined) ?? "",
      origin: entry.workspace_backend_origin ?? inner.workspace_backend_origin,
      override: entry.account_routing_override ?? inner.account_routing_override,
    });
  }
  return out;
}

/** The origins an answer sends the conversation to (every origin but NO_CONSTRAINT). */
function namedOrigins(answer: unknown): string[] {
  const origins = new Set<string>();
  for (const e of accountsOf(answer))
    if (typeof e.origin === "string" && e.origin !== "" && e.origin !== NO_CONSTRAINT)
      origins.add(e.origin.slice(0, 256));
  return [...origins];
}

/**
 * `origin` as sluice forwards to it, or null: an HTTPS origin (no credentials, path, query or
 * fragment) whose host is the configured upstream's or a name under it (an address only itself).
 */
export function forwardableOrigin(origin: string, upstream: string): string | null {
  let u: URL;
  let up: URL;
  try {
    u = new URL(origin);
    up = new URL(upstream);
  } catch {
    return null;
  }
  if (
    origin.trim() !== origin ||
    u.protocol !== "https:" ||
    u.username !== "" ||
    u.password !== "" ||
    u.pathname !== "/" ||
    u.search !== "" ||
    u.hash !== "" ||
    /[?#]/.test(origin)
  )
    return null;
  const host = u.hostname.toLowerCase();
  const base = up.hostname.toLowerCase();
  const isAddress = /^[\d.]+$|^\[/.test(base);
  if (host !== base && (isAddress || !host.endsWith(`.${base}`))) return null;
  return u.origin;
}

/** The answer's text with every `workspace_backend_origin` string value set to NO_CONSTRAINT. */
function neutralised(text: string): string {
  return text.replace(
    /("workspace_backend_origin"\s*:\s*)"(?:[^"\\]|\\.)*"/g,
    (_m, key: string) => `${key}"${NO_CONSTRAINT}"`,
  );
}

/** `answer` with every origin it names set to NO_CONSTRAINT, as an object (to check a rewrite by). */
function withoutOrigins(answer: unknown): unknown {
  const copy = structuredClone(answer) as { accounts?: unknown };
  const accounts = copy?.accounts;
  const values = Array.isArray(accounts)
    ? accounts
    : accounts && typeof accounts === "object"
      ? Object.values(accounts)
      : [];
  for (const a of values) {
    if (!a || typeof a !== "object") continue;
    const entry = a as Record<string, unknown>;
    for (const o of [entry, entry.account])
      if (
        o &&
        typeof o === "object" &&
        typeof (o as Record<string, unknown>).workspace_backend_origin === "string"
      )
        (o as Record<string, unknown>).workspace_backend_origin = NO_CONSTRAINT;
  }
  return copy;
}

export interface RewrittenAnswer {
  /** The bytes the client receives (encoded as the answer was), or null to relay it as it came. */
  bytes: Uint8Array | null;
  /** Origins the answer names, each with whether sluice forwards that account's conversation there. */
  origins: { origin: string; forwarded: boolean }[];
  /** Why the answer could not be rewritten, when it could not. */
  error?: string;
}

/** One route: the origin the back end named for an account, learnt from `upstream`. */
interface Route {
  origin: string;
  override: string | null;
  upstream: string;
}

export class WorkspaceRoutes {
  #routes = new Map<string, Route>();

  /**
   * Read an account check answer (`raw` as received, in `encoding`) from `upstream`: remember the
   * origin of each account, and, when `rewrite`, the answer with its origins set to NO_CONSTRAINT.
   * Never throws.
   */
  accountCheck(
    raw: Uint8Array,
    encoding: string | null,
    upstream: string,
    rewrite: boolean,
  ): RewrittenAnswer {
    const decoded = decodeBody(raw, encoding, MAX_ANSWER_BYTES);
    if (!decoded.ok) return { bytes: null, origins: [], error: decoded.error };
    let answer: unknown;
    const text = new TextDecoder().decode(decoded.bytes);
    try {
      answer = JSON.parse(text);
    } catch {
      return { bytes: null, origins: [], error: "the answer is not JSON" };
    }
    const origins: RewrittenAnswer["origins"] = [];
    for (const e of accountsOf(answer)) {
      if (typeof e.origin !== "string" || e.origin === "" || e.origin === NO_CONSTRAINT) continue;
      const origin = forwardableOrigin(e.origin, upstream);
      origins.push({ origin: e.origin.slice(0, 256), forwarded: origin !== null && e.id !== "" });
      if (origin && e.id) this.#remember(e.id, { origin, override: overrideOf(e.override), upstream });
    }
    if (!rewrite || origins.length === 0) return { bytes: null, origins };
    try {
      const next = neutralised(text);
      // The rewrite holds only if the answer reads as before, with no origin left in it.
      if (
        namedOrigins(JSON.parse(next)).length > 0 ||
        JSON.stringify(JSON.parse(next)) !== JSON.stringify(withoutOrigins(answer))
      )
        return { bytes: null, origins, error: "its origins could not be replaced in place" };
      return { bytes: encodeBody(new TextEncoder().encode(next), decoded.codings), origins };
    } catch (e) {
      return { bytes: null, origins, error: (e as Error).message };
    }
  }

  /**
   * Where a ChatGPT back-end request goes: a conversation (`/backend-api/codex/responses…`, also
   * compaction) to the origin remembered for its `chatgpt-account-id`, when it was learnt from the
   * `upstream` configured now, with the routing override Codex sends there; anything else, and an
   * account sluice has no origin for, to the configured upstream itself (as Codex does).
   */
  upstreamFor(
    pathname: string,
    headers: Headers,
    upstream: string,
  ): { base: string; override: string | null } {
    if (!pathname.startsWith(CHATGPT_RESPONSES_PATH)) return { base: upstream, override: null };
    const id = headers.get("chatgpt-account-id");
    const route = id ? this.#routes.get(id) : undefined;
    if (!route || route.upstream !== upstream) return { base: upstream, override: null };
    return { base: route.origin, override: headers.has(OVERRIDE_HEADER) ? null : route.override };
  }

  #remember(id: string, route: Route) {
    this.#routes.delete(id);
    this.#routes.set(id, route);
    if (this.#routes.size > MAX_ACCOUNTS) this.#routes.delete(this.#routes.keys().next().value!);
  }
}

function overrideOf(v: unknown): string | null {
  return typeof v === "string" && OVERRIDES.has(v) ? v : null;
}

/** Set the routing override on the headers of a request to a workspace's back end. */
export function setRoutingOverride(headers: Headers, override: string | null): void {
  if (override) headers.set(OVERRIDE_HEADER, override);
}

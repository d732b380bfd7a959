/**
 * Who may talk to the dashboard (the rules users read are in docs/api.md, "Auth"):
 * - Host must be a loopback name with our port (DNS rebinding), whether or not a password is set.
 * - A foreign `Origin` or `Sec-Fetch-Site: cross-site|same-site` is refused on every method.
 * - With a password: an HttpOnly, SameSite=Strict session cookie for every request but the auth
 *   endpoints, `/live` and the exports included (they stream every finding's path, session and
 *   hashes; a browser sends the cookie to both); argon2id hash via `Bun.password`; logins limited
 *   per minute.
 * - Every POST, PUT and DELETE carries `X-CSRF-Token` (without a password the per-process token
 *   handed out by `GET /api/v1/auth/session`).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { ApiError } from "./http.ts";

export const COOKIE = "sluice_session";
/** The only GET answered without a session when a password is set: it says whether one is needed. */
const PUBLIC_GET = new Set(["/api/v1/auth/session"]);
const CSRF_EXEMPT = new Set(["/api/v1/auth/login"]);
const MUTATING = new Set(["POST", "PUT", "DELETE", "PATCH"]);
export const MAX_BODY_BYTES = 1024 * 1024;

interface Session {
  csrf: string;
  expires: number;
}

const token = () => randomBytes(32).toString("base64url");

function sameToken(a: string | null | undefined, b: string): boolean {
  if (!a) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function parseCookies(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0) out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

export interface GuardOptions {
  /** The port the dashboard listens on (known after binding). */
  port: () => number;
  /** The configured password, read on every check so reloads apply. */
  password: () => string | null;
  sessionTtlMinutes: () => number;
  /** Failed logins allowed per minute. */
  maxLoginFailures?: number;
}

export class Guard {
  readonly #sessions = new Map<string, Session>();
  /** The CSRF token when no password is set (per process). */
  readonly openCsrf = token();
  #failures: number[] = [];
  #hash: { of: string; hash: Promise<string> } | null = null;

  constructor(readonly opts: GuardOptions) {}

  passwordRequired(): boolean {
    return !!this.opts.password();
  }

  #allowedHosts(): string[] {
    const p = this.opts.port();
    return [`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`];
  }

  /** The session behind the request's cookie, if valid. */
  session(req: Request): Session | null {
    const id = parseCookies(req.headers.get("cookie"))[COOKIE];
    if (!id) return null;
    const s = this.#sessions.get(id);
    if (!s) return null;
    if (s.expires < Date.now()) {
      this.#sessions.delete(id);
      return null;
    }
    return s;
  }

  /** Throws the 401/403/413 this request deserves, or returns. */
  check(req: Request, url: URL): void {
    const host = (req.headers.get("host") ?? url.host).toLowerCase();
    const hosts = this.#allowedHosts();
    if (!hosts.includes(host))
      throw new ApiError(
        403,
        "forbidden_host",
        "the Host header must name this dashboard on a loopback address",
      );
    const origin = req.headers.get("origin");
    if (origin !== null && !hosts.some((h) => origin.toLowerCase() === `http://${h}`))
      throw new ApiError(403, "forbidden_origin", "cross-origin requests are not allowed");
    const site = req.headers.get("sec-fetch-site");
    if (site === "cross-site" || site === "same-site")
      throw new ApiError(403, "forbidden_origin", "cross-origin requests are not allowed");
    const len = Number(req.headers.get("content-length") ?? 0);
    if (len > MAX_BODY_BYTES)
      throw new ApiError(413, "too_large", `the body is larger than ${MAX_BODY_BYTES} bytes`);

    // Everything Elysia answers is the API (the UI page is served by Bun's routes before it).
    const path = url.pathname;
    const mutating = MUTATING.has(req.method);
    const session = this.session(req);
    if (this.passwordRequired()) {
      const isPublic = !mutating && PUBLIC_GET.has(path);
      if (!isPublic && !CSRF_EXEMPT.has(path) && !session && path !== "/api/v1/auth/logout")
        throw new ApiError(401, "unauthorized", "log in first: POST /api/v1/auth/login");
    }
    if (mutating && !CSRF_EXEMPT.has(path)) {
      const expected = this.passwordRequired() ? session?.csrf : this.openCsrf;
      if (!expected || !sameToken(req.headers.get("x-csrf-token"), expected))
        throw new ApiError(
          403,
          "csrf_failed",
          "missing or wrong X-CSRF-Token header (see GET /api/v1/auth/session)",
        );
    }
  }

  /** `GET /api/v1/auth/session`. */
  describe(req: Request) {
    if (!this.passwordRequired())
      return { authenticated: true, password_required: false, csrf_token: this.openCsrf };
    const s = this.session(req);
    return { authenticated: !!s, password_required: true, csrf_token: s?.csrf ?? null };
  }

  async #passwordHash(pw: string): Promise<string> {
    const of = createHash("sha256").update(pw).digest("hex");
    if (this.#hash?.of !== of) this.#hash = { of, hash: Bun.password.hash(pw, { algorithm: "argon2id" }) };
    return this.#hash.hash;
  }

  /** Hash the password ahead of the first login. */
  warm(): void {
    const pw = this.opts.password();
    if (pw) void this.#passwordHash(pw);
  }

  /** `POST /api/v1/auth/login`: returns the cookie header value and the CSRF token. */
  async login(password: unknown): Promise<{ cookie: string; csrf_token: string }> {
    const pw = this.opts.password();
    if (!pw) throw new ApiError(400, "no_password", "no dashboard password is set; no login is needed");
    const now = Date.now();
    this.#failures = this.#failures.filter((t) => now - t < 60_000);
    const max = this.opts.maxLoginFailures ?? 5;
    if (this.#failures.length >= max) {
      const wait = Math.ceil((60_000 - (now - this.#failures[0]!)) / 1000);
      throw new ApiError(429, "rate_limited", "too many failed logins; try again later", {
        "retry-after": String(Math.max(1, wait)),
      });
    }
    if (typeof password !== "string" || password.length === 0 || password.length > 1024)
      throw new ApiError(400, "invalid_request", "password (string) is required");
    const ok = await Bun.password.verify(password, await this.#passwordHash(pw));
    if (!ok) {
      this.#failures.push(Date.now());
      throw new ApiError(401, "invalid_password", "wrong password");
    }
    this.#failures = [];
    for (const [k, v] of this.#sessions) if (v.expires < now) this.#sessions.delete(k);
    const id = token();
    const ttl = this.opts.sessionTtlMinutes() * 60;
    const s: Session = { csrf: token(), expires: Date.now() + ttl * 1000 };
    this.#sessions.set(id, s);
    return {
      cookie: `${COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${ttl}`,
      csrf_token: s.csrf,
    };
  }

  logout(req: Request): string {
    const id = parseCookies(req.headers.get("cookie"))[COOKIE];
    if (id) this.#sessions.delete(id);
    return `${COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
  }
}

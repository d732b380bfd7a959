/**
 * Session context of a request: who is talking, signed in how, in which session, account and
 * working directory, with which model. Derived from headers and the parsed body; never throws.
 * Where each tool says it:
 * - Claude Code: `x-claude-code-session-id`, `metadata.user_id` (device, account, session), the
 *   system prompt's "Primary working directory:" and "Current branch:";
 * - Codex: `session-id`, `chatgpt-account-id`, `x-codex-turn-metadata` (model, workspaces) and the
 *   `<cwd>` of its environment message;
 * - Gemini CLI: the Code Assist wrapper's `project` and `request.session_id`, the "Workspace
 *   Directories:" list of its session context.
 */
import { createHash } from "node:crypto";
import type { Login, ProviderLabel, SessionContext } from "../core/types.ts";
import { credentialHash } from "../policy/mask.ts";
import { RecentMap } from "../policy/recent.ts";

interface ClientId {
  id: string;
  name: string;
}

/** User-Agent prefixes and headers of the coding tools sluice knows, first match wins. */
const UA_CLIENTS: [RegExp, ClientId][] = [
  [/^claude-cli\//i, { id: "claude-code", name: "Claude Code" }],
  [/^claude-code\//i, { id: "claude-code", name: "Claude Code" }],
  [/^codex_vscode/i, { id: "codex", name: "Codex (VS Code)" }],
  [/^codex[_-]/i, { id: "codex", name: "Codex CLI" }],
  [/^GeminiCLI/i, { id: "gemini-cli", name: "Gemini CLI" }],
  [/^aider\b/i, { id: "aider", name: "Aider" }],
  [/^opencode\b/i, { id: "opencode", name: "OpenCode" }],
  [/^litellm\//i, { id: "litellm", name: "LiteLLM" }],
  [/^Cursor\b/i, { id: "cursor", name: "Cursor" }],
  [/^Cline\b/i, { id: "cline", name: "Cline" }],
  [/^Anthropic\/JS/i, { id: "anthropic-sdk", name: "Anthropic SDK (JS)" }],
  [/^Anthropic\/Python/i, { id: "anthropic-sdk", name: "Anthropic SDK (Python)" }],
  [/^OpenAI\/JS/i, { id: "openai-sdk", name: "OpenAI SDK (JS)" }],
  [/^OpenAI\/Python/i, { id: "openai-sdk", name: "OpenAI SDK (Python)" }],
  [
    /google-genai-sdk|^google-api-nodejs-client|genai-js/i,
    { id: "google-genai-sdk", name: "Google GenAI SDK" },
  ],
  [/^curl\//i, { id: "curl", name: "curl" }],
];

export function identifyClient(headers: Headers): ClientId {
  const title = headers.get("x-title");
  const referer = headers.get("http-referer") ?? "";
  if (title && /roo/i.test(title)) return { id: "roo-code", name: "Roo Code" };
  if (title && /cline/i.test(title)) return { id: "cline", name: "Cline" };
  if (/roocode|roo-code/i.test(referer)) return { id: "roo-code", name: "Roo Code" };
  if (/cline/i.test(referer)) return { id: "cline", name: "Cline" };
  const ua = headers.get("user-agent") ?? "";
  for (const [re, c] of UA_CLIENTS) if (re.test(ua)) return c;
  const goog = headers.get("x-goog-api-client") ?? "";
  if (/gemini-cli/i.test(goog)) return { id: "gemini-cli", name: "Gemini CLI" };
  if (/genai-js|google-genai/i.test(goog)) return { id: "google-genai-sdk", name: "Google GenAI SDK" };
  if (headers.get("x-app") === "cli") return { id: "claude-code", name: "Claude Code" };
  if (headers.has("originator") && /codex/i.test(headers.get("originator") ?? ""))
    return { id: "codex", name: "Codex CLI" };
  return { id: "unknown", name: ua ? ua.split(/[\s/]/)[0]!.slice(0, 64) : "unknown" };
}

function osFromHeaders(headers: Headers): string | null {
  const stainless = headers.get("x-stainless-os");
  if (stainless) return stainless.toLowerCase();
  const ua = headers.get("user-agent") ?? "";
  if (/linux|debian|ubuntu/i.test(ua)) return "linux";
  if (/darwin|mac ?os/i.test(ua)) return "darwin";
  if (/windows|win32/i.test(ua)) return "windows";
  return null;
}

/**
 * A short hash of the credential the client sends (never the credential itself): keyed with the
 * installation key when one is given (what is stored), else the plain short digest.
 */
export function apiKeyHash(headers: Headers, hmacKey: Uint8Array | null = null): string | null {
  const auth = headers.get("authorization");
  const key =
    headers.get("x-api-key") ??
    headers.get("x-goog-api-key") ??
    (auth ? auth.replace(/^Bearer\s+/i, "") : null) ??
    null;
  if (!key) return null;
  return credentialHash(key, hmacKey);
}

interface ClaudeUserId {
  session_id?: string;
  account_uuid?: string;
  device_id?: string;
}

/** Claude's `metadata.user_id`: a JSON string today, `user_<h>_account_<uuid>_session_<uuid>` before. */
function parseClaudeUserId(v: unknown): ClaudeUserId | null {
  if (typeof v !== "string" || !v) return null;
  if (v.startsWith("{")) {
    try {
      const o = JSON.parse(v) as Record<string, unknown>;
      const s = (k: string) => (typeof o[k] === "string" ? (o[k] as string) : undefined);
      return { session_id: s("session_id"), account_uuid: s("account_uuid"), device_id: s("device_id") };
    } catch {
      return null;
    }
  }
  const m = v.match(/^user_([0-9a-f]+)_account_([0-9a-f-]*)_session_([0-9a-f-]+)$/i);
  if (m) return { device_id: m[1], account_uuid: m[2] || undefined, session_id: m[3] };
  return null;
}

/**
 * How the client signed in. A Claude subscription sends its OAuth token (`sk-ant-oat…`) as a bearer;
 * the sign-in back ends are their own providers.
 */
export function loginMode(provider: ProviderLabel, headers: Headers, search = ""): Login {
  if (provider === "chatgpt") return "chatgpt";
  if (provider === "code_assist") return "google";
  const bearer = /^Bearer\s+(\S+)/i.exec(headers.get("authorization") ?? "")?.[1] ?? null;
  if (headers.has("x-api-key") || headers.has("x-goog-api-key") || /[?&]key=/.test(search)) return "api_key";
  if (bearer === null) return "none";
  if (provider === "anthropic") {
    if (bearer.startsWith("sk-ant-oat")) return "oauth";
    return bearer.startsWith("sk-ant-api") ? "api_key" : "auth_token";
  }
  if (provider === "gemini") return "oauth"; // a Google access token (Vertex-style or ADC)
  return bearer.startsWith("sk-") ? "api_key" : "auth_token";
}

/** Codex's `x-codex-turn-metadata` header: a JSON object with `model` and `workspaces` (cwd → state). */
function codexTurnMetadata(headers: Headers): { model?: string; cwd?: string } {
  const raw = headers.get("x-codex-turn-metadata");
  if (!raw || raw.length > 64 * 1024) return {};
  try {
    const o = JSON.parse(raw) as { model?: unknown; workspaces?: unknown };
    const ws = o.workspaces && typeof o.workspaces === "object" ? Object.keys(o.workspaces) : [];
    return {
      model: typeof o.model === "string" ? o.model : undefined,
      cwd: ws.length > 0 ? ws[0] : undefined,
    };
  } catch {
    return {};
  }
}

/** Where each tool names its working directory and branch in the text it sends. */
const CWD_MARKERS: [string, RegExp][] = [
  ["Primary working directory: ", /^Primary working directory: ([^\n]+)/],
  ["Working directory: ", /^Working directory: ([^\n]+)/],
  ["<cwd>", /^<cwd>([^<\n]+)<\/cwd>/],
  ["Workspace Directories:", /^Workspace Directories:\**\n\s*- ([^\n]+)/],
];
const BRANCH_MARKER: [string, RegExp] = ["Current branch: ", /^Current branch: ([^\n]+)/];
/** At most this many strings of each part of a body are looked at. */
const CONTEXT_STRINGS = 64;

/**
 * The strings where tools put their environment, in this order: the system prompt (`system`,
 * `instructions`, `systemInstruction`, also inside the Code Assist wrapper), then the first
 * messages (`messages`, `input`, `contents`). An explicit stack, no recursion; bounded.
 */
function contextStrings(json: Record<string, unknown>): string[] {
  const wrapped = (json.request && typeof json.request === "object" ? json.request : {}) as Record<
    string,
    unknown
  >;
  const first = (v: unknown, n: number) => (Array.isArray(v) ? v.slice(0, n) : [v]);
  // Each system prompt and each of the first messages is a part of its own.
  const roots = [
    json.system,
    json.instructions,
    json.systemInstruction,
    wrapped.systemInstruction,
    ...first(json.messages, 3),
    ...first(json.input, 10),
    ...first(json.contents, 3),
    ...first(wrapped.contents, 3),
  ];
  const out: string[] = [];
  for (const root of roots) {
    const stack: unknown[] = [root];
    const until = out.length + CONTEXT_STRINGS;
    while (stack.length > 0 && out.length < until) {
      const node = stack.pop();
      if (typeof node === "string") out.push(node);
      else if (Array.isArray(node)) for (let i = node.length - 1; i >= 0; i--) stack.push(node[i]);
      else if (node && typeof node === "object") {
        const vals = Object.values(node as Record<string, unknown>);
        for (let i = vals.length - 1; i >= 0; i--) stack.push(vals[i]);
      }
    }
  }
  return out;
}

function findMarker(texts: string[], [literal, re]: [string, RegExp]): string | null {
  for (const t of texts) {
    const at = t.indexOf(literal);
    if (at < 0) continue;
    const m = re.exec(t.slice(at, at + 4096));
    if (m) return m[1]!.trim().slice(0, 1024) || null;
  }
  return null;
}

/** Working directory and git branch named in the leading text of a body. */
export function workspaceOf(json: unknown): { working_directory: string | null; git_branch: string | null } {
  if (!json || typeof json !== "object") return { working_directory: null, git_branch: null };
  const texts = contextStrings(json as Record<string, unknown>);
  let cwd: string | null = null;
  for (const marker of CWD_MARKERS) {
    cwd = findMarker(texts, marker);
    if (cwd) break;
  }
  return { working_directory: cwd, git_branch: findMarker(texts, BRANCH_MARKER) };
}

/** At most this many characters of a conversation's opening are read (hashed, never kept). */
const OPENING_CHARS = 64 * 1024;
/** At most this many values of the body are visited for it. */
const OPENING_NODES = 4096;
/** Roles of instructions that come before a conversation rather than in it. */
const PREAMBLE_ROLES = new Set(["system", "developer"]);

/**
 * The text of a conversation's opening: its leading user turns, up to the first answer, in whatever
 * shape the body has (`messages`, `input`, `contents`, also inside the Code Assist wrapper). Every
 * turn of one conversation sends it again unchanged, and two runs of a tool differ in it (at least
 * in the first prompt), so it tells runs apart when the tool sends no session id. Bounded.
 */
export function openingText(json: unknown): string {
  if (!json || typeof json !== "object") return "";
  const o = json as Record<string, unknown>;
  const wrapped = (o.request && typeof o.request === "object" ? o.request : {}) as Record<string, unknown>;
  const turns = o.messages ?? o.input ?? o.contents ?? wrapped.contents;
  if (typeof turns === "string") return turns.slice(0, OPENING_CHARS);
  if (!Array.isArray(turns)) return "";
  const parts: string[] = [];
  let chars = 0;
  let nodes = 0;
  let opened = false;
  for (const turn of turns) {
    const { role, type } = (turn && typeof turn === "object" ? turn : {}) as {
      role?: unknown;
      type?: unknown;
    };
    if (typeof role === "string" && PREAMBLE_ROLES.has(role)) continue;
    // A user's message: role user, or none (Gemini may leave it out); not a model's reasoning,
    // tool call or tool output (Responses items without a role).
    const said = (role === undefined || role === "user") && (type === undefined || type === "message");
    if (!said) {
      if (opened) break;
      continue;
    }
    opened = true;
    // Only what was said (`text` and `content` strings): cache markers and part boundaries move
    // between turns of one conversation.
    const stack: [unknown, string][] = [[turn, "content"]];
    while (stack.length > 0 && chars < OPENING_CHARS && nodes++ < OPENING_NODES) {
      const [node, key] = stack.pop()!;
      if (typeof node === "string") {
        if (key !== "text" && key !== "content") continue;
        parts.push(node);
        chars += node.length;
      } else if (Array.isArray(node)) for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], key]);
      else if (node && typeof node === "object") {
        const entries = Object.entries(node as Record<string, unknown>);
        for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], entries[i]![0]]);
      }
    }
    if (chars >= OPENING_CHARS || nodes >= OPENING_NODES) break;
  }
  return parts.join("\n").slice(0, OPENING_CHARS);
}

function str(o: unknown, key: string): string | null {
  if (!o || typeof o !== "object") return null;
  const v = (o as Record<string, unknown>)[key];
  return typeof v === "string" && v !== "" ? v : null;
}

function modelOf(provider: ProviderLabel, pathname: string, json: unknown): string | null {
  const model = str(json, "model") ?? str((json as { request?: unknown } | null)?.request, "model");
  if (model) return model.replace(/^models\//, "");
  if (provider === "gemini") {
    const m = pathname.match(/\/models\/([^/:]+)(?::|$)/);
    if (m) return decodeURIComponent(m[1]!);
  }
  return null;
}

export interface SessionInput {
  provider: ProviderLabel;
  pathname: string;
  headers: Headers;
  json: unknown;
  sourceIp: string | null;
  /** The installation key for the stored `api_key_hash`; without one it is a plain short digest. */
  hmacKey?: Uint8Array | null;
}

export function sessionContext(input: SessionInput): SessionContext {
  const { headers, json } = input;
  const client = identifyClient(headers);
  const keyHash = apiKeyHash(headers);
  const meta =
    json && typeof json === "object"
      ? parseClaudeUserId((json as { metadata?: { user_id?: unknown } }).metadata?.user_id)
      : null;
  const wrapped = (json as { request?: unknown } | null)?.request; // the Code Assist wrapper
  const turn = codexTurnMetadata(headers);
  const workspace = workspaceOf(json);
  let session =
    headers.get("x-claude-code-session-id") ??
    headers.get("session-id") ??
    meta?.session_id ??
    (input.provider === "code_assist" ? (str(wrapped, "session_id") ?? str(json, "user_prompt_id")) : null);
  if (!session) {
    // No session id: the same tool, credential and address, in the same conversation (two runs of
    // a tool open with different prompts, so they are two sessions).
    const basis = [
      input.provider,
      client.id,
      keyHash ?? "",
      headers.get("user-agent") ?? "",
      input.sourceIp ?? "",
      openingText(json),
    ];
    session = `fp:${createHash("sha256").update(basis.join("\n")).digest("hex").slice(0, 16)}`;
  }
  const account =
    meta?.account_uuid ||
    headers.get("chatgpt-account-id") ||
    headers.get("openai-organization") ||
    (input.provider === "code_assist" ? str(json, "project") : null) ||
    null;
  return {
    session_id: session.slice(0, 200),
    client: client.id,
    client_name: client.name,
    account_id: account,
    device_id: meta?.device_id || null,
    source_ip: input.sourceIp,
    working_directory: workspace.working_directory ?? turn.cwd ?? null,
    git_branch: workspace.git_branch,
    os_platform: osFromHeaders(headers),
    api_key_hash: input.hmacKey ? apiKeyHash(headers, input.hmacKey) : keyHash,
    model: modelOf(input.provider, input.pathname, json) ?? turn.model ?? null,
  };
}

/** What `sessionContext` reads of a body's root: these values, and the first few turns. */
const ROOT_READS = [
  "metadata",
  "request",
  "user_prompt_id",
  "project",
  "model",
  "system",
  "instructions",
  "systemInstruction",
];
const LEADING_READS: [string, number][] = [
  ["messages", 3],
  ["input", 10],
  ["contents", 3],
];

/** Whether `sessionContext` reads the same values in `a` and `b` (the same objects: nothing is changed in place). */
function sameReads(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!a || !b || typeof a !== "object" || typeof b !== "object") return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (const k of ROOT_READS) if (x[k] !== y[k]) return false;
  for (const [k, n] of LEADING_READS) {
    const u = x[k];
    const v = y[k];
    if (!Array.isArray(u) || !Array.isArray(v)) {
      if (u !== v) return false;
      continue;
    }
    for (let i = 0; i < n; i++) if (u[i] !== v[i]) return false;
  }
  return true;
}

/**
 * The headers as one string, but for the body's length, which every turn changes and nothing here
 * reads. Bun gives them as one object in a single call; a repeated header is one value joined with
 * ", ", as `get` reads it.
 */
function headerList(headers: Headers): string {
  const all = headers.toJSON();
  delete all["content-length"];
  return JSON.stringify(all);
}

/** Conversations whose last session contexts are kept. */
const MAX_KEPT_SESSIONS = 64;
/** Contexts kept per conversation: the last two requests', for a side request between two turns. */
const PER_CONVERSATION = 2;

interface KeptContext {
  input: Omit<SessionInput, "json">;
  json: WeakRef<object>;
  headers: string;
  context: SessionContext;
}

/**
 * The session contexts of each conversation's last two requests, each given again while a next one
 * reads the same: the same headers, address and key, and a body whose values `sessionContext` reads
 * are the same objects (a turn parsed from the previous one keeps them, `turns.ts`). A session
 * named by a fingerprint of the conversation's opening is worked out every time.
 */
export class SessionContexts {
  /**
   * The bodies are held weakly: a context is given again only while its body is alive anyway (kept
   * as one of the conversation's last turns, turns.ts), so this memory never holds a body by itself.
   * The last request's first.
   */
  readonly #last = new RecentMap<string, KeptContext[]>();

  get(key: string | null, input: SessionInput): SessionContext {
    if (key === null || !input.json || typeof input.json !== "object") return sessionContext(input);
    const headers = headerList(input.headers);
    const kept = this.#last.get(key) ?? [];
    const same = kept.find(
      (prev) =>
        prev.headers === headers &&
        prev.input.provider === input.provider &&
        prev.input.pathname === input.pathname &&
        prev.input.sourceIp === input.sourceIp &&
        prev.input.hmacKey === input.hmacKey &&
        sameReads(prev.json.deref(), input.json),
    );
    if (same) {
      if (kept[0] !== same) this.#last.set(key, [same, ...kept.filter((k) => k !== same)]);
      return same.context;
    }
    const context = sessionContext(input);
    if (!context.session_id.startsWith("fp:")) {
      const { json, ...rest } = input;
      const entry = {
        input: { ...rest, headers: new Headers() },
        json: new WeakRef(json as object),
        headers,
        context,
      };
      this.#last.set(key, [entry, ...kept].slice(0, PER_CONVERSATION));
      if (this.#last.size > MAX_KEPT_SESSIONS) this.#last.deleteOldest();
    }
    return context;
  }
}

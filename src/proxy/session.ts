/**
 * Session context of a request (SPEC §2 Finding session columns, CLIENTS.md): who is talking, in
 * which session, with which model. Derived from headers and the parsed body; never throws.
 */
import { createHash } from "node:crypto";
import type { ProviderLabel, SessionContext } from "../core/types.ts";
import { credentialHash } from "../policy/mask.ts";

interface ClientId {
  id: string;
  name: string;
}

/** User-Agent prefixes and headers of the tools of CLIENTS.md, first match wins. */
const UA_CLIENTS: [RegExp, ClientId][] = [
  [/^claude-cli\//i, { id: "claude-code", name: "Claude Code" }],
  [/^claude-code\//i, { id: "claude-code", name: "Claude Code" }],
  [/^codex_vscode/i, { id: "codex", name: "Codex (VS Code)" }],
  [/^codex[_-]/i, { id: "codex", name: "Codex CLI" }],
  [/^GeminiCLI/i, { id: "gemini-cli", name: "Gemini CLI" }],
  [/^aider\b/i, { id: "aider", name: "Aider" }],
  [/^opencode\b/i, { id: "opencode", name: "OpenCode" }],
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

function modelOf(provider: ProviderLabel, pathname: string, json: unknown): string | null {
  if (json && typeof json === "object" && typeof (json as { model?: unknown }).model === "string")
    return (json as { model: string }).model;
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
  let session =
    headers.get("x-claude-code-session-id") ?? headers.get("session-id") ?? meta?.session_id ?? null;
  if (!session) {
    const basis = [
      input.provider,
      client.id,
      keyHash ?? "",
      headers.get("user-agent") ?? "",
      input.sourceIp ?? "",
    ];
    session = `fp:${createHash("sha256").update(basis.join("\n")).digest("hex").slice(0, 16)}`;
  }
  const account =
    meta?.account_uuid || headers.get("chatgpt-account-id") || headers.get("openai-organization") || null;
  return {
    session_id: session.slice(0, 200),
    client: client.id,
    client_name: client.name,
    account_id: account,
    device_id: meta?.device_id || null,
    source_ip: input.sourceIp,
    working_directory: null,
    git_branch: null,
    os_platform: osFromHeaders(headers),
    api_key_hash: input.hmacKey ? apiKeyHash(headers, input.hmacKey) : keyHash,
    model: modelOf(input.provider, input.pathname, json),
  };
}

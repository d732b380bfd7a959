/**
 * Provider detection: which back end a request is for, from its path first and its headers second.
 * Besides the API paths (`/v1/messages`, `/v1/responses`, `/v1beta/models/…:generateContent`, and
 * `/v1/models`, which is decided by its headers), the back ends of the sign-in modes:
 * - `/backend-api/…` is the ChatGPT back end (Codex signed in with ChatGPT: `chatgpt_base_url`), and
 *   so are `/v1/responses` and `/v1/models` with a `chatgpt-account-id` header (Codex signed in
 *   with ChatGPT sends its conversation there when `openai_base_url` is set; with an API key, no
 *   such header);
 * - `/v1internal:<method>` is the Code Assist server (Gemini CLI signed in with Google:
 *   `CODE_ASSIST_ENDPOINT`), whose methods sit right on the version, not under `/models/`;
 * - a Claude subscription sends `Authorization: Bearer sk-ant-oat…` on the Anthropic paths.
 */
import type { ProviderLabel } from "../core/types.ts";

/** What sluice recognises, for the 400 answered to an unknown request. */
export const RECOGNISED = [
  "chatgpt (Codex signed in with ChatGPT): /backend-api/…, or /v1/responses and /v1/models with a chatgpt-account-id header",
  "code_assist (Gemini CLI signed in with Google): /v1internal:<method>, e.g. /v1internal:streamGenerateContent",
  "anthropic: /v1/messages, /v1/messages/count_tokens, /v1/complete, or headers x-api-key / anthropic-version / Authorization: Bearer sk-ant-…",
  "openai: /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/responses, or Authorization: Bearer sk-…",
  "gemini: /v1beta/…, …:generateContent, …:streamGenerateContent, …:countTokens, or header x-goog-api-key",
  "/v1/models is routed by its headers (x-api-key or anthropic-version → anthropic, x-goog-api-key → gemini, Bearer → openai)",
];

/** A Code Assist method path: `/v1internal:generateContent`, also under another API version. */
const CODE_ASSIST_PATH = /^\/v\d\w*(?::[A-Za-z]+$|internal\/)/;

export function detectProvider(pathname: string, headers: Headers): ProviderLabel {
  // Path rules first: they are unambiguous. The sign-in back ends go before the API paths, whose
  // `:generateContent` suffix the Code Assist methods share.
  if (pathname.startsWith("/backend-api/")) return "chatgpt";
  if (/^\/v1\/(?:responses|models)(?:\/|$)/.test(pathname) && headers.has("chatgpt-account-id"))
    return "chatgpt";
  if (CODE_ASSIST_PATH.test(pathname)) return "code_assist";
  if (pathname.startsWith("/v1/messages") || pathname.startsWith("/v1/complete")) return "anthropic";
  if (
    pathname.startsWith("/v1/chat/completions") ||
    pathname.startsWith("/v1/completions") ||
    pathname.startsWith("/v1/embeddings") ||
    pathname.startsWith("/v1/responses")
  )
    return "openai";
  if (
    pathname.startsWith("/v1beta/") ||
    pathname.includes(":generateContent") ||
    pathname.includes("/generateContent") ||
    pathname.includes(":streamGenerateContent") ||
    pathname.includes(":countTokens")
  )
    return "gemini";
  // Headers (also what decides /v1/models).
  const auth = headers.get("authorization") ?? "";
  if (headers.has("x-api-key") || headers.has("anthropic-version") || /Bearer\s+sk-ant-/.test(auth))
    return "anthropic";
  if (headers.has("x-goog-api-key")) return "gemini";
  if (/Bearer\s+sk-/.test(auth)) return "openai";
  if (pathname.startsWith("/v1/models") && /Bearer\s+\S/.test(auth)) return "openai";
  return "unknown";
}

/** True when the request asks for a streamed response (its connection is not pooled). */
export function isStreamingRequest(pathname: string, search: string, json: unknown): boolean {
  if (pathname.includes(":streamGenerateContent") || /[?&]alt=sse\b/.test(search)) return true;
  return typeof json === "object" && json !== null && (json as { stream?: unknown }).stream === true;
}

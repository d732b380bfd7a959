/**
 * Provider detection (SPEC §1 Provider auto-detection, NAMES.md), extended with the paths real tools
 * use today (CLIENTS.md): `/v1/responses`, `/v1/messages/count_tokens`, `:streamGenerateContent`,
 * `:countTokens`, and `/v1/models`, which is decided by its headers.
 */
import type { ProviderLabel } from "../core/types.ts";

/** What sluice recognises, for the 400 answered to an unknown request. */
export const RECOGNISED = [
  "anthropic: /v1/messages, /v1/messages/count_tokens, /v1/complete, or headers x-api-key / anthropic-version / Authorization: Bearer sk-ant-…",
  "openai: /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/responses, or Authorization: Bearer sk-…",
  "gemini: /v1beta/…, …:generateContent, …:streamGenerateContent, …:countTokens, or header x-goog-api-key",
  "/v1/models is routed by its headers (x-api-key or anthropic-version → anthropic, x-goog-api-key → gemini, Bearer → openai)",
];

export function detectProvider(pathname: string, headers: Headers): ProviderLabel {
  // Path rules first: they are unambiguous.
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

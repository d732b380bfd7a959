/**
 * ChatGPT back-end bodies (Codex signed in with ChatGPT). The conversation goes to
 * `/backend-api/codex/responses` as a Responses body (`model, input:[…], instructions, tools,
 * client_metadata, …`) over SSE, or as `response.create` frames on a WebSocket of the same path: the
 * OpenAI adapter's shapes and data fields (encrypted reasoning, data-URL images) apply as they are.
 * Every other `/backend-api/…` call (account checks, plugin lists, analytics events, the ChatGPT
 * MCP endpoint) is small JSON or has no body, and is scanned string by string like any JSON.
 */
import { isResponsesBody } from "./openai.ts";

/** The conversation endpoint of the ChatGPT back end. */
export const CHATGPT_RESPONSES_PATH = "/backend-api/codex/responses";

/**
 * Whether a ChatGPT back-end body has the shape sluice reads; null when the path carries no
 * conversation (any JSON there is read whole).
 */
export function chatgptShape(pathname: string, json: unknown): boolean | null {
  if (!pathname.startsWith(CHATGPT_RESPONSES_PATH)) return null;
  return isResponsesBody(json);
}

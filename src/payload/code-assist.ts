/**
 * Code Assist bodies (Gemini CLI signed in with Google). The content methods wrap a Gemini
 * `generateContent` request in `request`, beside `model`, `project` and `user_prompt_id`:
 * `{"model":…,"project":…,"request":{"contents":[…],"systemInstruction":…,"tools":…,"session_id":…}}`
 * (`:countTokens` wraps `{"model","contents"}` the same way). The Gemini adapter's data fields apply
 * inside the wrapper. The control methods (`:loadCodeAssist`, `:onboardUser`, `:listExperiments`,
 * `:retrieveUserQuota`, `:recordCodeAssistMetrics`, …) carry small JSON of project ids, client
 * metadata and counters: read whole, string by string, like any JSON, so nothing goes unscanned.
 */
import { hasGeminiContents } from "./gemini.ts";

/** The Code Assist methods that carry the conversation. */
const CONTENT_METHOD = /:(generateContent|streamGenerateContent|countTokens)$/;

/**
 * Whether a Code Assist body has the shape sluice reads; null when the method carries no
 * conversation (its JSON is read whole).
 */
export function codeAssistShape(pathname: string, json: unknown): boolean | null {
  if (!CONTENT_METHOD.test(pathname)) return null;
  if (typeof json !== "object" || json === null) return false;
  return hasGeminiContents((json as { request?: unknown }).request);
}

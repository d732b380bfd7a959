/**
 * Whether sluice can read a request body as its provider's conversation. Every string of any JSON
 * body is scanned; a body of a conversation endpoint whose shape the adapter does not know (a new
 * API version, a wrapper sluice has never seen) is scanned that way too, but counted as unread
 * shape so that it is never silent: the conversation may sit where no adapter looks for it.
 */
import type { ProviderLabel } from "../core/types.ts";
import { anthropicShape } from "./anthropic.ts";
import { chatgptShape } from "./chatgpt.ts";
import { codeAssistShape } from "./code-assist.ts";
import { geminiShape } from "./gemini.ts";
import { openaiShape } from "./openai.ts";

const SHAPES: Record<ProviderLabel, (pathname: string, json: unknown) => boolean | null> = {
  anthropic: anthropicShape,
  openai: openaiShape,
  gemini: geminiShape,
  chatgpt: chatgptShape,
  code_assist: codeAssistShape,
  unknown: () => null,
};

/**
 * False when `pathname` is a conversation endpoint of `provider` and `json` lacks the shape its
 * adapter reads; true otherwise (known shape, or a path that carries no conversation).
 * @example knownShape("code_assist", "/v1internal:generateContent", { request: { contents: [] } }) // true
 */
export function knownShape(provider: ProviderLabel, pathname: string, json: unknown): boolean {
  return SHAPES[provider](pathname, json) !== false;
}

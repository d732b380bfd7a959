/**
 * Gemini `generateContent` bodies: `contents[].parts[]` (`text`, `functionCall.args`,
 * `functionResponse.response`, `inlineData`), `systemInstruction`, `tools[].functionDeclarations`.
 * Opaque fields: non-text `inlineData.data` and thought signatures.
 */
import { isTextMime, type SkipFn } from "./_shared.ts";

export const geminiSkip: SkipFn = (parent, key) => {
  if (key === "thoughtSignature" || key === "thought_signature") return true;
  if (key === "data" && ("mimeType" in parent || "mime_type" in parent))
    return !isTextMime(parent.mimeType ?? parent.mime_type);
  return false;
};

/** A `generateContent` request: `contents` as a list (or `countTokens`' wrapped request). */
export function hasGeminiContents(json: unknown): boolean {
  if (typeof json !== "object" || json === null) return false;
  const o = json as { contents?: unknown; generateContentRequest?: { contents?: unknown } };
  return Array.isArray(o.contents) || Array.isArray(o.generateContentRequest?.contents);
}

/** Whether a Gemini API body has the shape sluice reads; null when the method carries no conversation. */
export function geminiShape(pathname: string, json: unknown): boolean | null {
  if (!/[:/](generateContent|streamGenerateContent|countTokens)$/.test(pathname)) return null;
  return hasGeminiContents(json);
}

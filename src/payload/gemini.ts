/**
 * Gemini `generateContent` bodies: `contents[].parts[]` (`text`, `functionCall.args`,
 * `functionResponse.response`, `inlineData`), `systemInstruction`, `tools[].functionDeclarations`.
 * Data fields: `inlineData.data` (whatever its MIME type) and thought signatures.
 */
import type { DataFieldFn } from "./_shared.ts";

export const geminiData: DataFieldFn = (parent, key) =>
  key === "thoughtSignature" ||
  key === "thought_signature" ||
  (key === "data" && ("mimeType" in parent || "mime_type" in parent));

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

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

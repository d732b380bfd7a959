/**
 * OpenAI bodies: Chat Completions (`messages[].content` string or parts, `tool_calls[].function.arguments`,
 * `tools[]`) and Responses (`input` string or items: `message`, `function_call` with JSON `arguments`,
 * `function_call_output`, `reasoning`; `instructions`; `tools[]`), also as Codex WebSocket
 * `response.create` frames. Opaque fields: data-URL images and files, encrypted reasoning.
 */
import type { SkipFn } from "./_shared.ts";

const DATA_URL = /^data:(?!text\/)[\w.+-]+\/[\w.+-]+;base64,/i;

export const openaiSkip: SkipFn = (_parent, key, value) => {
  if (key === "encrypted_content") return true;
  if ((key === "url" || key === "image_url" || key === "file_data") && DATA_URL.test(value.slice(0, 100)))
    return true;
  if (key === "data" && _parent.format !== undefined && _parent.type === undefined) return true; // input_audio.data
  return false;
};

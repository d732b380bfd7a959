/**
 * OpenAI bodies: Chat Completions (`messages[].content` string or parts, `tool_calls[].function.arguments`,
 * `tools[]`) and Responses (`input` string or items: `message`, `function_call` with JSON `arguments`,
 * `function_call_output`, `reasoning`; `instructions`; `tools[]`), also as Codex WebSocket
 * `response.create` frames. Data fields: data-URL images and files, audio, encrypted reasoning.
 */
import type { DataFieldFn } from "./_shared.ts";

/** `input_audio.format` values: only then is a sibling `data` audio rather than, say, a tool input. */
const AUDIO_FORMAT = /^(wav|mp3|flac|opus|aac|ogg|webm|m4a|mp4|mpeg|mpga|pcm16?|g711_[au]law)$/i;

export const openaiData: DataFieldFn = (parent, key, value) => {
  if (key === "encrypted_content") return true;
  if (key === "url" || key === "image_url" || key === "file_data") return value.startsWith("data:");
  if (key === "data" && typeof parent.format === "string" && parent.type === undefined)
    return AUDIO_FORMAT.test(parent.format); // input_audio.data
  return false;
};

function field(json: unknown, key: string): unknown {
  return typeof json === "object" && json !== null ? (json as Record<string, unknown>)[key] : undefined;
}

/** A Responses body or `response.create` frame: `input` as a string or a list of items. */
export function isResponsesBody(json: unknown): boolean {
  const input = field(json, "input");
  return typeof input === "string" || Array.isArray(input);
}

/**
 * Whether an OpenAI body has the shape sluice reads; null when the path (or a WebSocket frame's
 * `type` other than `response.create`) carries no conversation.
 */
export function openaiShape(pathname: string, json: unknown): boolean | null {
  if (pathname.startsWith("/v1/responses")) {
    const type = field(json, "type");
    if (typeof type === "string" && type !== "response.create") return null;
    return isResponsesBody(json);
  }
  if (pathname.startsWith("/v1/chat/completions")) return Array.isArray(field(json, "messages"));
  if (pathname.startsWith("/v1/completions")) return field(json, "prompt") !== undefined;
  if (pathname.startsWith("/v1/embeddings")) return field(json, "input") !== undefined;
  return null;
}

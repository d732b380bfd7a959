/**
 * Anthropic Messages bodies (`/v1/messages`, `/v1/messages/count_tokens`): `system` (string or
 * blocks), `messages[].content` (string or `text`, `tool_use`, `tool_result`, `image`, `document`,
 * `thinking` blocks), `tools[]`, `metadata`. Data fields: base64 `source.data` of images and
 * documents, the `signature` of thinking blocks and the `data` of redacted thinking.
 */
import type { DataFieldFn } from "./_shared.ts";

export const anthropicData: DataFieldFn = (parent, key) =>
  (key === "signature" && parent.type === "thinking") ||
  (key === "data" && parent.type === "redacted_thinking") ||
  (key === "data" && parent.type === "base64" && typeof parent.media_type === "string");

/** Whether an Anthropic body has the shape sluice reads; null when the path carries no conversation. */
export function anthropicShape(pathname: string, json: unknown): boolean | null {
  if (pathname.startsWith("/v1/messages")) return Array.isArray(field(json, "messages"));
  if (pathname.startsWith("/v1/complete")) return typeof field(json, "prompt") === "string";
  return null;
}

function field(json: unknown, key: string): unknown {
  return typeof json === "object" && json !== null ? (json as Record<string, unknown>)[key] : undefined;
}

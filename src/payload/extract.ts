/**
 * Text segments of a provider request body, each with its JSON path (`messages[3].content[0].text`).
 *
 * Every string of the body is a segment — conversation text, system prompts, tool definitions, tool
 * inputs and results, function-call arguments (a JSON string, scanned as text) — except fields that
 * carry binary or opaque data: inline images and PDFs, thinking signatures, encrypted reasoning.
 * The provider adapters (anthropic.ts, openai.ts, gemini.ts) name those fields for their shapes.
 */
import type { ProviderLabel, Segment } from "../core/types.ts";
import type { SkipFn } from "./_shared.ts";
import { anthropicSkip } from "./anthropic.ts";
import { geminiSkip } from "./gemini.ts";
import { openaiSkip } from "./openai.ts";

const ALL_SKIPS: SkipFn[] = [anthropicSkip, openaiSkip, geminiSkip];

function skipsFor(provider: ProviderLabel): SkipFn[] {
  // Shapes overlap (MCP, gateways that translate): every provider's opaque fields are skipped, the
  // request's own provider first.
  switch (provider) {
    case "anthropic":
      return [anthropicSkip, openaiSkip, geminiSkip];
    case "openai":
      return [openaiSkip, anthropicSkip, geminiSkip];
    case "gemini":
      return [geminiSkip, anthropicSkip, openaiSkip];
    default:
      return ALL_SKIPS;
  }
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The path of `key` under `parent` in the `messages[3].content[0].text` notation. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  if (IDENT.test(key)) return parent === "" ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** Path of a JSON document's root when it is itself a string. */
export const ROOT_PATH = "$";
/** Path reported for a body that is not JSON. */
export const TEXT_PATH = "body";

/**
 * The strings of a parsed JSON body as segments, in document order.
 * @example extractSegments({messages:[{role:"user",content:"hi"}]}, "anthropic")
 *   // [{path:"messages[0].role",text:"user"},{path:"messages[0].content",text:"hi"}]
 */
export function extractSegments(json: unknown, provider: ProviderLabel = "unknown"): Segment[] {
  const out: Segment[] = [];
  const skips = skipsFor(provider);
  if (typeof json === "string") {
    out.push({ path: ROOT_PATH, text: json });
    return out;
  }
  const walk = (node: unknown, path: string, depth: number) => {
    if (depth > 200) return;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v = node[i];
        if (typeof v === "string") out.push({ path: `${path}[${i}]`, text: v });
        else if (v !== null && typeof v === "object") walk(v, `${path}[${i}]`, depth + 1);
      }
      return;
    }
    const obj = node as Record<string, unknown>;
    for (const key in obj) {
      const v = obj[key];
      if (typeof v === "string") {
        if (v.length >= 64 && skips.some((s) => s(obj, key, v))) continue;
        out.push({ path: childPath(path, key), text: v });
      } else if (v !== null && typeof v === "object") walk(v, childPath(path, key), depth + 1);
    }
  };
  if (json !== null && typeof json === "object") walk(json, "", 0);
  return out;
}

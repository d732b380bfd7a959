/**
 * Text segments of a provider request body, each with its JSON path (`messages[3].content[0].text`).
 *
 * Every string of the body is a segment — conversation text, system prompts, tool definitions, tool
 * inputs and results, function-call arguments (a JSON string, scanned as text) — except fields that
 * carry binary or opaque data: inline images and PDFs, thinking signatures, encrypted reasoning.
 * The provider adapters (anthropic.ts, openai.ts, gemini.ts) name those fields for their shapes; the
 * sign-in back ends carry the same bodies (chatgpt.ts: Responses; code-assist.ts: a Gemini request
 * inside a `request` wrapper), so they share those adapters' fields.
 * Object keys of 16+ characters with a digit are segments as well, at the path of their object.
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
    case "chatgpt":
      return [openaiSkip, anthropicSkip, geminiSkip];
    case "gemini":
    case "code_assist":
      return [geminiSkip, anthropicSkip, openaiSkip];
    default:
      return ALL_SKIPS;
  }
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Containers nested deeper than this are not walked string by string. */
const MAX_DEPTH = 200;
/** Object keys at least this long are segments too (a token used as a key). */
const MIN_KEY_SCANNED = 16;
const HAS_DIGIT = /[0-9]/;

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

/** The strings of a body in document order, with their paths built only when asked for. */
export interface SegmentTexts {
  texts: string[];
  /** The JSON path of `texts[i]` (`messages[3].content[0].text`). */
  path(i: number): string;
}

/**
 * The strings of a parsed JSON body, in document order, without building their paths: a 1 MB body
 * has thousands of strings and only the few with findings need a path. Each string remembers its
 * container (a frame: parent frame and key) and key; `path(i)` joins them on demand.
 */
export function extractTexts(json: unknown, provider: ProviderLabel = "unknown"): SegmentTexts {
  const texts: string[] = [];
  if (typeof json === "string") return { texts: [json], path: () => ROOT_PATH };
  const skips = skipsFor(provider);
  const segFrame: number[] = [];
  const segKey: (string | number)[] = [];
  const frameParent: number[] = [-1];
  const frameKey: (string | number)[] = [""];
  const walk = (node: unknown, frame: number, depth: number) => {
    if (depth > MAX_DEPTH) {
      // Deeper than any real body: the rest of this subtree is one segment, its JSON text, at the
      // path of its container (found, but not redactable: the scanner blocks instead).
      texts.push(JSON.stringify(node));
      segFrame.push(frameParent[frame]!);
      segKey.push(frameKey[frame]!);
      return;
    }
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v = node[i];
        if (typeof v === "string") {
          texts.push(v);
          segFrame.push(frame);
          segKey.push(i);
        } else if (v !== null && typeof v === "object") {
          frameParent.push(frame);
          frameKey.push(i);
          walk(v, frameParent.length - 1, depth + 1);
        }
      }
      return;
    }
    const obj = node as Record<string, unknown>;
    for (const key in obj) {
      if (key.length >= MIN_KEY_SCANNED && HAS_DIGIT.test(key)) {
        // A long key with a digit can be a token used as a name (tool schemas have many long keys,
        // words only, not worth a segment each): scanned, reported at this object's path.
        texts.push(key);
        segFrame.push(frameParent[frame]!);
        segKey.push(frameKey[frame]!);
      }
      const v = obj[key];
      if (typeof v === "string") {
        if (v.length >= 64 && skips.some((s) => s(obj, key, v))) continue;
        texts.push(v);
        segFrame.push(frame);
        segKey.push(key);
      } else if (v !== null && typeof v === "object") {
        frameParent.push(frame);
        frameKey.push(key);
        walk(v, frameParent.length - 1, depth + 1);
      }
    }
  };
  if (json !== null && typeof json === "object") walk(json, 0, 0);
  const framePaths = new Map<number, string>([[0, ""]]);
  const framePath = (f: number): string => {
    let p = framePaths.get(f);
    if (p === undefined) {
      p = childPath(framePath(frameParent[f]!), frameKey[f]!);
      framePaths.set(f, p);
    }
    return p;
  };
  // A segment of the root object itself (one of its keys) has no parent frame.
  return {
    texts,
    path: (i) => (segFrame[i] === -1 ? ROOT_PATH : childPath(framePath(segFrame[i]!), segKey[i]!)),
  };
}

/**
 * The strings of a parsed JSON body as segments, in document order.
 * @example extractSegments({messages:[{role:"user",content:"hi"}]}, "anthropic")
 *   // [{path:"messages[0].role",text:"user"},{path:"messages[0].content",text:"hi"}]
 */
export function extractSegments(json: unknown, provider: ProviderLabel = "unknown"): Segment[] {
  const { texts, path } = extractTexts(json, provider);
  return texts.map((text, i) => ({ path: path(i), text }));
}

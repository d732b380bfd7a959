/**
 * Text segments of a provider request body, each with its JSON path (`messages[3].content[0].text`).
 *
 * Every string of the body is a segment — conversation text, system prompts, tool definitions, tool
 * inputs and results, function-call arguments (a JSON string, scanned as text) — except fields that
 * carry data: inline files and images, thinking signatures, encrypted reasoning. Those are segments
 * only when they decode to text (a text file attached as `application/octet-stream`), as that text,
 * at their path with DECODED_SUFFIX: a finding there cannot be redacted in place, so it blocks.
 * The provider adapters (anthropic.ts, openai.ts, gemini.ts) name those fields for their shapes; the
 * sign-in back ends carry the same bodies (chatgpt.ts: Responses; code-assist.ts: a Gemini request
 * inside a `request` wrapper), so they share those adapters' fields.
 * Object keys of 16+ characters with a digit are segments as well, at the path of their object.
 *
 * The walk recurses at most WALK_DEPTH levels at a time and takes up deeper containers afterwards
 * (their strings then come after the rest, with the right paths), so a body nested as deep as
 * JSON.parse accepts is walked to its last string: nesting can neither crash the walk nor hide a
 * value from it.
 */
import type { ProviderLabel, Segment } from "../core/types.ts";
import type { DataFieldFn } from "./_shared.ts";
import { anthropicData } from "./anthropic.ts";
import { textOfData } from "./data-text.ts";
import { geminiData } from "./gemini.ts";
import { openaiData } from "./openai.ts";

const ALL_DATA_FIELDS: DataFieldFn[] = [anthropicData, openaiData, geminiData];

function dataFieldsFor(provider: ProviderLabel): DataFieldFn[] {
  // Shapes overlap (MCP, gateways that translate): every provider's data fields are known, the
  // request's own provider's looked at first.
  switch (provider) {
    case "anthropic":
      return [anthropicData, openaiData, geminiData];
    case "openai":
    case "chatgpt":
      return [openaiData, anthropicData, geminiData];
    case "gemini":
    case "code_assist":
      return [geminiData, anthropicData, openaiData];
    default:
      return ALL_DATA_FIELDS;
  }
}

/** Added to the path of a data field for the text it decodes to: no string of the body has that path. */
export const DECODED_SUFFIX = " (decoded)";

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Levels one walk descends before it leaves deeper containers for later (call stack depth). */
const WALK_DEPTH = 256;
/** Object keys at least this long are segments too (a token used as a key). */
const MIN_KEY_SCANNED = 16;
const HAS_DIGIT = /[0-9]/;

/**
 * What `key` adds to its parent's path in the `messages[3].content[0].text` notation (`atRoot`: the
 * parent is the root, whose path is empty).
 */
export function keySuffix(atRoot: boolean, key: string | number): string {
  if (typeof key === "number") return `[${key}]`;
  if (IDENT.test(key)) return atRoot ? key : `.${key}`;
  return `[${JSON.stringify(key)}]`;
}

/** The path of `key` under `parent` in the `messages[3].content[0].text` notation. */
export function childPath(parent: string, key: string | number): string {
  return parent + keySuffix(parent === "", key);
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

/** A place inside a JSON document, as the keys and indexes that lead to it from the root. */
export type KeyPath = readonly (string | number)[];

/** The value at `at` inside `json`, or undefined when the document has nothing there. */
function valueAt(json: unknown, at: KeyPath): unknown {
  let v = json;
  for (const k of at) {
    if (v === null || typeof v !== "object") return undefined;
    if (Array.isArray(v) ? typeof k !== "number" : !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

/**
 * The strings of a parsed JSON body, in document order, without building their paths: a 1 MB body
 * has thousands of strings and only the few with findings need a path. Each string remembers its
 * container (a frame: parent frame and key) and key; `path(i)` joins them on demand.
 *
 * `only`: extract just the strings under these places (each a key path from the root; places the
 * document does not have are left out), with their paths still from the root. The MCP proxy scans
 * a tool call's `params.arguments` this way, and not the rest of the message.
 */
export function extractTexts(
  json: unknown,
  provider: ProviderLabel = "unknown",
  only?: readonly KeyPath[],
): SegmentTexts {
  const texts: string[] = [];
  const dataFields = dataFieldsFor(provider);
  // Segments that are the text decoded from a data field (their path gets DECODED_SUFFIX).
  const decoded = new Set<number>();
  // Frame 0 is the document root (path ""); frame -1 stands for "above the root".
  const segFrame: number[] = [];
  const segKey: (string | number)[] = [];
  const frameParent: number[] = [-1];
  const frameKey: (string | number)[] = [""];
  // Containers deeper than WALK_DEPTH below where a walk started wait here, and are walked from
  // there once the walk returns: the call stack never holds more than WALK_DEPTH frames.
  const later: { node: object; frame: number }[] = [];

  /** A value at `key` of the container `frame`: a segment, or a container walked at `depth`. */
  const visit = (v: unknown, frame: number, key: string | number, depth: number) => {
    if (typeof v === "string") {
      texts.push(v);
      segFrame.push(frame);
      segKey.push(key);
    } else if (v !== null && typeof v === "object") {
      frameParent.push(frame);
      frameKey.push(key);
      walk(v, frameParent.length - 1, depth);
    }
  };
  const walk = (node: object, frame: number, depth: number) => {
    if (depth >= WALK_DEPTH) {
      later.push({ node, frame });
      return;
    }
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) visit(node[i], frame, i, depth + 1);
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
      if (typeof v === "string" && v.length >= 64 && dataFields.some((d) => d(obj, key, v))) {
        const text = textOfData(v);
        if (text !== null) {
          if (text !== v) decoded.add(texts.length);
          texts.push(text);
          segFrame.push(frame);
          segKey.push(key);
        }
        continue;
      }
      visit(v, frame, key, depth + 1);
    }
  };
  /** Walk what the walks before left for later (and what those leave, in turn). */
  const drain = () => {
    for (let next = later.pop(); next; next = later.pop()) walk(next.node, next.frame, 0);
  };

  if (!only) {
    if (typeof json === "string") return { texts: [json], path: () => ROOT_PATH };
    if (json !== null && typeof json === "object") walk(json, 0, 0);
    drain();
  } else {
    for (const at of only) {
      const v = valueAt(json, at);
      if (at.length === 0) {
        if (typeof v === "string") visit(v, -1, "", 0);
        else if (v !== null && typeof v === "object") walk(v, 0, 0);
        drain();
        continue;
      }
      // The frames on the way down, so that paths are built from the root.
      let frame = 0;
      for (let k = 0; k < at.length - 1; k++) {
        frameParent.push(frame);
        frameKey.push(at[k]!);
        frame = frameParent.length - 1;
      }
      visit(v, frame, at[at.length - 1]!, 0);
      drain();
    }
  }

  const framePaths = new Map<number, string>([[0, ""]]);
  const framePath = (f: number): string => {
    // Up to the nearest frame whose path is known, then down again: no recursion.
    const chain: number[] = [];
    let p = framePaths.get(f);
    while (p === undefined) {
      chain.push(f);
      f = frameParent[f]!;
      p = framePaths.get(f);
    }
    for (let k = chain.length - 1; k >= 0; k--) {
      p = childPath(p, frameKey[chain[k]!]!);
      framePaths.set(chain[k]!, p);
    }
    return p;
  };
  // A segment of the root itself (a string root, or a key of the root object) has no parent frame.
  return {
    texts,
    path: (i) =>
      segFrame[i] === -1
        ? ROOT_PATH
        : childPath(framePath(segFrame[i]!), segKey[i]!) + (decoded.has(i) ? DECODED_SUFFIX : ""),
  };
}

/**
 * The strings of a parsed JSON body as segments, in document order.
 * @example extractSegments({messages:[{role:"user",content:"hi"}]}, "anthropic")
 *   // [{path:"messages[0].role",text:"user"},{path:"messages[0].content",text:"hi"}]
 */
export function extractSegments(
  json: unknown,
  provider: ProviderLabel = "unknown",
  only?: readonly KeyPath[],
): Segment[] {
  const { texts, path } = extractTexts(json, provider, only);
  return texts.map((text, i) => ({ path: path(i), text }));
}

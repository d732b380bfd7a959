/**
 * Values split across segments: a token written in two text blocks, two messages or two tool
 * results, or a key id in one message and its secret in the next. Each segment alone holds half,
 * so each junction of two neighbouring segments is scanned as a text of its own:
 *
 * - `split`: the token characters that end one segment joined to those that begin the next
 *   (`…ghp_R2x0` + `aGVy…`); only a match across the join counts.
 * - `context`: the end of one segment, a line break, and the start of the next, so that a rule
 *   that wants a keyword near its value sees the keyword next door; only when one side holds a
 *   token-like run, and only matches the segments alone did not give count.
 *
 * Neighbours skip the structure between texts (`"role":"user"`, `"type":"text"`), and the last
 * text of a session's previous payload is a neighbour of the first of the next one (Codex sends
 * each turn alone over its WebSocket); that text is kept with the rest of the session's memory
 * (dedup.ts), and forgotten with it. Junctions are short (at most 2 × REACH characters), and the
 * segment memory answers those seen before, so a resent conversation costs nothing new.
 */
import { DECODED_SUFFIX, type SegmentTexts } from "../payload/extract.ts";
import type { CachedMatch } from "./dedup.ts";
import { copyString } from "./mask.ts";
import type { Changed } from "./unchanged.ts";

/** Token characters taken from each side of a split junction. */
const REACH = 128;
/**
 * Characters taken from each side of a context junction: a keyword this close to the end of one
 * text, and a value this close to the start of the next (or the other way round).
 */
const CONTEXT_REACH = 64;
/** A token split in two is at least this long in all. */
const MIN_SPLIT = 16;

/** Values of structure fields, which sit between two texts and are no part of either. */
const STRUCTURE = new Set([
  "user",
  "assistant",
  "system",
  "developer",
  "model",
  "tool",
  "function",
  "text",
  "input_text",
  "output_text",
  "tool_use",
  "tool_result",
  "message",
  "function_call",
  "function_call_output",
  "image",
  "document",
  "thinking",
  "base64",
  "ephemeral",
  "reasoning",
  "input_image",
  "object",
  "string",
  "response.create",
]);

/** 1 for the ASCII characters tokens are made of (letters, digits, `_-+/=.~`), by char code. */
const TOKEN_CHAR = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.~")
  TOKEN_CHAR[c.charCodeAt(0)] = 1;
const isTokenChar = (c: number) => c < 128 && TOKEN_CHAR[c] === 1;
const TOKEN_RUN = /[A-Za-z0-9_\-+/=]{16}/;

export interface Junction {
  kind: "split" | "context";
  /** The two segments joined (-1: the session's previous payload). */
  left: number;
  right: number;
  /** Offset of the join in the junction's text. */
  at: number;
  /** Whether the text starts inside its left segment: a match from offset 0 may be cut short. */
  cutStart: boolean;
  /** The text's end when it ends inside its right segment (a match ending there may be cut short). */
  cutEnd: number | null;
}

/** The junction texts of neighbouring segments, and what each joins. */
export interface Junctions {
  texts: string[];
  joins: Junction[];
}

function tokenTail(t: string): string {
  let i = t.length;
  while (i > 0 && t.length - i < REACH && isTokenChar(t.charCodeAt(i - 1))) i--;
  return t.slice(i);
}

function tokenHead(t: string): string {
  let i = 0;
  while (i < t.length && i < REACH && isTokenChar(t.charCodeAt(i))) i++;
  return t.slice(0, i);
}

const isText = (t: string) => t.length > 0 && !STRUCTURE.has(t);

/** Add the junctions of `left` (segment `l`, -1: the previous payload) and `right` (segment `r`). */
function join(out: Junctions, left: string, l: number, right: string, r: number): void {
  const a = tokenTail(left);
  const b = tokenHead(right);
  if (a.length > 0 && b.length > 0 && a.length + b.length >= MIN_SPLIT) {
    out.texts.push(a + b);
    out.joins.push({
      kind: "split",
      left: l,
      right: r,
      at: a.length,
      // A token run stopped by REACH, not by a character outside tokens, may go on.
      cutStart: a.length === REACH && a.length < left.length,
      cutEnd: b.length === REACH && b.length < right.length ? a.length + b.length : null,
    });
  }
  const tail = left.slice(-CONTEXT_REACH);
  const head = right.slice(0, CONTEXT_REACH);
  if (TOKEN_RUN.test(tail) || TOKEN_RUN.test(head)) {
    out.texts.push(`${tail}\n${head}`);
    out.joins.push({
      kind: "context",
      left: l,
      right: r,
      at: tail.length,
      cutStart: tail.length < left.length,
      cutEnd: head.length < right.length ? tail.length + 1 + head.length : null,
    });
  }
}

/**
 * The junctions of neighbouring texts of `texts`, and of `carried` (the end of the session's
 * previous payload) with the first text after `lastCached` (the texts up to it were in the
 * previous payloads; what follows is this turn's).
 * With `changed`, only the neighbours of which one is in `[from, to)`, or that meet across it (the
 * others were scanned before and are unchanged, unchanged.ts).
 */
export function findJunctions(
  texts: string[],
  carried: string | null,
  lastCached: number,
  changed?: Changed,
): Junctions {
  const out: Junctions = { texts: [], joins: [] };
  if (carried !== null)
    for (let i = lastCached + 1; i < texts.length; i++)
      if (isText(texts[i]!)) {
        join(out, carried, -1, texts[i]!, i);
        break;
      }
  // From the last text before the changed texts to the first one after them.
  let lo = 0;
  let hi = texts.length;
  if (changed) {
    lo = changed.from - 1;
    while (lo > 0 && !isText(texts[lo]!)) lo--;
    lo = Math.max(lo, 0);
    hi = changed.to;
    while (hi < texts.length && !isText(texts[hi]!)) hi++;
    hi = Math.min(hi + 1, texts.length);
  }
  let prev = -1;
  for (let i = lo; i < hi; i++) {
    if (!isText(texts[i]!)) continue;
    if (prev >= 0) join(out, texts[prev]!, prev, texts[i]!, i);
    prev = i;
  }
  return out;
}

/** The last text of `texts` that a next payload's first text could continue (null: none). */
export function lastText(texts: string[]): string | null {
  // A copy: a slice would keep the whole payload alive for as long as the session is remembered.
  for (let i = texts.length - 1; i >= 0; i--)
    if (isText(texts[i]!)) return copyString(texts[i]!.slice(-REACH));
  return null;
}

/**
 * The matches of a junction that count: for `split`, those across the join; for both, only values
 * no segment gave by itself (`seen`: rule name and value of every segment match), and none that
 * touches an end where the junction cut a segment (its value may go on past the cut); of the
 * previous payload's junction, only those that reach into this payload; and no split match that
 * only lengthens a match one of the two segments has by itself (`extendsOwn`: `prod-secrets.json`
 * + `see` is no new file name).
 */
export function junctionMatches(
  j: Junction,
  matches: CachedMatch[],
  seen: Set<string>,
  extendsOwn: (m: CachedMatch) => boolean,
): CachedMatch[] {
  return matches.filter(
    (m) =>
      (j.kind === "context" || (m.start < j.at && m.end > j.at)) &&
      // The previous payload left already: only a value that reaches into this one is this one's.
      (j.left >= 0 || m.end > j.at) &&
      !(j.cutStart && m.start === 0) &&
      m.end !== j.cutEnd &&
      !seen.has(`${m.rule.name}\u0000${m.value}`) &&
      !extendsOwn(m),
  );
}

/** Between the paths of the two segments a junction joins. */
const JOIN = " + ";
/** The place of the session's previous payload in a junction's path. */
const PREVIOUS = "(previous payload)";

/**
 * The junctions of a payload's segments (`lastCached`: the last segment answered from the session's
 * memory), and the session's tail (`session`, the memory of the payload's session, null for none)
 * moved on to this payload's last text.
 */
export function nextJunctions(
  segments: SegmentTexts,
  lastCached: number,
  session: { tail: string | null } | null,
  changed?: Changed,
): Junctions {
  const junctions = findJunctions(segments.texts, session?.tail ?? null, lastCached, changed);
  if (session) session.tail = lastText(segments.texts);
  return junctions;
}

/**
 * The segments of a payload followed by its junctions, with the matches of both: `per` holds the
 * segments' matches, then those of the junction texts, of which only those that count are kept.
 */
export function withJunctions(
  segments: SegmentTexts,
  junctions: Junctions,
  per: CachedMatch[][],
): { segments: SegmentTexts; per: CachedMatch[][] } {
  const { texts, joins } = junctions;
  if (texts.length === 0) return { segments, per };
  const n = segments.texts.length;
  let seen: Set<string> | null = null;
  for (let k = 0; k < joins.length; k++) {
    const found = per[n + k]!;
    if (found.length === 0) continue;
    if (!seen) {
      seen = new Set();
      for (let i = 0; i < n; i++) for (const m of per[i]!) seen.add(`${m.rule.name}\u0000${m.value}`);
    }
    const j = joins[k]!;
    // A split match starts at this offset of its left segment and ends at this one of its right.
    const leftOf = (m: CachedMatch) => (j.left >= 0 ? segments.texts[j.left]!.length - j.at + m.start : -1);
    const extendsOwn = (m: CachedMatch) =>
      j.kind === "split" &&
      ((j.left >= 0 && per[j.left]!.some((o) => o.rule === m.rule && o.start === leftOf(m))) ||
        per[j.right]!.some((o) => o.rule === m.rule && o.end === m.end - j.at));
    per[n + k] = junctionMatches(j, found, seen, extendsOwn);
  }
  const pathOf = (i: number) => (i < 0 ? PREVIOUS : segments.path(i));
  return {
    segments: {
      texts: segments.texts.concat(texts),
      path: (i) =>
        i < n ? segments.path(i) : `${pathOf(joins[i - n]!.left)}${JOIN}${pathOf(joins[i - n]!.right)}`,
    },
    per,
  };
}

/** Whether `path` is one string of the payload as sent (not a junction, not decoded data). */
export const placeable = (path: string): boolean => !path.includes(JOIN) && !path.endsWith(DECODED_SUFFIX);

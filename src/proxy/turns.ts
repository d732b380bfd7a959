/**
 * The last turns of each conversation, to parse the next one without reading all of it again.
 *
 * A coding tool sends the whole conversation every turn: the body of a turn is the previous turn's,
 * byte for byte, with messages added (and a cache marker moved) near the end of its `messages`
 * array. So the new body is compared with the previous one (native byte comparison), and only the
 * elements of `messages` from the first one that differs up to the array's `]` are parsed; the rest
 * of the parsed body is the previous turn's values. What the scan gets is the same value that
 * `JSON.parse` of the whole body gives, and the body is known to hold no key twice:
 *
 * - the bytes before the cut are the previous body's, so they parse the same way and leave the
 *   parser at the start of an element of `messages` (just after its `[` or a `,` between elements);
 * - the bytes from the array's `]` to the end are the previous body's too, and its `]` ends them in
 *   the same place; between the two, `[` + the new bytes + `]` must parse as a list of values (not
 *   empty after a `,`), so the whole body parses as the previous one with those elements in place
 *   of the old ones;
 * - the previous body had no object with a key twice (checked before it is used), the new elements
 *   are checked by themselves, and they are whole values inside the array, so they add no key to an
 *   object outside them.
 *
 * Only the parse is reused, never a verdict: the scan reads every string of the body as usual, with
 * the rules and settings in force. When anything does not hold (no previous turn, a difference
 * outside `messages`, a cut that does not parse), the body is parsed whole, as without this.
 * The previous bodies and their values stay in memory only, for a bounded number of conversations
 * and a bounded memory: what a turn is counted for is its bytes and an estimate of its parsed value,
 * which can take many times the bytes (`[{},{},…]` takes 25 times), so a body of small values takes
 * its share of the bound and is not kept past it.
 * The array is `messages` (Anthropic, OpenAI Chat), `input` (OpenAI Responses: Codex over HTTP and
 * its WebSocket frames) or `contents` (Gemini), whichever of them the root holds first.
 */
import type { ProviderLabel } from "../core/types.ts";
import { findDuplicateKey } from "../payload/duplicate-keys.ts";
import { extractTexts } from "../payload/extract.ts";
import { parseJsonBody } from "../payload/json-source.ts";
import { RecentMap } from "../policy/recent.ts";

/** Conversations whose last turns are kept; the least recently used is dropped first. */
const MAX_TURNS = 16;
/**
 * Turns kept per conversation: the last, and the one before it that was not its source. A side
 * request under the same key then leaves the conversation's last turn in place: Claude Code asks
 * for the session's title (a small body on another model) before the turn of each prompt, under
 * the same session header and path, and with one turn kept that turn would be parsed whole.
 */
const TURNS_PER_KEY = 2;
/** Memory of the kept turns in all: their bodies and parsed values, as `weigh` estimates them. */
const MAX_TOTAL_MEMORY = 64 * 1024 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
/**
 * The root keys that hold a conversation's turns: `messages` (Anthropic, OpenAI Chat), `input`
 * (OpenAI Responses, Codex), `contents` (Gemini).
 */
const TURN_KEYS = ["messages", "input", "contents"];
const TURN_KEY_BYTES = TURN_KEYS.map((k) => new TextEncoder().encode(k));

const keepBom = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** Where the root object's array of turns (`messages`, `input`, `contents`) is in a body, by byte offset. */
export interface Layout {
  /** Its key. */
  key: string;
  /** Just after its `[`. */
  open: number;
  /** The `,` between two of its elements. */
  commas: number[];
  /** Its `]`. */
  close: number;
  /** Its elements. */
  count: number;
  /** The deepest nesting of the body (containers open at once). */
  depth: number;
}

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(b: Uint8Array, i: number): number {
  while (isSpace(b[i])) i++;
  return i;
}

/** The index of the quote that ends the string whose opening quote is at `start`, or -1. */
function stringEnd(b: Uint8Array, start: number): number {
  let end = b.indexOf(QUOTE, start + 1);
  for (;;) {
    if (end < 0) return -1;
    let slashes = 0;
    while (b[end - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
    end = b.indexOf(QUOTE, end + 1);
  }
}

/** Which of TURN_KEYS the key between the quotes at `start` and `end` is (escapes read as JSON reads them), or null. */
function turnKey(b: Uint8Array, start: number, end: number): string | null {
  const raw = b.subarray(start + 1, end);
  if (raw.indexOf(BACKSLASH) < 0) {
    const k = TURN_KEY_BYTES.findIndex(
      (name) => raw.length === name.length && raw.every((c, i) => c === name[i]),
    );
    return k < 0 ? null : TURN_KEYS[k]!;
  }
  try {
    const key = JSON.parse(keepBom.decode(b.subarray(start, end + 1)));
    return TURN_KEYS.includes(key) ? key : null;
  } catch {
    return null;
  }
}

/**
 * The layout of a body that JSON.parse accepted: where its root object's `messages` array and the
 * commas between its elements are. Null when the root is not an object or has no `messages` array.
 */
export function layoutOf(b: Uint8Array): Layout | null {
  const first = skipSpace(b, 0);
  if (b[first] !== OPEN_OBJECT) return null;
  let depth = 0;
  let deepest = 0;
  let open = -1;
  let close = -1;
  let key = "";
  const commas: number[] = [];
  for (let i = first; i < b.length; i++) {
    const c = b[i]!;
    if (c === QUOTE) {
      const end = stringEnd(b, i);
      if (end < 0) return null;
      if (depth === 1 && open < 0) {
        const after = skipSpace(b, end + 1);
        const name = b[after] === COLON ? turnKey(b, i, end) : null;
        if (name !== null) {
          const value = skipSpace(b, after + 1);
          if (b[value] !== OPEN_ARRAY) return null;
          key = name;
          open = value + 1;
          depth = 2;
          i = value;
          continue;
        }
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) deepest = Math.max(deepest, ++depth);
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (open >= 0 && close < 0 && depth === 2) close = i;
      depth--;
    } else if (c === COMMA && open >= 0 && close < 0 && depth === 2) commas.push(i);
  }
  if (close < 0) return null;
  const empty = skipSpace(b, open) === close;
  return { key, open, commas, close, count: empty ? 0 : commas.length + 1, depth: deepest };
}

/**
 * Of the valid JSON values (separated by commas) in `b[from, to)`: the deepest nesting, and the
 * commas between them.
 */
function shapeOf(b: Uint8Array, from: number, to: number): { depth: number; commas: number[] } {
  let depth = 0;
  let deepest = 0;
  const commas: number[] = [];
  for (let i = from; i < to; i++) {
    const c = b[i]!;
    if (c === QUOTE) i = stringEnd(b, i);
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) deepest = Math.max(deepest, ++depth);
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
    else if (c === COMMA && depth === 0) commas.push(i);
    if (i < 0) return { depth: Number.POSITIVE_INFINITY, commas };
  }
  return { depth: deepest, commas };
}

/**
 * Below this nesting the strings of a body come in document order (deeper containers are taken up
 * after the rest, extract.ts), so a message's strings are one run of the body's.
 */
const ORDERED_DEPTH = 200;

/** A body's strings as extractTexts gives them, and where each element of `messages` starts among them. */
export interface TurnTexts {
  texts: string[];
  /** Index of the first string of each element; the last entry is where those after the array start. */
  starts: number[];
}

/** The strings of a turn, as extractTexts gives them inside a body (at the same depth). */
const messageTexts = (message: unknown, provider: ProviderLabel) =>
  extractTexts({ turns: [message] }, provider).texts;

/**
 * The strings of a body and where each message's start, or null when the body's strings cannot be
 * cut that way: a string of 64 characters or more at the root before `messages` (whether it is data
 * may depend on the root's other keys), or a nesting deep enough to change their order.
 */
function textsOf(json: Json, layout: Layout, provider: ProviderLabel): TurnTexts | null {
  if (layout.depth >= ORDERED_DEPTH) return null;
  const texts = extractTexts(json, provider).texts;
  // The root's keys before `messages`, in the order the walk takes them.
  const before: Record<string, unknown> = {};
  for (const key of Object.keys(json)) {
    if (key === layout.key) break;
    const value = json[key];
    if (typeof value === "string" && value.length >= 64) return null;
    Object.defineProperty(before, key, { value, enumerable: true, writable: true, configurable: true });
  }
  const starts = [extractTexts(before, provider).texts.length];
  for (const m of turnsOf(json, layout))
    starts.push(starts[starts.length - 1]! + messageTexts(m, provider).length);
  return starts[starts.length - 1]! <= texts.length ? { texts, starts } : null;
}

/**
 * An upper estimate of the memory that the bytes from `from` to `to` of a body that JSON.parse
 * accepted take as a kept turn: the bytes, and the values they parse to. Measured on Bun: a string
 * takes about its length, twice that when it holds a character outside Latin-1, plus ~24 bytes; an
 * object or array ~75 bytes, and an element or property ~8 more. A string of 64 characters or more
 * may be a data field whose decoded text the kept strings hold as well (extract.ts): up to two bytes
 * more per byte (a percent-encoded `data:` URL decodes a character per byte, and text with one
 * character outside Latin-1 takes two bytes a character). `from` and `to` must not be inside a
 * string; the estimate of a range is the sum of those of its parts cut there. Past `limit` the walk
 * stops, and what it returns is only known to be more than `limit`.
 */
export function weigh(b: Uint8Array, from: number, to: number, limit = Number.POSITIVE_INFINITY): number {
  let w = 3 * (to - from);
  for (let i = from; i < to && w <= limit; i++) {
    const c = b[i]!;
    if (c === QUOTE) {
      const end = stringEnd(b, i);
      if (end < 0) return Number.POSITIVE_INFINITY;
      w += end - i > 64 ? 32 + 2 * (end - i) : 32;
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) w += 80;
    else if (c === COMMA || c === COLON) w += 16;
  }
  return w;
}

/** Length of the common prefix of `a` and `b` (native comparisons, halving). */
function commonPrefix(a: Uint8Array, b: Uint8Array, max: number): number {
  // A turn that only appends to its conversation shares the whole span: one comparison says so.
  if (Buffer.compare(a.subarray(0, max), b.subarray(0, max)) === 0) return max;
  let lo = 0;
  let hi = max;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (Buffer.compare(a.subarray(lo, mid), b.subarray(lo, mid)) === 0) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Length of the common suffix of `a` and `b`, at most `max`. */
function commonSuffix(a: Uint8Array, b: Uint8Array, max: number): number {
  if (Buffer.compare(a.subarray(a.length - max), b.subarray(b.length - max)) === 0) return max;
  let lo = 0;
  let hi = max;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    const ok =
      Buffer.compare(a.subarray(a.length - mid, a.length - lo), b.subarray(b.length - mid, b.length - lo)) ===
      0;
    if (ok) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

type Json = Record<string, unknown>;

/** The body's array of turns at the layout's key. */
const turnsOf = (json: Json, layout: Layout) => json[layout.key] as unknown[];

interface Turn {
  bytes: Uint8Array;
  json: Json;
  provider: ProviderLabel;
  /** What the turn is counted for in MAX_TOTAL_MEMORY (`weigh` of its bytes). */
  memory: number;
  /** The body's strings; null until worked out, false when they cannot be cut by message. */
  texts: TurnTexts | null | false;
  /** Null until worked out (after the turn was forwarded); false when the body does not qualify. */
  layout: Layout | null | false;
  /** Whether no object of the body holds a key twice; null until checked. */
  uniqueKeys: boolean | null;
}

/**
 * Which conversation a request belongs to, before its body is read: the tool's session header and
 * User-Agent on one provider path. Two conversations under one key are both remembered, a third
 * pushes out the one least recently sent (the bytes are compared, so a wrong key costs a full
 * parse, nothing else).
 */
export function conversationKey(provider: ProviderLabel, pathname: string, headers: Headers): string {
  const session = headers.get("x-claude-code-session-id") ?? headers.get("session-id") ?? "";
  return `${provider}\u0000${pathname}\u0000${session}\u0000${headers.get("user-agent") ?? ""}`;
}

/** A request body's value, parsed from its conversation's previous turn or whole. */
export interface ParsedBody {
  json: unknown;
  /** The text JSON.parse read, when the body was parsed whole. */
  source?: string;
  /** Whether the body is known to hold no key twice in an object (parsed from a checked turn). */
  uniqueKeys: boolean;
  /** Its strings as extractTexts gives them, when the previous turn's could be used. */
  texts?: string[];
}

/** A body parsed from the previous turn of its conversation. */
export interface Reparsed {
  json: unknown;
  /** Its strings as extractTexts gives them, when the previous turn's could be used. */
  texts?: string[];
  /** Bytes of the body parsed here (the rest is the previous turn's). */
  parsedBytes: number;
}

/**
 * The last turns of each conversation (by a key the caller derives from the request), and the parse
 * of the next one from the first of them it can be parsed from.
 */
export class TurnMemory {
  readonly #turns = new RecentMap<string, Turn[]>();
  /** What the kept turns are counted for, in all. */
  #memory = 0;
  /** Turns whose layout is still to be worked out. */
  readonly #pending = new Set<Turn>();
  #reparsed = 0;

  /**
   * `bytes` parsed from a turn kept under `key`, or null when that cannot be done (then the
   * caller parses the whole body, and tells `remember`).
   */
  reparse(key: string, provider: ProviderLabel, bytes: Uint8Array): Reparsed | null {
    try {
      return this.#reparse(key, provider, bytes);
    } catch {
      // Whatever went wrong, the body is parsed whole.
      this.#forget(key);
      return null;
    }
  }

  #reparse(key: string, provider: ProviderLabel, bytes: Uint8Array): Reparsed | null {
    for (const prev of this.#turns.get(key) ?? []) {
      const r = prev.provider === provider ? this.#reparseFrom(key, prev, provider, bytes) : null;
      if (r) return r;
    }
    return null;
  }

  #reparseFrom(key: string, prev: Turn, provider: ProviderLabel, bytes: Uint8Array): Reparsed | null {
    const old = prev.bytes;
    // The same body again (a retry): the same value, and its strings, once it was checked.
    if (
      prev.uniqueKeys === true &&
      prev.texts &&
      old.length === bytes.length &&
      Buffer.compare(old, bytes) === 0
    ) {
      this.#reparsed++;
      this.#touch(key, prev);
      return { json: prev.json, parsedBytes: 0, texts: prev.texts.texts };
    }
    if (prev.layout === null) {
      // Not yet worked out between the turns: now, when the body is mostly the previous one (which
      // still costs less than parsing it all); another body is parsed whole.
      const max = Math.min(old.length, bytes.length);
      const head = commonPrefix(old, bytes, max);
      if (head + commonSuffix(old, bytes, max - head) < old.length / 2) return null;
      this.#settle(prev);
    }
    const { layout } = prev;
    if (!layout || prev.uniqueKeys !== true) return null;
    const turns = prev.json[layout.key];
    if (!Array.isArray(turns) || layout.count !== turns.length) return null;
    const p = commonPrefix(old, bytes, Math.min(layout.close, bytes.length));
    if (p < layout.open) return null; // a difference before the array's `[`
    const s = commonSuffix(old, bytes, Math.min(old.length, bytes.length) - p);
    if (old.length - s > layout.close) return null; // a difference after the array's `]`
    // The last element boundary at or before the first difference: elements before it are kept.
    let kept = 0;
    let cut = layout.open;
    for (let k = 0; k < layout.commas.length && layout.commas[k]! + 1 <= p; k++) {
      kept = k + 1;
      cut = layout.commas[k]! + 1;
    }
    const close = layout.close + bytes.length - old.length;
    if (close < cut) return null;
    const source = `[${keepBom.decode(bytes.subarray(cut, close))}]`;
    let added: unknown;
    try {
      added = JSON.parse(source);
    } catch {
      return null;
    }
    if (!Array.isArray(added) || (kept > 0 && added.length === 0)) return null;
    if (findDuplicateKey(source) !== null) return null;
    const json = { ...prev.json, [layout.key]: turns.slice(0, kept).concat(added) };
    // The strings: the kept messages' and those after the array are the previous turn's.
    if (prev.texts === null) this.#settleTexts(prev);
    const shape = shapeOf(bytes, cut, close);
    let texts: TurnTexts | null = null;
    if (prev.texts && shape.depth < ORDERED_DEPTH - 2) {
      const { texts: old, starts } = prev.texts;
      const out = old.slice(0, starts[kept]);
      const at = starts.slice(0, kept + 1);
      for (const m of added) {
        for (const t of messageTexts(m, provider)) out.push(t);
        at.push(out.length);
      }
      for (let i = starts[starts.length - 1]!; i < old.length; i++) out.push(old[i]!);
      texts = { texts: out, starts: at };
    }
    // Its layout: the kept elements' commas, then those between the new ones.
    const next: Layout = {
      key: layout.key,
      open: layout.open,
      commas: layout.commas.slice(0, kept).concat(shape.commas),
      close,
      count: kept + added.length,
      depth: Math.max(layout.depth, shape.depth + 2),
    };
    // The bytes before the cut and from the `]` on are the previous turn's: only the elements in
    // between are weighed again.
    const memory = prev.memory - weigh(old, cut, layout.close) + weigh(bytes, cut, close);
    this.#keep(key, { bytes, json, provider, memory, texts, layout: next, uniqueKeys: true }, prev);
    this.#reparsed++;
    return { json, parsedBytes: close - cut, ...(texts ? { texts: texts.texts } : {}) };
  }

  /**
   * The value of a body: parsed from a turn kept under `key` when that can be done, else whole
   * (when it is JSON) and kept for the next turn. A null key: parsed whole, nothing kept.
   */
  read(
    key: string | null,
    provider: ProviderLabel,
    bytes: Uint8Array,
    contentType: string | null,
  ): ParsedBody {
    const reparsed = key ? this.reparse(key, provider, bytes) : null;
    if (reparsed)
      return { json: reparsed.json, uniqueKeys: true, ...(reparsed.texts ? { texts: reparsed.texts } : {}) };
    const parsed = parseJsonBody(bytes, contentType);
    if (key) this.remember(key, provider, bytes, parsed?.json);
    return { json: parsed?.json, ...(parsed ? { source: parsed.source } : {}), uniqueKeys: false };
  }

  /** A body parsed whole: kept as the conversation's last turn when it can serve the next one. */
  remember(key: string, provider: ProviderLabel, bytes: Uint8Array, json: unknown): void {
    if (
      json === null ||
      typeof json !== "object" ||
      !TURN_KEYS.some((k) => Array.isArray((json as Json)[k]))
    ) {
      this.#forget(key);
      return;
    }
    this.#keep(
      key,
      {
        bytes,
        json: json as Json,
        provider,
        memory: weigh(bytes, 0, bytes.length, MAX_TOTAL_MEMORY),
        texts: null,
        layout: null,
        uniqueKeys: null,
      },
      null,
    );
  }

  /** Work out what the kept turns need before they can serve (off the request path). */
  settle(): void {
    for (const t of this.#pending) this.#settle(t);
  }

  /** Bodies parsed from their previous turn, conversations kept, and what they are counted for. */
  stats(): { reparsed: number; kept: number; memory: number } {
    return { reparsed: this.#reparsed, kept: this.#turns.size, memory: this.#memory };
  }

  /** What the last turn kept under `key` is counted for (undefined: none kept). */
  lastMemory(key: string): number | undefined {
    return this.#turns.get(key)?.[0]?.memory;
  }

  #settle(t: Turn): void {
    this.#pending.delete(t);
    if (t.layout === null) t.layout = layoutOf(t.bytes) ?? false;
    if (t.layout && t.uniqueKeys === null) t.uniqueKeys = findDuplicateKey(keepBom.decode(t.bytes)) === null;
    if (t.texts === null) this.#settleTexts(t);
  }

  #settleTexts(t: Turn): void {
    t.texts = (t.layout && textsOf(t.json, t.layout, t.provider)) || false;
  }

  /** `turn` as the key's last, in place of `source` (the turn it was parsed from), if any. */
  #keep(key: string, turn: Turn, source: Turn | null): void {
    const before = this.#turns.get(key) ?? [];
    const list = [turn, ...before.filter((t) => t !== source)].slice(0, TURNS_PER_KEY);
    for (const t of before) if (!list.includes(t)) this.#drop(t);
    if (!(turn.memory <= MAX_TOTAL_MEMORY)) list.shift();
    else {
      if (turn.layout === null || turn.texts === null) this.#pending.add(turn);
      this.#memory += turn.memory;
    }
    if (list.length > 0) this.#turns.set(key, list);
    else this.#turns.delete(key);
    while (this.#turns.size > MAX_TURNS || this.#memory > MAX_TOTAL_MEMORY) {
      const oldest = this.#turns.oldestKey();
      if (oldest === undefined) break;
      this.#forget(oldest);
    }
  }

  /** `turn`, kept under `key`, as the key's last again (its body was sent again). */
  #touch(key: string, turn: Turn): void {
    const list = this.#turns.get(key) ?? [];
    this.#turns.set(key, [turn, ...list.filter((t) => t !== turn)]);
  }

  #forget(key: string): void {
    for (const t of this.#turns.get(key) ?? []) this.#drop(t);
    this.#turns.delete(key);
  }

  #drop(t: Turn): void {
    this.#pending.delete(t);
    this.#memory -= t.memory;
  }
}

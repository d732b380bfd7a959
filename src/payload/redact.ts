/**
 * Rebuilding a body with matched values replaced by typed placeholders (`[REDACTED:aws_access_key_id]`).
 *
 * The original text is edited in place: a small JSON tokenizer walks the raw body, computes each
 * string's path in the same notation as extract.ts, and maps offsets in the decoded string back to
 * the raw (escaped) characters. Only the matched characters change; every other byte — whitespace,
 * key order, escapes, number formatting — stays as the client sent it, and the JSON stays valid.
 */
import { keySuffix, ROOT_PATH, TEXT_PATH } from "./extract.ts";

export interface RedactEdit {
  /** Segment path (as in extractSegments), or "body" for a non-JSON body. */
  path: string;
  /** Offsets in the segment's decoded text. */
  start: number;
  end: number;
  /** Text to put in place of the match; must not need JSON escaping. */
  replacement: string;
}

/** `[REDACTED:<finding_type>]` */
export function placeholder(findingType: string): string {
  return `[REDACTED:${findingType.replace(/[^A-Za-z0-9_.:-]/g, "_")}]`;
}

/** Drop edits that overlap an earlier (or longer) one in the same segment. */
function normalize(edits: RedactEdit[]): Map<string, RedactEdit[]> {
  const byPath = new Map<string, RedactEdit[]>();
  for (const e of edits) {
    let list = byPath.get(e.path);
    if (!list) byPath.set(e.path, (list = []));
    list.push(e);
  }
  for (const [path, list] of byPath) {
    list.sort((a, b) => a.start - b.start || b.end - a.end);
    const kept: RedactEdit[] = [];
    for (const e of list) {
      const last = kept[kept.length - 1];
      if (last && e.start < last.end) {
        if (e.end > last.end) last.end = e.end; // overlapping matches: cover both
        continue;
      }
      kept.push({ ...e });
    }
    byPath.set(path, kept);
  }
  return byPath;
}

/** Replace ranges of a plain text (non-JSON bodies). */
export function redactText(text: string, edits: RedactEdit[]): string {
  const list = normalize(edits.map((e) => ({ ...e, path: TEXT_PATH }))).get(TEXT_PATH) ?? [];
  let out = "";
  let at = 0;
  for (const e of list) {
    out += text.slice(at, e.start) + e.replacement;
    at = e.end;
  }
  return out + text.slice(at);
}

/** Reads the tokens of a raw JSON text left to right; `i` is the offset of the next character. */
class Tokens {
  i = 0;
  constructor(readonly raw: string) {}

  /** The next character that is not whitespace (skipping it). */
  next(): string | undefined {
    const raw = this.raw;
    while (this.i < raw.length) {
      const c = raw.charCodeAt(this.i);
      if (c === 32 || c === 10 || c === 13 || c === 9) this.i++;
      else break;
    }
    return raw[this.i];
  }

  fail(what: string): never {
    throw new SyntaxError(`redact: ${what} at offset ${this.i}`);
  }

  /** A string token at raw[i] === '"'; returns [start, end) of its raw content. */
  string(): [number, number] {
    const raw = this.raw;
    const s = ++this.i;
    for (;;) {
      const c = raw.charCodeAt(this.i);
      if (c === 34) break;
      if (c === 92) this.i += 2;
      else if (Number.isNaN(c)) this.fail("unterminated string");
      else this.i++;
    }
    return [s, this.i++];
  }

  /** A key and its colon; returns the key, or null when `read` is false (it is only skipped). */
  key(read: boolean): string | null {
    if (this.next() !== '"') this.fail("expected a key");
    const [s, e] = this.string();
    if (this.next() !== ":") this.fail("expected ':'");
    this.i++;
    return read ? (JSON.parse(this.raw.slice(s - 1, e + 1)) as string) : null;
  }

  /** A number, true, false or null. */
  scalar(): void {
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(
      this.raw.slice(this.i, this.i + 64),
    );
    if (!m) this.fail("unexpected token");
    this.i += m[0].length;
  }
}

/**
 * Where the walk is: the edit paths that start with the current path, and the current path's
 * length. A child's path is its parent's plus a suffix, so each step compares only that suffix
 * (deep nesting costs linear time, and no path string is built); containers no edit path starts
 * with are walked with no candidates left.
 */
interface Place {
  paths: string[];
  length: number;
}

function childPlace(at: Place, key: string | number): Place {
  if (at.paths.length === 0) return at;
  const suffix = keySuffix(at.length === 0, key);
  return {
    paths: at.paths.filter((p) => p.startsWith(suffix, at.length)),
    length: at.length + suffix.length,
  };
}

/** The text being rebuilt: raw text copied up to each edited span, then its replacement. */
class Splice {
  readonly parts: string[] = [];
  readonly applied = new Set<RedactEdit>();
  copied = 0;

  constructor(readonly raw: string) {}

  /** Apply `list` (sorted, not overlapping) to the string whose raw content is raw[s, e). */
  string(s: number, e: number, list: RedactEdit[]): void {
    // Walk the raw content, counting decoded UTF-16 units, and replace the raw span of each edit.
    const raw = this.raw;
    let decoded = 0;
    let k = s;
    let idx = 0;
    let editStartRaw = -1;
    while (idx < list.length) {
      const ed = list[idx]!;
      if (editStartRaw < 0 && decoded === ed.start) editStartRaw = k;
      if (editStartRaw >= 0 && decoded === ed.end) {
        this.parts.push(raw.slice(this.copied, editStartRaw), ed.replacement);
        this.applied.add(ed);
        this.copied = k;
        editStartRaw = -1;
        idx++;
        continue;
      }
      if (k >= e) break;
      if (raw.charCodeAt(k) === 92) k += raw[k + 1] === "u" ? 6 : 2;
      else k++;
      decoded++;
    }
  }

  finish(): string {
    this.parts.push(this.raw.slice(this.copied));
    return this.parts.join("");
  }
}

/**
 * Apply edits to a raw JSON text. Throws when the text is not JSON. An edit whose path names no string
 * (or whose range does not fit in it) is left out and given to `missed`, which may throw.
 */
export function redactJson(raw: string, edits: RedactEdit[], missed?: (edit: RedactEdit) => void): string {
  const byPath = normalize(edits);
  if (byPath.size === 0) return raw;
  const t = new Tokens(raw);
  const out = new Splice(raw);
  const key = (at: Place) => {
    const name = t.key(at.paths.length > 0);
    return name === null ? at : childPlace(at, name);
  };
  // The containers open around the value being read, innermost last: an explicit stack, so that
  // nesting as deep as JSON.parse accepts cannot overflow the call stack.
  const open: { array: boolean; at: Place; index: number }[] = [];
  let at: Place = { paths: [...byPath.keys()], length: 0 };
  for (;;) {
    const c = t.next();
    if (c === '"') {
      const [s, e] = t.string();
      // A string at the root has the path ROOT_PATH.
      const path = at.length === 0 ? ROOT_PATH : at.paths.find((p) => p.length === at.length);
      const list = path === undefined ? undefined : byPath.get(path);
      if (list) out.string(s, e, list);
    } else if (c === "{" || c === "[") {
      t.i++;
      if (t.next() === (c === "{" ? "}" : "]")) t.i++;
      else {
        open.push({ array: c === "[", at, index: 0 });
        at = c === "{" ? key(at) : childPlace(at, 0);
        continue;
      }
    } else t.scalar();
    // A value ended: close the containers it ended, then go on with the next sibling, if any.
    let sibling = false;
    while (open.length > 0 && !sibling) {
      const top = open[open.length - 1]!;
      const d = t.next();
      if (d === ",") {
        t.i++;
        at = top.array ? childPlace(top.at, ++top.index) : key(top.at);
        sibling = true;
      } else if (d === (top.array ? "]" : "}")) {
        t.i++;
        open.pop();
      } else t.fail(top.array ? "expected ',' or ']'" : "expected ',' or '}'");
    }
    if (!sibling) break;
  }
  if (missed) for (const list of byPath.values()) for (const e of list) if (!out.applied.has(e)) missed(e);
  return out.finish();
}

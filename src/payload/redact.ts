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

/**
 * Apply edits to a raw JSON text. Throws when the text is not JSON. An edit whose path names no string
 * (or whose range does not fit in it) is left out and given to `missed`, which may throw.
 */
export function redactJson(raw: string, edits: RedactEdit[], missed?: (edit: RedactEdit) => void): string {
  const byPath = normalize(edits);
  if (byPath.size === 0) return raw;
  const applied = new Set<RedactEdit>();
  const parts: string[] = [];
  let copied = 0;
  let i = 0;
  const n = raw.length;

  const ws = () => {
    while (i < n) {
      const c = raw.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
  };
  const fail = (what: string): never => {
    throw new SyntaxError(`redact: ${what} at offset ${i}`);
  };

  /** Skip a string token starting at raw[i] === '"'; returns [start, end) of its raw content. */
  const skipString = (): [number, number] => {
    const s = ++i;
    for (;;) {
      const c = raw.charCodeAt(i);
      if (c === 34) break;
      if (c === 92) i += 2;
      else if (Number.isNaN(c)) fail("unterminated string");
      else i++;
    }
    return [s, i++];
  };

  const editString = (s: number, e: number, list: RedactEdit[]) => {
    // Walk the raw content, counting decoded UTF-16 units, and replace the raw span of each edit.
    let decoded = 0;
    let k = s;
    let idx = 0;
    let editStartRaw = -1;
    while (idx < list.length) {
      const ed = list[idx]!;
      if (editStartRaw < 0 && decoded === ed.start) editStartRaw = k;
      if (editStartRaw >= 0 && decoded === ed.end) {
        parts.push(raw.slice(copied, editStartRaw), ed.replacement);
        applied.add(ed);
        copied = k;
        editStartRaw = -1;
        idx++;
        continue;
      }
      if (k >= e) break;
      if (raw.charCodeAt(k) === 92) k += raw[k + 1] === "u" ? 6 : 2;
      else k++;
      decoded++;
    }
  };

  // Where the walk is, as the edit paths that start with the current path and the current path's
  // length: a child's path is its parent's plus a suffix, so each step compares only that suffix
  // (deep nesting costs linear time, and no path string is built). Containers no edit path
  // starts with are walked with no candidates left.
  type At = { paths: string[]; length: number };
  const step = (at: At, key: string | number): At => {
    if (at.paths.length === 0) return at;
    const suffix = keySuffix(at.length === 0, key);
    return {
      paths: at.paths.filter((p) => p.startsWith(suffix, at.length)),
      length: at.length + suffix.length,
    };
  };
  /** The edits of the string at `at` (a string at the root has the path ROOT_PATH). */
  const editsAt = (at: At): RedactEdit[] | undefined => {
    if (at.length === 0) return byPath.get(ROOT_PATH);
    const p = at.paths.find((q) => q.length === at.length);
    return p === undefined ? undefined : byPath.get(p);
  };

  /** A key and its colon, at raw[i]; returns where the value that follows is. */
  const key = (parent: At): At => {
    ws();
    if (raw[i] !== '"') fail("expected a key");
    const [ks, ke] = skipString();
    ws();
    if (raw[i] !== ":") fail("expected ':'");
    i++;
    return parent.paths.length === 0 ? parent : step(parent, JSON.parse(raw.slice(ks - 1, ke + 1)) as string);
  };

  // The containers open around the value being read, innermost last: an explicit stack, so that
  // nesting as deep as JSON.parse accepts cannot overflow the call stack.
  const open: { array: boolean; at: At; index: number }[] = [];
  let at: At = { paths: [...byPath.keys()], length: 0 };
  for (;;) {
    ws();
    const c = raw[i];
    if (c === '"') {
      const [s, e] = skipString();
      const list = at.paths.length > 0 ? editsAt(at) : undefined;
      if (list) editString(s, e, list);
    } else if (c === "{" || c === "[") {
      i++;
      ws();
      if (raw[i] === (c === "{" ? "}" : "]")) i++;
      else {
        open.push({ array: c === "[", at, index: 0 });
        at = c === "{" ? key(at) : step(at, 0);
        continue;
      }
    } else {
      // number, true, false, null
      const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(raw.slice(i, i + 64));
      if (!m) fail("unexpected token");
      i += m![0].length;
    }
    // A value ended: close the containers it ended, then go on with the next sibling, if any.
    let next = false;
    while (open.length > 0 && !next) {
      const top = open[open.length - 1]!;
      ws();
      if (raw[i] === ",") {
        i++;
        at = top.array ? step(top.at, ++top.index) : key(top.at);
        next = true;
      } else if (raw[i] === (top.array ? "]" : "}")) {
        i++;
        open.pop();
      } else fail(top.array ? "expected ',' or ']'" : "expected ',' or '}'");
    }
    if (!next) break;
  }
  if (missed) for (const list of byPath.values()) for (const e of list) if (!applied.has(e)) missed(e);
  parts.push(raw.slice(copied));
  return parts.join("");
}

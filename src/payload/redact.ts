/**
 * Rebuilding a body with matched values replaced by typed placeholders (`[REDACTED:aws_access_key_id]`).
 *
 * The original text is edited in place: a small JSON tokenizer walks the raw body, computes each
 * string's path in the same notation as extract.ts, and maps offsets in the decoded string back to
 * the raw (escaped) characters. Only the matched characters change; every other byte — whitespace,
 * key order, escapes, number formatting — stays as the client sent it, and the JSON stays valid.
 */
import { childPath, ROOT_PATH, TEXT_PATH } from "./extract.ts";

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

  const value = (path: string, depth: number) => {
    if (depth > 500) fail("nesting too deep");
    ws();
    const c = raw[i];
    if (c === '"') {
      const [s, e] = skipString();
      const list = byPath.get(path === "" ? ROOT_PATH : path);
      if (list) editString(s, e, list);
    } else if (c === "{") {
      i++;
      ws();
      if (raw[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (raw[i] !== '"') fail("expected a key");
        const [ks, ke] = skipString();
        const key = JSON.parse(raw.slice(ks - 1, ke + 1)) as string;
        ws();
        if (raw[i] !== ":") fail("expected ':'");
        i++;
        value(childPath(path, key), depth + 1);
        ws();
        if (raw[i] === ",") {
          i++;
          continue;
        }
        if (raw[i] === "}") {
          i++;
          return;
        }
        fail("expected ',' or '}'");
      }
    } else if (c === "[") {
      i++;
      ws();
      if (raw[i] === "]") {
        i++;
        return;
      }
      for (let idx = 0; ; idx++) {
        value(childPath(path, idx), depth + 1);
        ws();
        if (raw[i] === ",") {
          i++;
          continue;
        }
        if (raw[i] === "]") {
          i++;
          return;
        }
        fail("expected ',' or ']'");
      }
    } else {
      // number, true, false, null
      const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(raw.slice(i, i + 64));
      if (!m) fail("unexpected token");
      i += m![0].length;
    }
  };

  value("", 0);
  if (missed) for (const list of byPath.values()) for (const e of list) if (!applied.has(e)) missed(e);
  parts.push(raw.slice(copied));
  return parts.join("");
}

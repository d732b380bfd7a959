/**
 * The first key that one object of a JSON text holds twice. JSON.parse keeps the last value of a
 * repeated key and drops the others without a word, while other parsers keep the first: in
 * `{"messages":[…a secret…],"messages":[…hello…]}` sluice would scan "hello" and an upstream could
 * read the secret. A body like that is ambiguous, and the pipeline treats it so.
 *
 * Runs over a text that JSON.parse has accepted, so it only has to tell keys from other strings:
 * strings are skipped with indexOf (most of a request body is the inside of long strings) and only
 * the structure between them is read character by character. A key written with escapes
 * (`"\u006dessages"`) is compared by its value, as parsers compare it. The containers open at a
 * point are kept on an explicit stack, so nesting depth costs memory, never call stack.
 * Libraries that report duplicate keys build a whole syntax tree of the document; this finds keys
 * only, at a fraction of the cost on megabyte bodies.
 */
import { childPath, ROOT_PATH } from "./extract.ts";

/** A key held twice by one object, and the path of that object. */
export interface DuplicateKey {
  key: string;
  /** The object's path in the `messages[3].content[0]` notation; `$` for the document root. */
  path: string;
}

const QUOTE = 34;
const BACKSLASH = 92;

/** One open container: an object's keys so far, or an array's index. */
interface Open {
  keys: Set<string> | null;
  index: number;
  /** The key (object) or index (array) of this container in its parent; "" for the root. */
  at: string | number;
}

/** The end (index of the closing quote) of the string whose opening quote is at `start`. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/**
 * The first repeated key in `text` (valid JSON), or null when every object's keys are distinct.
 * @example findDuplicateKey('{"a":1,"b":{"c":2,"c":3}}') // { key: "c", path: "b" }
 */
export function findDuplicateKey(text: string): DuplicateKey | null {
  const stack: Open[] = [];
  let expectKey = false;
  let key: string | number = "";
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (expectKey && top?.keys) {
        const raw = text.slice(i + 1, end);
        const k = raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (top.keys.has(k)) return { key: k, path: pathOf(stack) };
        top.keys.add(k);
        key = k;
        expectKey = false;
      }
      i = end;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      const top = stack[stack.length - 1];
      const at = top ? (top.keys ? key : top.index) : "";
      stack.push({ keys: c === 123 ? new Set() : null, index: 0, at });
      expectKey = c === 123;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (c === 44 /* , */) {
      const top = stack[stack.length - 1];
      if (top?.keys) expectKey = true;
      else if (top) top.index++;
    }
  }
  return null;
}

/** The path of the innermost open container. */
function pathOf(stack: Open[]): string {
  let path = "";
  for (let d = 1; d < stack.length; d++) path = childPath(path, stack[d]!.at);
  return path || ROOT_PATH;
}

/**
 * A small parser for the JavaScript regex syntax used by rules, good enough for two analyses:
 * which literals every match must contain (the prefilter anchors) and whether a pattern nests
 * unbounded quantifiers (catastrophic backtracking). It never executes anything.
 *
 * Longer than most files: the parser and the analyses over its tree (lengths, expansions, the anchor
 * literal, first and last characters, nested quantifiers, character counts) share the node type and
 * one another's results; apart, each would need the tree's whole vocabulary anyway.
 */

export type Node =
  | { t: "seq"; items: Node[] }
  | { t: "alt"; branches: Node[] }
  | { t: "group"; node: Node; capturing: boolean }
  | { t: "char"; chars: string[] | null; set?: string[] } // chars null: a large set; set: its members when known
  | { t: "zero" } // ^ $ \b \B and lookarounds: match no characters
  | { t: "quant"; node: Node; min: number; max: number }
  | { t: "backref" };

export class RegexSyntaxError extends Error {
  override name = "RegexSyntaxError";
}

const SMALL_CLASS = 8;
const WORD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_";
/** Every character `\s` matches in a JavaScript regex (not only ASCII: analyses must not under-count). */
const SPACE =
  " \t\n\r\f\v\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff";

/**
 * Parse `source` (the body of a JS regex, no slashes). Throws RegexSyntaxError on what it cannot read.
 * One recursive-descent parser with a case per syntax form, kept together so the grammar reads in one place.
 */
export function parseRegex(source: string): Node {
  let i = 0;
  const s = source;

  function parseAlt(): Node {
    const branches: Node[] = [parseSeq()];
    while (s[i] === "|") {
      i++;
      branches.push(parseSeq());
    }
    return branches.length === 1 ? branches[0]! : { t: "alt", branches };
  }

  function parseSeq(): Node {
    const items: Node[] = [];
    while (i < s.length && s[i] !== "|" && s[i] !== ")") {
      let atom = parseAtom();
      atom = parseQuant(atom);
      items.push(atom);
    }
    return { t: "seq", items };
  }

  function parseQuant(atom: Node): Node {
    for (;;) {
      const c = s[i];
      let min: number;
      let max: number;
      if (c === "*") {
        min = 0;
        max = Infinity;
        i++;
      } else if (c === "+") {
        min = 1;
        max = Infinity;
        i++;
      } else if (c === "?") {
        min = 0;
        max = 1;
        i++;
      } else if (c === "{") {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(i));
        if (!m) return atom; // a literal "{"
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
        i += m[0].length;
      } else return atom;
      if (s[i] === "?" || s[i] === "+") i++; // lazy (possessive is not JS, but tolerate)
      atom = { t: "quant", node: atom, min, max };
    }
  }

  function parseAtom(): Node {
    const c = s[i]!;
    if (c === "(") {
      i++;
      let capturing = true;
      let zero = false;
      if (s[i] === "?") {
        const rest = s.slice(i, i + 4);
        if (rest.startsWith("?:")) {
          i += 2;
          capturing = false;
        } else if (rest.startsWith("?=") || rest.startsWith("?!")) {
          i += 2;
          zero = true;
        } else if (rest.startsWith("?<=") || rest.startsWith("?<!")) {
          i += 3;
          zero = true;
        } else if (rest.startsWith("?<")) {
          const end = s.indexOf(">", i);
          if (end < 0) throw new RegexSyntaxError("unterminated group name");
          i = end + 1;
        } else {
          const m = /^\?[imsx-]+:/.exec(s.slice(i));
          if (!m) throw new RegexSyntaxError(`unsupported group syntax at ${i}`);
          i += m[0].length;
          capturing = false;
        }
      }
      const node = parseAlt();
      if (s[i] !== ")") throw new RegexSyntaxError("missing )");
      i++;
      return zero ? { t: "zero" } : { t: "group", node, capturing };
    }
    if (c === "[") return parseClass();
    if (c === "^" || c === "$") {
      i++;
      return { t: "zero" };
    }
    if (c === ".") {
      i++;
      return { t: "char", chars: null };
    }
    if (c === "\\") return parseEscape(false) as Node;
    if (c === "*" || c === "+" || c === "?") throw new RegexSyntaxError(`nothing to repeat at ${i}`);
    i++;
    return { t: "char", chars: [c] };
  }

  /** An escape at s[i] === "\\". In a class, returns the chars (null for large sets). */
  function parseEscape(inClass: boolean): Node | string[] | null {
    i++;
    const c = s[i++];
    if (c === undefined) throw new RegexSyntaxError("trailing backslash");
    const one = (ch: string) => (inClass ? [ch] : ({ t: "char", chars: [ch] } as Node));
    switch (c) {
      case "d":
      case "D":
      case "w":
      case "W":
      case "s":
      case "S":
        if (c === "d") return inClass ? [..."0123456789"] : { t: "char", chars: [..."0123456789"] };
        if (c === "w") return inClass ? [...WORD] : { t: "char", chars: null, set: [...WORD] };
        if (c === "s") return inClass ? [...SPACE] : { t: "char", chars: null, set: [...SPACE] };
        return inClass ? null : { t: "char", chars: null };
      case "b":
        return inClass ? ["\b"] : { t: "zero" };
      case "B":
        return inClass ? [] : { t: "zero" };
      case "n":
        return one("\n");
      case "r":
        return one("\r");
      case "t":
        return one("\t");
      case "f":
        return one("\f");
      case "v":
        return one("\v");
      case "0":
        return one("\0");
      case "x": {
        const h = s.slice(i, i + 2);
        i += 2;
        return one(String.fromCharCode(Number.parseInt(h, 16)));
      }
      case "u": {
        if (s[i] === "{") {
          const end = s.indexOf("}", i);
          const cp = Number.parseInt(s.slice(i + 1, end), 16);
          i = end + 1;
          return one(String.fromCodePoint(cp));
        }
        const h = s.slice(i, i + 4);
        i += 4;
        return one(String.fromCharCode(Number.parseInt(h, 16)));
      }
      case "p":
      case "P": {
        if (s[i] === "{") i = s.indexOf("}", i) + 1;
        return inClass ? null : { t: "char", chars: null };
      }
      case "k": {
        if (s[i] === "<") i = s.indexOf(">", i) + 1;
        return inClass ? [] : { t: "backref" };
      }
      default:
        if (/[1-9]/.test(c)) {
          while (/[0-9]/.test(s[i] ?? "")) i++;
          return inClass ? [] : { t: "backref" };
        }
        return one(c);
    }
  }

  function parseClass(): Node {
    i++; // [
    let negated = false;
    if (s[i] === "^") {
      negated = true;
      i++;
    }
    let chars: string[] | null = [];
    let first = true;
    while (i < s.length && (s[i] !== "]" || first)) {
      first = false;
      let lo: string | null;
      if (s[i] === "\\") {
        const e = parseEscape(true) as string[] | null;
        if (e === null || e.length !== 1) {
          if (e === null) chars = null;
          else if (chars) chars.push(...e);
          continue;
        }
        lo = e[0]!;
      } else lo = s[i++]!;
      if (s[i] === "-" && s[i + 1] !== "]" && i + 1 < s.length) {
        i++;
        let hi: string;
        if (s[i] === "\\") {
          const e = parseEscape(true) as string[] | null;
          hi = e?.[0] ?? lo;
        } else hi = s[i++]!;
        const a = lo.charCodeAt(0);
        const b = hi.charCodeAt(0);
        if (b < a) throw new RegexSyntaxError(`range out of order in character class: ${lo}-${hi}`);
        if (chars && b - a < 64) for (let k = a; k <= b; k++) chars.push(String.fromCharCode(k));
        else chars = null;
      } else if (chars) chars.push(lo);
    }
    if (s[i] !== "]") throw new RegexSyntaxError("missing ]");
    i++;
    if (negated || chars === null) return { t: "char", chars: null };
    const uniq = [...new Set(chars)];
    if (uniq.length > SMALL_CLASS * 8) return { t: "char", chars: null, set: uniq };
    return { t: "char", chars: uniq };
  }

  const node = parseAlt();
  if (i < s.length) throw new RegexSyntaxError(`unmatched ) at ${i}`);
  return node;
}

/** Longest number of characters a node can match (Infinity when unbounded). */
export function maxLen(n: Node): number {
  switch (n.t) {
    case "seq":
      return n.items.reduce((a, x) => a + maxLen(x), 0);
    case "alt":
      return Math.max(...n.branches.map(maxLen));
    case "group":
      return maxLen(n.node);
    case "char":
      return 1;
    case "zero":
      return 0;
    case "quant":
      return n.max === 0 ? 0 : n.max === Infinity ? Infinity : n.max * maxLen(n.node);
    case "backref":
      return Infinity;
  }
}

/** Shortest number of characters a node can match. */
export function minLen(n: Node): number {
  switch (n.t) {
    case "seq":
      return n.items.reduce((a, x) => a + minLen(x), 0);
    case "alt":
      return Math.min(...n.branches.map(minLen));
    case "group":
      return minLen(n.node);
    case "char":
      return 1;
    case "zero":
    case "backref":
      return 0;
    case "quant":
      return n.min * minLen(n.node);
  }
}

interface Expansion {
  strs: string[];
  /** True when the node matches exactly one of `strs` and nothing longer. */
  full: boolean;
}

const MAX_EXPANSION = 64;
const MAX_PREFIX = 12;

function cross(a: string[], b: string[]): string[] | null {
  if (a.length * b.length > MAX_EXPANSION) return null;
  const out: string[] = [];
  for (const x of a) for (const y of b) out.push(x + y);
  return out;
}

/** The literal strings a match of `n` must start with, when there are few enough of them. */
export function expand(n: Node): Expansion | null {
  switch (n.t) {
    case "zero":
      return { strs: [""], full: true };
    case "char":
      return n.chars && n.chars.length > 0 && n.chars.length <= SMALL_CLASS
        ? { strs: n.chars, full: true }
        : null;
    case "group":
      return expand(n.node);
    case "backref":
      return null;
    case "alt": {
      const out = new Set<string>();
      let full = true;
      for (const b of n.branches) {
        const e = expand(b);
        if (!e) return null;
        for (const s of e.strs) out.add(s);
        full &&= e.full;
      }
      if (out.size > MAX_EXPANSION) return null;
      return { strs: [...out], full };
    }
    case "quant": {
      if (n.min === 0) return { strs: [""], full: false };
      const e = expand(n.node);
      if (!e) return null;
      if (n.min === 1 && n.max === 1) return e;
      let acc = e.strs;
      for (let k = 1; k < n.min && e.full; k++) {
        const c = cross(acc, e.strs);
        if (!c) break;
        acc = c;
      }
      return { strs: acc, full: false };
    }
    case "seq": {
      let acc = [""];
      for (const item of n.items) {
        const e = expand(item);
        if (!e) return { strs: acc, full: false };
        const c = cross(acc, e.strs);
        if (!c) return { strs: acc, full: false };
        acc = c;
        if (!e.full || Math.min(...acc.map((s) => s.length)) >= MAX_PREFIX) return { strs: acc, full: false };
      }
      return { strs: acc, full: true };
    }
  }
}

/** A required literal set and how far before it a match may start. */
export interface Anchor {
  literals: string[];
  /** Characters a match may start before the anchor (0 for a prefix). */
  back: number;
  /** Characters a match may extend from the anchor's position. */
  forward: number;
  /** For a literal inside the pattern: the characters that can stand right before it, when known. */
  prev?: Set<string> | null;
  /** Every character the part of a match before the literal can contain, when known. */
  before?: Set<string> | null;
}

/** Every character a match of `n` can contain (null when unknown). */
export function allChars(n: Node): Set<string> | null {
  switch (n.t) {
    case "char": {
      const s = n.chars ?? n.set;
      return s ? new Set(s) : null;
    }
    case "zero":
      return new Set();
    case "backref":
      return null;
    case "group":
    case "quant":
      return allChars(n.node);
    case "alt":
    case "seq": {
      const out = new Set<string>();
      for (const b of n.t === "alt" ? n.branches : n.items) {
        const l = allChars(b);
        if (!l) return null;
        for (const c of l) out.add(c);
      }
      return out;
    }
  }
}

/** The characters a match of `n` can end with (null when unknown or unbounded). */
function lastChars(n: Node): Set<string> | null {
  switch (n.t) {
    case "char": {
      const s = n.chars ?? n.set;
      return s ? new Set(s) : null;
    }
    case "zero":
      return new Set();
    case "backref":
      return null;
    case "group":
      return lastChars(n.node);
    case "quant":
      return n.max === 0 ? new Set() : lastChars(n.node);
    case "alt": {
      const out = new Set<string>();
      for (const b of n.branches) {
        const l = lastChars(b);
        if (!l) return null;
        for (const c of l) out.add(c);
      }
      return out;
    }
    case "seq":
      return charsBefore(n.items, n.items.length);
  }
}

/** The characters that can stand right before items[k] inside a match, or null (unknown, or k can start it). */
function charsBefore(items: Node[], k: number): Set<string> | null {
  const out = new Set<string>();
  for (let j = k - 1; j >= 0; j--) {
    const it = items[j]!;
    if (it.t === "zero") continue;
    const l = lastChars(it);
    if (!l) return null;
    for (const c of l) out.add(c);
    if (minLen(it) > 0) return out;
  }
  return null;
}

/** The characters a match of `n` can start with, or null when unknown or large. */
export function firstChars(n: Node): Set<string> | null {
  switch (n.t) {
    case "char":
      return n.chars ? new Set(n.chars) : null;
    case "zero":
    case "backref":
      return null;
    case "group":
      return firstChars(n.node);
    case "alt": {
      const out = new Set<string>();
      for (const b of n.branches) {
        const f = firstChars(b);
        if (!f) return null;
        for (const c of f) out.add(c);
      }
      return out;
    }
    case "quant":
      return n.max === 0 ? new Set() : firstChars(n.node);
    case "seq": {
      const out = new Set<string>();
      for (const item of n.items) {
        if (item.t === "zero") continue;
        const f = firstChars(item);
        if (!f) return null;
        for (const c of f) out.add(c);
        if (minLen(item) > 0) return out;
      }
      return out;
    }
  }
}

/** The top-level sequence of a pattern, with groups that are themselves sequences spliced in. */
function topSeq(n: Node): Node[] {
  while (n.t === "group") n = n.node;
  if (n.t !== "seq") return [n];
  const out: Node[] = [];
  for (const item of n.items) {
    let inner = item;
    while (inner.t === "group") inner = inner.node;
    if (inner.t === "seq") out.push(...topSeq(inner));
    else out.push(item);
  }
  return out;
}

function score(literals: string[]): number {
  const shortest = Math.min(...literals.map((l) => l.length));
  return shortest * 10 - Math.log2(literals.length);
}

/**
 * The best anchor of a pattern: the literal prefix when there is one, else a required literal in
 * the top-level sequence at a bounded distance from the start. Null when there is none.
 */
export function findAnchor(n: Node, rareSingle = "@%\\"): Anchor | null {
  const items = topSeq(n);
  const total = maxLen(n);
  let best: Anchor | null = null;
  let bestScore = -Infinity;
  let back = 0;
  for (let k = 0; k < items.length; k++) {
    if (back > 1024) break;
    const rest: Node = { t: "seq", items: items.slice(k) };
    const e = expand(rest);
    if (e && e.strs.length > 0) {
      const lits = e.strs.map((x) => x.slice(0, MAX_PREFIX));
      const shortest = Math.min(...lits.map((l) => l.length));
      const usable = shortest >= 2 || (shortest === 1 && lits.every((l) => rareSingle.includes(l[0]!)));
      if (usable) {
        const sc = score(lits) - (k > 0 ? 2 : 0);
        if (sc > bestScore) {
          const fwd = maxLen(rest);
          bestScore = sc;
          best = {
            literals: [...new Set(lits)],
            back,
            forward: Number.isFinite(fwd) ? fwd : Number.isFinite(total) ? total : Infinity,
            prev: k > 0 ? charsBefore(items, k) : null,
            before: k > 0 ? allChars({ t: "seq", items: items.slice(0, k) }) : null,
          };
        }
      }
    }
    back += maxLen(items[k]!);
    if (!Number.isFinite(back)) break;
  }
  return best;
}

/**
 * Quantifiers that can repeat an unbounded number of times around something that can itself vary in
 * length: `(a+)+`, `(\w*\s?)*`, `(?:x|xy)*`. Returns a human description of the first one, or null.
 */
export function nestedQuantifier(n: Node, source: string): string | null {
  let found: string | null = null;
  const walk = (x: Node, underUnbounded: boolean) => {
    if (found) return;
    switch (x.t) {
      case "seq":
        for (const it of x.items) walk(it, underUnbounded);
        return;
      case "alt":
        if (underUnbounded && x.branches.length > 1) {
          const firsts = x.branches.map(firstChars);
          for (let a = 0; a < firsts.length && !found; a++)
            for (let b = a + 1; b < firsts.length && !found; b++) {
              const fa = firsts[a];
              const fb = firsts[b];
              if (!fa || !fb || [...fa].some((c) => fb.has(c)))
                found =
                  "an alternation whose branches can start with the same character inside a repeated group";
            }
        }
        for (const b of x.branches) walk(b, underUnbounded);
        return;
      case "group":
        walk(x.node, underUnbounded);
        return;
      case "quant": {
        const unbounded = x.max === Infinity || x.max > 100;
        if (unbounded && underUnbounded && maxLen(x.node) > 0) {
          found = "a repeated quantifier inside another repeated group (like (a+)+)";
          return;
        }
        if (unbounded && minLen(x.node) !== maxLen(x.node)) {
          walk(x.node, true);
          return;
        }
        walk(x.node, underUnbounded || unbounded);
        return;
      }
      default:
        return;
    }
  };
  walk(n, false);
  return found ? `${found} in /${source}/` : null;
}

/** Characters counted by `minCounts`: '#' stands for any digit, '~' for any of the others. */
export const COUNTED = "#.:-+()/ ~";
const SEPARATORS = ".:-+()/ ";

/**
 * The fewest times each counted character must occur in any match ('#' = digits), e.g. an SSN
 * pattern needs nine digits and two '-'. Used to skip rules on number clusters that cannot match.
 */
export function minCounts(n: Node): Map<string, number> {
  const add = (a: Map<string, number>, b: Map<string, number>, times = 1) => {
    for (const [k, v] of b) a.set(k, (a.get(k) ?? 0) + v * times);
    return a;
  };
  switch (n.t) {
    case "char": {
      const out = new Map<string, number>();
      if (!n.chars || n.chars.length === 0) return out;
      if (n.chars.every((c) => c >= "0" && c <= "9")) out.set("#", 1);
      else if (n.chars.every((c) => SEPARATORS.includes(c))) {
        out.set("~", 1);
        if (n.chars.length === 1) out.set(n.chars[0]!, 1);
      }
      return out;
    }
    case "zero":
    case "backref":
      return new Map();
    case "group":
      return minCounts(n.node);
    case "seq":
      return n.items.reduce((acc, it) => add(acc, minCounts(it)), new Map<string, number>());
    case "quant":
      return n.min === 0 ? new Map() : add(new Map(), minCounts(n.node), n.min);
    case "alt": {
      const maps = n.branches.map(minCounts);
      const out = new Map<string, number>();
      for (const k of maps[0]?.keys() ?? []) {
        const v = Math.min(...maps.map((m) => m.get(k) ?? 0));
        if (v > 0) out.set(k, v);
      }
      return out;
    }
  }
}

/**
 * The character sets of a match's first `k` characters, when each is fixed by the pattern's leading
 * items (single characters, classes, and classes repeated an exact number of times; zero-width
 * assertions skipped): `\b[A-Z]{2}\d{2}` gives [A-Z], [A-Z], [0-9]. Null when a position is
 * uncertain (an optional or variable repetition, an alternation) or a set is unknown.
 */
export function leadingSets(n: Node, k = 3): string[][] | null {
  const out: string[][] = [];
  for (const item of topSeq(n)) {
    let it = item;
    while (it.t === "group") it = it.node;
    if (it.t === "zero") continue;
    let inner: Node = it;
    let min = 1;
    let max = 1;
    if (it.t === "quant") {
      inner = it.node;
      while (inner.t === "group") inner = inner.node;
      min = it.min;
      max = it.max;
    }
    if (inner.t !== "char" || min === 0) return null;
    const set = inner.chars ?? inner.set;
    if (!set || set.length === 0) return null;
    for (let r = 0; r < min && out.length < k; r++) out.push(set);
    if (out.length >= k) return out;
    if (max !== min) return null;
  }
  return null;
}

/**
 * What must follow a prefix literal in any match, as a cheap check before the regex runs: after the
 * literal come at most `max` characters from `skip` (the rest of the literal's alternative, optional
 * items), then a character of `need` (the first character of the next required item). `token` in
 * `(?i)(?:password|token|...)[\w.-]{0,40}?["']?\s{0,3}(?:=|:)...` gives skip [\w.-"' \t...], max 44,
 * need [=:]: `tokenizer.next(` fails at `(` without running the regex. Null when the pattern's shape
 * gives no such check. Sets are over-approximations, so the check never rejects a real match.
 */
export interface Follow {
  skip: Set<string>;
  max: number;
  need: Set<string>;
}

export function followAfter(n: Node, lit: string, ci: boolean): Follow | null {
  const norm = (x: string) => (ci ? x.toLowerCase() : x);
  const items = topSeq(n).filter((x) => x.t !== "zero");
  const skip = new Set<string>();
  let max = 0;
  let rest = norm(lit);
  let k = 0;
  const addAll = (x: Node): boolean => {
    const a = allChars(x);
    if (!a) return false;
    for (const c of a) skip.add(c);
    return true;
  };
  // Consume the literal from the leading items.
  while (rest.length > 0) {
    const item = items[k++];
    if (!item) return null;
    let it: Node = item;
    while (it.t === "group") it = it.node;
    const branches = it.t === "alt" ? it.branches : [it];
    let whole = -1; // length the item takes of the literal when the literal goes on past it
    let inside = false; // some branch holds the literal's end
    let tail = 0;
    for (const b of branches) {
      const e = expand(b);
      if (!e) return null;
      for (const raw of e.strs) {
        const str = norm(raw);
        if (str.length >= rest.length ? !str.startsWith(rest) : !rest.startsWith(str)) continue;
        if (str.length < rest.length || (str.length === rest.length && e.full)) {
          // The branch ends at or before the literal's end.
          if (!e.full) return null; // what it matches next is unknown
          if (str.length === rest.length) {
            inside = true;
            continue;
          }
          if (whole !== -1 && whole !== str.length) return null;
          whole = str.length;
        } else {
          // The literal ends inside this branch: the rest of the branch may follow it.
          inside = true;
          if (!addAll(b)) return null;
          const left = maxLen(b) - rest.length;
          if (!Number.isFinite(left)) return null;
          tail = Math.max(tail, left);
        }
      }
    }
    if (whole !== -1 && inside) return null; // ambiguous: both continue and end here
    if (whole !== -1) {
      rest = rest.slice(whole);
      continue;
    }
    if (!inside) return null;
    max += tail;
    rest = "";
  }
  for (; k < items.length; k++) {
    const it = items[k]!;
    if (minLen(it) === 0) {
      if (!addAll(it)) return null;
      max += maxLen(it);
      if (!Number.isFinite(max)) return null;
      continue;
    }
    const need = firstChars(it);
    if (!need || need.size === 0) return null;
    return { skip, max, need };
  }
  return null;
}

/**
 * Strings a rule's pattern matches, made from its syntax tree (regex-ast.ts): each alternative and
 * repetition count is chosen by a seeded random source, and each character from its class. Used to
 * compare rules with each other (which rules also flag what one rule flags), beside the examples a
 * rule ships with. A string is only a sample once the pattern itself finds it (the tree does not
 * model lookarounds and word boundaries, so some draws miss and are dropped).
 */
import { compilePattern, patternParts } from "./pattern.ts";
import { type Node, parseRegex } from "./regex-ast.ts";

/** Characters drawn where a class is too large to list (`.`, `[^"]`, `\S`). */
const WIDE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/** Repetitions beyond the minimum, at most: samples stay short enough to compare many. */
const EXTRA_REPEATS = 6;

/** A small deterministic random source (mulberry32), so that runs are repeatable. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function draw(node: Node, rnd: () => number, out: string[]): void {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  // An explicit stack: the tree of a long pattern may be deep, and a walk must not overflow.
  const stack: Node[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    switch (n.t) {
      case "seq":
        for (let i = n.items.length - 1; i >= 0; i--) stack.push(n.items[i]!);
        break;
      case "alt":
        stack.push(pick(n.branches));
        break;
      case "group":
        stack.push(n.node);
        break;
      case "char":
        out.push(pick(n.chars && n.chars.length > 0 ? n.chars : [...WIDE]));
        break;
      case "quant": {
        const max = Number.isFinite(n.max) && n.max !== null ? n.max : n.min + EXTRA_REPEATS;
        const count = n.min + Math.floor(rnd() * (Math.min(max, n.min + EXTRA_REPEATS) - n.min + 1));
        for (let i = 0; i < count; i++) stack.push(n.node);
        break;
      }
      default: // zero-width assertions and back-references add nothing
        break;
    }
  }
}

/**
 * Up to `count` distinct strings that `pattern` finds, drawn with `seed`; `wrap` puts each draw in
 * the context a rule needs (e.g. a keyword before it). Empty when the pattern cannot be parsed.
 */
export function patternSamples(
  pattern: string,
  count: number,
  seed: number,
  wrap: (drawn: string) => string = (s) => s,
): string[] {
  let tree: Node;
  let re: RegExp;
  try {
    tree = parseRegex(patternParts(pattern).source);
    re = compilePattern(pattern);
  } catch {
    return [];
  }
  const rnd = seededRandom(seed);
  const found = new Set<string>();
  for (let attempt = 0; attempt < count * 4 && found.size < count; attempt++) {
    const out: string[] = [];
    draw(tree, rnd, out);
    const text = wrap(out.join(""));
    if (text.length > 0 && re.test(text)) found.add(text);
  }
  return [...found];
}

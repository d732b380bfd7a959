/**
 * Parsing a turn from the previous one (src/proxy/turns.ts), over bytes rather than text: the first
 * turn is parsed as the proxy parses it (json-source.ts), the next one is its bytes with a run of
 * random bytes put in place of others (UTF-8 sequences cut in two, lone continuation bytes, byte
 * order marks, escapes, backslashes, quotes, brackets, `messages` keys), inside `messages` or
 * anywhere, for several turns in a row. Whenever a body is parsed from its previous turn, its value
 * is the one JSON.parse gives for the whole body, compared key by key in order, with -0 told from 0;
 * the body holds no key twice; and the memory the turn is counted for is the estimate for its bytes.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { findDuplicateKey } from "../../src/payload/duplicate-keys.ts";
import { extractTexts } from "../../src/payload/extract.ts";
import { parseJsonSource } from "../../src/payload/json-source.ts";
import { layoutOf, TurnMemory, weigh } from "../../src/proxy/turns.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const COMMA = 0x2c;

/** Equal as JSON.parse's values: same keys in the same order, Object.is for the rest. */
function same(a: unknown, b: unknown): boolean {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** JSON text of `v`, some characters written as `\u` escapes and some whitespace between tokens. */
function write(v: unknown, r: () => number): string {
  const ws = () => (r() < 0.15 ? [" ", "\n", "\t", "\r\n  "][Math.floor(r() * 4)]! : "");
  if (typeof v === "string") {
    let out = '"';
    for (const ch of v) {
      const code = ch.codePointAt(0)!;
      if (ch === '"' || ch === "\\" || code < 0x20 || r() < 0.1)
        for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`;
      else out += ch;
    }
    return `${out}"`;
  }
  if (Array.isArray(v)) return `[${ws()}${v.map((x) => write(x, r)).join(`${ws()},${ws()}`)}${ws()}]`;
  if (v !== null && typeof v === "object")
    return `{${ws()}${Object.entries(v)
      .map(([k, x]) => `${write(k, r)}${ws()}:${ws()}${write(x, r)}`)
      .join(`${ws()},${ws()}`)}${ws()}}`;
  return JSON.stringify(v);
}

const text = fc.oneof(
  fc.string({ maxLength: 6, unit: "grapheme" }),
  fc.string({ maxLength: 4, unit: "binary" }),
  fc.constantFrom("messages", "__proto__", "1", '"', "\\", "\ufeff", "é", "€", "𝄞", "\u2028", "a\\u0022b"),
);
const { value } = fc.letrec((t) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(true, false, null, -0, 1e21, 12),
    fc.array(t("value"), { maxLength: 3 }),
    fc.dictionary(text, t("value"), { maxKeys: 3 }),
  ),
}));
/** Bytes to put into a body: pieces of UTF-8 characters, JSON punctuation, escapes, whole values. */
const piece = fc.oneof(
  fc
    .constantFrom(
      ...'{}[],:"\\ 01-.e'.split(""),
      "\ufeff",
      "\\u0022",
      "\\\\",
      "\\u00",
      '"messages"',
      '"mess\\u0061ges"',
      '],"messages":[',
      '{"a":1,"a":2}',
      '{"a":1,"\\u0061":2}',
      "€",
    )
    .map((s) => enc.encode(s)),
  fc
    .constantFrom([0xe2], [0x82], [0xac], [0xe2, 0x82], [0xef, 0xbb, 0xbf], [0xc3], [0xff], [0xf0, 0x9d])
    .map((b) => new Uint8Array(b)),
  value.map((v) => enc.encode(JSON.stringify(v) ?? "null")),
);
const replacement = fc.array(piece, { maxLength: 5 }).map((parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
});
const edit = fc.oneof(
  fc.record({
    inMessages: fc.boolean(),
    /** Where the run starts, at an element boundary of `messages` or anywhere. */
    atElement: fc.boolean(),
    at: fc.nat(),
    remove: fc.nat({ max: 24 }),
    insert: replacement,
    element: fc.constant(false),
  }),
  // A whole value put in as an element of `messages` (followed by a comma when one follows it),
  // sometimes one with a key twice.
  fc.record({
    inMessages: fc.constant(true),
    atElement: fc.constant(true),
    at: fc.nat(),
    remove: fc.constant(0),
    insert: fc.oneof(
      value.map((v) => enc.encode(JSON.stringify(v))),
      fc.constantFrom('{"a":1,"a":2}', '[{"k":{"x":1,"\\u0078":2}}]').map((t) => enc.encode(t)),
    ),
    element: fc.constant(true),
  }),
  // An element of `messages` taken out, with the comma after it or without (`[1,]`, `[1,,2]`).
  fc.record({
    inMessages: fc.constant(true),
    atElement: fc.constant(true),
    at: fc.nat(),
    remove: fc.constantFrom(-1, -2),
    insert: fc.constant(new Uint8Array(0)),
    element: fc.constant(false),
  }),
);
type Edit = typeof edit extends fc.Arbitrary<infer T> ? T : never;

function applyEdit(b: Uint8Array, e: Edit): Uint8Array {
  const layout = layoutOf(b);
  let at: number;
  if (e.inMessages && layout) {
    const bounds = [layout.open, ...layout.commas.map((c) => c + 1)];
    at = e.atElement
      ? bounds[e.at % bounds.length]!
      : layout.open + (e.at % (layout.close - layout.open + 1));
  } else at = e.at % (b.length + 1);
  const insert = e.element && layout && layout.count > 0 ? new Uint8Array([...e.insert, COMMA]) : e.insert;
  let remove = Math.min(e.remove, b.length - at);
  if (e.remove < 0 && layout) {
    // The element that starts at `at`, up to its comma (or the `]`), and the comma too for -2.
    const k = [layout.open, ...layout.commas.map((c) => c + 1)].indexOf(at);
    const end = layout.commas[k] ?? layout.close;
    remove = end - at + (e.remove === -2 && end < layout.close ? 1 : 0);
  } else if (e.remove < 0) remove = 0;
  const out = new Uint8Array(b.length - remove + insert.length);
  out.set(b.subarray(0, at));
  out.set(insert, at);
  out.set(b.subarray(at + remove), at + insert.length);
  return out;
}

const body = fc.record({
  before: fc.dictionary(text, value, { maxKeys: 2 }),
  messages: fc.array(value, { minLength: 1, maxLength: 5 }),
  after: fc.dictionary(text, value, { maxKeys: 2 }),
  escapedKey: fc.boolean(),
  seed: fc.integer(),
});

/** A random first turn as text. */
function firstTurn(b: typeof body extends fc.Arbitrary<infer T> ? T : never): string {
  let seed = b.seed;
  const r = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const o = { ...b.before, messages: b.messages, ...b.after };
  let s = write(o, r);
  if (b.escapedKey) s = s.replace('"messages"', '"mess\\u0061ges"');
  return s;
}

/** What the proxy does with a turn: parse it from the previous one, or parse it whole and keep it. */
function turn(m: TurnMemory, bytes: Uint8Array): { reparsed: boolean } {
  const r = m.reparse("c", "anthropic", bytes);
  let whole: unknown;
  try {
    whole = JSON.parse(dec.decode(bytes));
  } catch {
    whole = undefined;
  }
  if (r === null) {
    m.remember("c", "anthropic", bytes, parseJsonSource(bytes)?.json);
    return { reparsed: false };
  }
  const shown = dec.decode(bytes);
  expect(whole, `parsed from the previous turn but not JSON: ${shown}`).not.toBeUndefined();
  expect(same(r.json, whole), `not JSON.parse's value: ${shown}`).toBe(true);
  expect(findDuplicateKey(shown)).toBeNull();
  expect(m.lastMemory("c")).toBe(weigh(bytes, 0, bytes.length));
  return { reparsed: true };
}

test("property: random bytes in place of others give JSON.parse's value, or a whole parse", () => {
  let reparsed = 0;
  fc.assert(
    fc.property(body, fc.array(edit, { minLength: 1, maxLength: 2 }), fc.boolean(), (b, edits, settle) => {
      const m = new TurnMemory();
      const bytes = enc.encode(firstTurn(b));
      m.remember("c", "anthropic", bytes, parseJsonSource(bytes)?.json);
      if (settle) m.settle();
      let next: Uint8Array = bytes;
      for (const e of edits) next = applyEdit(next, e);
      if (turn(m, next).reparsed) reparsed++;
    }),
    { numRuns: 2500 },
  );
  // Runs of bytes put at an element boundary are often whole values: read from the previous turn.
  expect(reparsed).toBeGreaterThan(400);
});

test("property: a chain of turns, each an edit of the last, is read right at every turn", () => {
  let reparsed = 0;
  fc.assert(
    fc.property(body, fc.array(fc.tuple(edit, fc.boolean()), { minLength: 2, maxLength: 6 }), (b, steps) => {
      const m = new TurnMemory();
      let cur: Uint8Array = enc.encode(firstTurn(b));
      m.remember("c", "anthropic", cur, parseJsonSource(cur)?.json);
      for (const [e, settle] of steps) {
        if (settle) m.settle();
        const next = applyEdit(cur, e);
        if (turn(m, next).reparsed) reparsed++;
        if (parseJsonSource(next) !== undefined) cur = next;
      }
    }),
    { numRuns: 800 },
  );
  expect(reparsed).toBeGreaterThan(400);
});

test("the memory estimate of a body is the sum of its parts cut between elements of messages", () => {
  const b = enc.encode('{"a":[{},{"k":"v\\"}"}],"messages":[1, {"x":[2,"]"]} ,"é"],"z":{}}');
  const l = layoutOf(b)!;
  const whole = weigh(b, 0, b.length);
  for (const cut of [l.open, ...l.commas.map((c) => c + 1)])
    expect(weigh(b, 0, cut) + weigh(b, cut, l.close) + weigh(b, l.close, b.length)).toBe(whole);
  // Small values weigh many times their bytes; a long string about five times (bytes, text, and the
  // text it may decode to).
  const dense = enc.encode(`{"messages":[${"{},".repeat(999)}{}]}`);
  expect(weigh(dense, 0, dense.length)).toBeGreaterThan(25 * dense.length);
  const long = enc.encode(`{"messages":["${"x".repeat(10_000)}"]}`);
  expect(weigh(long, 0, long.length)).toBeLessThan(5.1 * long.length);
});

test("a body whose parsed value would take more than the bound is not kept; the rest are", () => {
  const m = new TurnMemory();
  const dense = `{"messages":[${"{},".repeat(800_000)}{}]}`;
  m.remember("dense", "anthropic", enc.encode(dense), JSON.parse(dense));
  expect(m.stats().kept).toBe(0);
  expect(m.stats().memory).toBe(0);
  const small = '{"messages":[{"role":"user","content":"hi"}]}';
  for (let i = 0; i < 20; i++) m.remember(`c${i}`, "anthropic", enc.encode(small), JSON.parse(small));
  expect(m.stats().kept).toBe(16);
  expect(m.stats().memory).toBe(16 * weigh(enc.encode(small), 0, small.length));
});

test("a data field is weighed for the text it decodes to as well, at two bytes a character", () => {
  // Text with one character outside Latin-1 takes two bytes a character: the decoded copy the kept
  // strings hold (extract.ts) can take more than the field's own bytes.
  const text = `${"a".repeat(5000)}中`;
  for (const source of [
    { type: "base64", media_type: "text/plain", data: Buffer.from(text).toString("base64") },
    { type: "url", url: `data:text/plain,${"a".repeat(5000)}%E4%B8%AD` },
  ]) {
    const json = {
      model: "m",
      messages: [{ role: "user", content: [{ type: "document", source }] }],
    };
    const b = enc.encode(JSON.stringify(json));
    const decoded = extractTexts(json, "anthropic").texts.find((t) => t === text);
    expect(decoded).toBe(text);
    const field = ("data" in source ? source.data : source.url) ?? "";
    // The bytes, the field's string, and its decoded text.
    expect(weigh(b, 0, b.length)).toBeGreaterThan(b.length + field.length + 2 * text.length);
  }
});

/**
 * Parsing a turn from the previous one (src/proxy/turns.ts): whatever the next body is, a body
 * parsed that way is the value JSON.parse gives for it, and holds no key twice; anything else is
 * parsed whole. Property tests edit a conversation's bytes anywhere (inside the kept messages,
 * before and after the array, across its brackets) and compare with JSON.parse.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { findDuplicateKey } from "../../src/payload/duplicate-keys.ts";
import { extractTexts } from "../../src/payload/extract.ts";
import { layoutOf, TurnMemory, weigh } from "../../src/proxy/turns.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function conversation(turns: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const messages: unknown[] = [{ role: "user", content: "Fix the failing test in src/clock.ts" }];
  for (let i = 0; i < turns; i++)
    messages.push(
      { role: "assistant", content: [{ type: "text", text: `Step ${i} done.` }] },
      {
        role: "user",
        content: [{ type: "text", text: `Now step ${i + 1}.`, cache_control: { type: "ephemeral" } }],
      },
    );
  return {
    model: "claude-sonnet-4-5",
    messages,
    system: [{ type: "text", text: "You are Claude Code. ".repeat(40) }],
    tools: [{ name: "Bash", input_schema: { type: "object" } }],
    stream: true,
    ...extra,
  };
}

/** A memory holding `first` as the previous turn of conversation "c". */
function after(first: string): TurnMemory {
  const m = new TurnMemory();
  m.remember("c", "anthropic", enc.encode(first), JSON.parse(first));
  return m;
}

/** A parse from the previous turn is JSON.parse's value, with no key twice, and its strings are extractTexts'. */
function expectExact(r: { json: unknown; texts?: string[] }, next: string): void {
  expect(r.json).toEqual(JSON.parse(next));
  expect(findDuplicateKey(next)).toBeNull();
  if (r.texts) expect(r.texts).toEqual(extractTexts(JSON.parse(next), "anthropic").texts);
}

/** `next` parsed after `first`: null (parsed whole) or exactly what JSON.parse gives. */
function reparsed(first: string, next: string): unknown {
  const r = after(first).reparse("c", "anthropic", enc.encode(next));
  if (r === null) return null;
  expectExact(r, next);
  return r.json;
}

test("a conversation's turns are parsed from the previous one, each equal to JSON.parse of the whole", () => {
  const m = new TurnMemory();
  let first = true;
  for (let t = 0; t < 8; t++) {
    const body = JSON.stringify(conversation(t));
    const r = m.reparse("c", "anthropic", enc.encode(body));
    if (first) {
      expect(r).toBeNull();
      m.remember("c", "anthropic", enc.encode(body), JSON.parse(body));
      first = false;
    } else {
      expect(r).not.toBeNull();
      expectExact(r!, body);
      // The strings too: the kept messages' and the system prompt's and tools' are the previous turn's.
      expect(r!.texts).toBeDefined();
      // Only the last kept message onwards was parsed.
      expect(r!.parsedBytes).toBeLessThan(body.length / 2);
    }
    if (t % 2) m.settle();
  }
  expect(m.stats().reparsed).toBe(7);
});

test("a side request between two turns (a title, under the same key) leaves the first to parse the next from", () => {
  const m = new TurnMemory();
  const first = JSON.stringify(conversation(1));
  m.remember("c", "anthropic", enc.encode(first), JSON.parse(first));
  // Claude Code's title request: another model, one message, no tools, same session header and path.
  const title = (n: number) =>
    JSON.stringify({
      model: "claude-haiku-4-5",
      system: [{ type: "text", text: "Name this coding session in two to five words." }],
      messages: [{ role: "user", content: `<session>\nFix the failing test, prompt ${n}\n</session>` }],
      stream: true,
    });
  expect(m.reparse("c", "anthropic", enc.encode(title(1)))).toBeNull();
  m.remember("c", "anthropic", enc.encode(title(1)), JSON.parse(title(1)));
  m.settle();
  for (let t = 2; t <= 4; t++) {
    const next = JSON.stringify(conversation(t));
    const r = m.reparse("c", "anthropic", enc.encode(next));
    expect(r).not.toBeNull();
    expectExact(r!, next);
    expect(r!.parsedBytes).toBeLessThan(next.length / 4);
    // The next prompt's title request is parsed from the previous one (its one message changed).
    const side = m.reparse("c", "anthropic", enc.encode(title(t)));
    expect(side).not.toBeNull();
    expectExact(side!, title(t));
  }
  expect(m.stats()).toMatchObject({ reparsed: 6, kept: 1 });
  // Two turns are kept under the key, and the memory counts exactly those two.
  const last = [JSON.stringify(conversation(4)), title(4)];
  expect(m.stats().memory).toBe(last.reduce((sum, b) => sum + weigh(enc.encode(b), 0, b.length), 0));
});

test("a third body under one key pushes out the one least recently sent", () => {
  const m = new TurnMemory();
  const bodies = [
    conversation(1),
    conversation(1, { model: "other" }),
    conversation(1, { model: "third" }),
  ].map((b) => JSON.stringify(b));
  for (const b of bodies) m.remember("c", "anthropic", enc.encode(b), JSON.parse(b));
  m.settle();
  const grown = (b: string) => b.replace('"Now step 1."', '"Now step 1 and 2."');
  expect(m.reparse("c", "anthropic", enc.encode(grown(bodies[0]!)))).toBeNull();
  for (const b of bodies.slice(1)) expectExact(m.reparse("c", "anthropic", enc.encode(grown(b)))!, grown(b));
});

test("the layout names the root's messages array, not a nested one or a string", () => {
  const body =
    '{"a":{"messages":[1,2]},"s":"\\"messages\\":[9,9]","messages":[1,{"x":[2,3]}, "s,]"],"b":[4]}';
  const l = layoutOf(enc.encode(body))!;
  expect(body.slice(l.open - 1, l.close + 1)).toBe('[1,{"x":[2,3]}, "s,]"]');
  expect(l.count).toBe(3);
  expect(l.commas.map((c) => body[c])).toEqual([",", ","]);
  expect(layoutOf(enc.encode('{"messages":[]}'))).toMatchObject({ count: 0, commas: [] });
  expect(layoutOf(enc.encode('{"m\\u0065ssages":[1]}'))).toMatchObject({ count: 1 });
  expect(layoutOf(enc.encode('[{"messages":[1]}]'))).toBeNull();
  expect(layoutOf(enc.encode('{"messages":"text"}'))).toBeNull();
});

test("a change before the array, after it, or in a kept message is parsed whole or as JSON.parse reads it", () => {
  const first = JSON.stringify(conversation(2));
  const next = JSON.stringify(conversation(3));
  // Before the array (the model), after it (the tools), inside the first message.
  expect(reparsed(first, next.replace("claude-sonnet-4-5", "claude-opus-4-1"))).toBeNull();
  expect(reparsed(first, next.replace('"Bash"', '"Read"'))).toBeNull();
  expect(reparsed(first, next.replace("failing test", "failing tests"))).toEqual(
    JSON.parse(next.replace("failing test", "failing tests")),
  );
});

test("the new part cannot close the array and add a key outside it", () => {
  const first = JSON.stringify(conversation(1));
  const next = JSON.stringify(conversation(2));
  const closeAt = next.lastIndexOf("]", next.indexOf('"system"'));
  // `…],"messages":[…]` inside the new part: a second `messages` key of the root.
  const twice = `${next.slice(0, closeAt)}],"messages":[{"role":"user","content":"hi"}${next.slice(closeAt)}`;
  expect(() => JSON.parse(twice)).not.toThrow();
  expect(findDuplicateKey(twice)).not.toBeNull();
  expect(reparsed(first, twice)).toBeNull();
  // A key twice inside a new message.
  const dupInNew = next.replace('"text":"Now step 2."', '"text":"Now step 2.","text":"x"');
  expect(reparsed(first, dupInNew)).toBeNull();
});

test("a previous turn that held a key twice is not used", () => {
  const first = JSON.stringify(conversation(1)).replace('"stream":true', '"stream":true,"stream":false');
  const next = JSON.stringify(conversation(2)).replace('"stream":true', '"stream":true,"stream":false');
  expect(reparsed(first, next)).toBeNull();
});

test("another conversation's previous turn is not used", () => {
  const m = after(JSON.stringify(conversation(1)));
  expect(m.reparse("other", "anthropic", enc.encode(JSON.stringify(conversation(2))))).toBeNull();
});

/**
 * A random edit of a body: bytes inserted, deleted or replaced, anywhere or (mostly) inside its
 * `messages` array, often JSON punctuation.
 */
const edit = fc.oneof(
  // Text typed inside a string, mostly (the body stays valid).
  {
    weight: 3,
    arbitrary: fc.record({
      inMessages: fc.boolean(),
      at: fc.noBias(fc.integer({ min: 0, max: 999_999 })).map((n) => n / 1_000_000),
      remove: fc.constant(0),
      insert: fc.stringMatching(/^[a-z ]{1,8}$/),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      inMessages: fc.boolean(),
      at: fc.noBias(fc.integer({ min: 0, max: 999_999 })).map((n) => n / 1_000_000),
      remove: fc.oneof(fc.constant(0), fc.nat({ max: 3 }), fc.nat({ max: 40 })),
      insert: fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.constantFrom(
          ",",
          "]",
          "[",
          "}",
          "{",
          '"',
          "\\",
          ":",
          '],"messages":[',
          '"},{"',
          "\\u0022",
          ",{}",
          ",1",
        ),
      ),
    }),
  },
);

function applyEdits(body: string, edits: (typeof edit extends fc.Arbitrary<infer T> ? T : never)[]): string {
  for (const e of edits) {
    const from = e.inMessages ? body.indexOf('"messages"') : 0;
    const to = e.inMessages ? body.indexOf('"system"') : body.length;
    const at = from + Math.floor(e.at * (to - from));
    body = body.slice(0, at) + e.insert + body.slice(at + e.remove);
  }
  return body;
}

test("property: any edit of the next turn gives either a whole parse or exactly JSON.parse's value", () => {
  let used = 0;
  let withTexts = 0;
  let validCount = 0;
  fc.assert(
    fc.property(fc.nat({ max: 5 }), fc.array(edit, { minLength: 1, maxLength: 3 }), (turns, edits) => {
      const first = JSON.stringify(conversation(turns));
      const next = applyEdits(JSON.stringify(conversation(turns + 1)), edits);
      let valid = true;
      try {
        JSON.parse(next);
      } catch {
        valid = false;
      }
      const r = after(first).reparse("c", "anthropic", enc.encode(next));
      if (valid) validCount++;
      if (!valid) expect(r).toBeNull();
      else if (r !== null) {
        used++;
        if (r.texts) withTexts++;
        expectExact(r, next);
      }
    }),
    { numRuns: 3000 },
  );
  // Edits that keep the body valid are mostly inside strings of messages: read from the previous turn.
  expect(used).toBeGreaterThan(validCount / 4);
  expect(withTexts).toBeGreaterThan(used / 2);
});

test("property: an edit of a previous turn that parsed from its own previous one is read right too", () => {
  fc.assert(
    fc.property(fc.array(edit, { minLength: 1, maxLength: 2 }), (edits) => {
      const m = new TurnMemory();
      const bodies = [0, 1, 2].map((t) => JSON.stringify(conversation(t)));
      m.remember("c", "anthropic", enc.encode(bodies[0]!), JSON.parse(bodies[0]!));
      expect(m.reparse("c", "anthropic", enc.encode(bodies[1]!))).not.toBeNull();
      const next = applyEdits(bodies[2]!, edits);
      const r = m.reparse("c", "anthropic", enc.encode(next));
      if (r !== null) expectExact(r, next);
    }),
    { numRuns: 1000 },
  );
});

test("non-ASCII text and escapes in the new part read as JSON.parse reads them", () => {
  const first = JSON.stringify(conversation(1));
  const next = JSON.stringify(conversation(2)).replace(
    "Now step 2.",
    "Jetzt Schritt 2 – “fertig” \\u00e9 \ufeff ☃",
  );
  expect(reparsed(first, next)).not.toBeNull();
  expect(dec.decode(enc.encode(next))).toBe(next);
});

test("the strings are extractTexts' with data fields, long keys, odd root keys and deep nesting", () => {
  const image = {
    type: "image",
    source: { type: "base64", media_type: "text/plain", data: btoa("x".repeat(80)) },
  };
  const deep = (n: number): unknown => (n === 0 ? "bottom" : { d: deep(n - 1) });
  const variants: [string, (t: number) => Record<string, unknown>][] = [
    ["a root key that sorts first", (t) => ({ ...conversation(t), "0": "zero", "12": ["twelve"] })],
    [
      "a __proto__ key",
      (t) =>
        JSON.parse(JSON.stringify(conversation(t)).replace('{"model"', '{"__proto__":{"x":"p"},"model"')),
    ],
    [
      "a long key with a digit",
      (t) => conversation(t, { tools: [{ name: "B", input_schema: { sk_live_1234567890abcdef: 1 } }] }),
    ],
    ["a long string before messages", (t) => ({ prompt: "p".repeat(80), ...conversation(t) })],
    [
      "data in a new message",
      (t) => {
        const c = conversation(t);
        (c.messages as unknown[]).push({ role: "user", content: [image, { type: "text", text: "see it" }] });
        return c;
      },
    ],
    [
      "a new message nested 300 deep",
      (t) => {
        const c = conversation(t);
        (c.messages as unknown[]).push({ role: "user", content: deep(300) });
        return c;
      },
    ],
  ];
  const seen: string[] = [];
  for (const [name, make] of variants) {
    const m = new TurnMemory();
    const first = JSON.stringify(make(1));
    m.remember("c", "anthropic", enc.encode(first), JSON.parse(first));
    for (let t = 2; t < 5; t++) {
      const next = JSON.stringify(make(t));
      const r = m.reparse("c", "anthropic", enc.encode(next));
      if (r === null) {
        m.remember("c", "anthropic", enc.encode(next), JSON.parse(next));
        continue;
      }
      expectExact(r, next);
      seen.push(`${name}${r.texts ? " with its strings" : ""}`);
    }
  }
  // Each was parsed from the previous turn; the strings too, but where they cannot be cut by message.
  expect(new Set(seen)).toEqual(
    new Set([
      "a root key that sorts first with its strings",
      "a __proto__ key with its strings",
      "a long key with a digit with its strings",
      "a long string before messages",
      "data in a new message with its strings",
      "a new message nested 300 deep",
    ]),
  );
});

test("the turns of a Responses body (input) and a Gemini body (contents) are parsed from the previous one too", () => {
  const shapes: [string, (t: number) => Record<string, unknown>][] = [
    [
      "input",
      (t) => ({
        type: "response.create",
        model: "gpt-5",
        input: Array.from({ length: t + 1 }, (_, i) => ({
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: `step ${i}` }],
        })),
        tools: [{ type: "function", name: "shell", description: "Runs a command. ".repeat(20) }],
      }),
    ],
    [
      "contents",
      (t) => ({
        contents: Array.from({ length: t + 1 }, (_, i) => ({ role: "user", parts: [{ text: `step ${i}` }] })),
        systemInstruction: { parts: [{ text: "You are Gemini CLI. ".repeat(20) }] },
      }),
    ],
  ];
  for (const [, make] of shapes) {
    const m = new TurnMemory();
    const first = JSON.stringify(make(1));
    m.remember("c", "openai", enc.encode(first), JSON.parse(first));
    for (let t = 2; t < 5; t++) {
      const next = JSON.stringify(make(t));
      const r = m.reparse("c", "openai", enc.encode(next));
      expect(r).not.toBeNull();
      expect(r!.json).toEqual(JSON.parse(next));
      expect(r!.texts).toEqual(extractTexts(JSON.parse(next), "openai").texts);
    }
  }
});

test("the same body again is the previous value, once that was checked", () => {
  const m = new TurnMemory();
  const body = JSON.stringify(conversation(2));
  m.remember("c", "anthropic", enc.encode(body), JSON.parse(body));
  const a = m.reparse("c", "anthropic", enc.encode(body));
  expect(a).not.toBeNull();
  expectExact(a!, body);
  const b = m.reparse("c", "anthropic", enc.encode(body));
  expect(b!.parsedBytes).toBe(0);
  expectExact(b!, body);
  // One byte changed anywhere is not the same body.
  const changed = body.replace("claude-sonnet-4-5", "claude-sonnet-4-6");
  expect(m.reparse("c", "anthropic", enc.encode(changed))).toBeNull();
});

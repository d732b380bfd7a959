/** The ASCII-escaped JSON source of a body: it parses to the same value as the decoded text, or is null. */
import { describe, expect, test } from "bun:test";
import { asciiJsonSource } from "../../src/payload/json-source.ts";

describe("asciiJsonSource", () => {
  const utf8 = new TextDecoder();
  const enc = new TextEncoder();
  const parse = (s: string): { ok: true; v: unknown } | { ok: false } => {
    try {
      return { ok: true, v: JSON.parse(s) };
    } catch {
      return { ok: false };
    }
  };
  let seed = 11;
  const rnd = (n: number) => {
    seed = (seed * 48271) % 2147483647;
    return seed % n;
  };
  const CHARS = [
    "a",
    "Z",
    " ",
    '"',
    "\\",
    "\n",
    "é",
    "’",
    "😀",
    "\ufeff",
    "\u2028",
    "中",
    "\u00a0",
    "{",
    "1",
  ];
  /** Mostly ASCII, like real bodies: one character in `every` from the whole set. */
  const randomText = (len: number, every = 40) =>
    Array.from({ length: len }, () => (rnd(every) === 0 ? CHARS[rnd(CHARS.length)] : "abc d{1"[rnd(7)])).join(
      "",
    );

  test("JSON with non-ASCII text: an ASCII source that parses to the same value", () => {
    let nonNull = 0;
    for (let round = 0; round < 200; round++) {
      const value = {
        model: "m",
        messages: Array.from({ length: 1 + rnd(4) }, () => ({
          role: "user",
          content: randomText(rnd(30_000), 3000),
        })),
        [randomText(3)]: [randomText(5), rnd(100)],
      };
      const bytes = enc.encode(JSON.stringify(value));
      const src = asciiJsonSource(bytes);
      if (src === null) continue; // more than 1/32 non-ASCII: the caller decodes as usual
      nonNull++;
      expect(/^[\x00-\x7f]*$/.test(src)).toBe(true);
      expect(JSON.parse(src)).toEqual(value);
    }
    expect(nonNull).toBeGreaterThan(100);
    expect(asciiJsonSource(enc.encode(JSON.stringify({ t: randomText(5000, 2) })))).toBeNull();
    const mostlyAscii = enc.encode(JSON.stringify({ t: `${"x".repeat(100_000)}’${"y".repeat(50_000)}😀` }));
    expect(JSON.parse(asciiJsonSource(mostlyAscii)!)).toEqual(JSON.parse(utf8.decode(mostlyAscii)));
  });

  test("any bytes: same parse result (value or failure) as decoding, or null", () => {
    const bad = [
      [0x80],
      [0xc3],
      [0xf0, 0x9f],
      [0xef, 0xbb, 0xbf],
      [0x5c, 0xc3, 0xa9],
      [0xff, 0xfe],
      [0xe2, 0x80, 0xa8],
    ];
    let nonNull = 0;
    for (let round = 0; round < 500; round++) {
      const base = enc.encode(
        JSON.stringify({ a: randomText(20_000 + rnd(200), 4000), b: [randomText(rnd(50))] }),
      );
      const out: number[] = [...base];
      for (let k = rnd(4); k > 0; k--) {
        // Anywhere, but often near the start (a byte order mark) or inside a string.
        const at = rnd(3) === 0 ? rnd(4) : rnd(out.length + 1);
        out.splice(at, 0, ...bad[rnd(bad.length)]!);
      }
      const bytes = Uint8Array.from(out);
      const src = asciiJsonSource(bytes);
      if (src === null) continue;
      nonNull++;
      expect(/^[\x00-\x7f]*$/.test(src)).toBe(true);
      expect(parse(src)).toEqual(parse(utf8.decode(bytes)));
    }
    expect(nonNull).toBeGreaterThan(50);
    // A byte order mark at the start, a non-ASCII character after a backslash: left to the decoder.
    expect(asciiJsonSource(Uint8Array.from([0xef, 0xbb, 0xbf, ...enc.encode("{}")]))).toBeNull();
    expect(asciiJsonSource(enc.encode('{"a":"\\é"}'))).toBeNull();
  });
});

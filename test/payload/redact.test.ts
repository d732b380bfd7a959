/** Byte-exact redaction of a raw body: JSON still parses, every byte but the matched ones unchanged. */
import { describe, expect, test } from "bun:test";
import { placeholder, redactJson, redactText } from "../../src/payload/redact.ts";

describe("redaction", () => {
  const value = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");
  test("only the matched characters change; escapes before the match are respected", () => {
    const raw = `{ "messages" : [ {"role":"user", "content":"line\\n\\u00e9\\"q\\" key=${value} end"} ],\n  "n": 1.50e3, "t": true }`;
    const parsed = JSON.parse(raw) as { messages: { content: string }[] };
    const text = parsed.messages[0]!.content;
    const start = text.indexOf(value);
    const out = redactJson(raw, [
      {
        path: "messages[0].content",
        start,
        end: start + value.length,
        replacement: placeholder("aws_access_key_id"),
      },
    ]);
    expect(out).toBe(raw.replace(value, "[REDACTED:aws_access_key_id]"));
    expect((JSON.parse(out) as typeof parsed).messages[0]!.content).toBe(
      text.replace(value, "[REDACTED:aws_access_key_id]"),
    );
  });

  test("several edits in one string and in several strings; overlaps merged; unknown paths ignored", () => {
    const raw = JSON.stringify({ a: "x SECRET1 y SECRET2 z", b: ["q SECRET3"] });
    const e = (path: string, s: string, from: number) => {
      const text = path === "a" ? "x SECRET1 y SECRET2 z" : "q SECRET3";
      const i = text.indexOf(s);
      return { path, start: i + from, end: i + s.length, replacement: "[R]" };
    };
    const out = redactJson(raw, [
      e("a", "SECRET2", 0),
      e("a", "SECRET1", 0),
      e("a", "SECRET1", 2),
      e("b[0]", "SECRET3", 0),
      { path: "zz", start: 0, end: 1, replacement: "[R]" },
    ]);
    expect(JSON.parse(out)).toEqual({ a: "x [R] y [R] z", b: ["q [R]"] });
  });

  test("plain text bodies", () => {
    expect(redactText("a KEY b", [{ path: "body", start: 2, end: 5, replacement: "[R]" }])).toBe("a [R] b");
  });

  test("plain text: overlapping edits are merged, the rest is kept", () => {
    const e = (start: number, end: number) => ({ path: "body", start, end, replacement: placeholder("t") });
    expect(redactText("aaaSECRETbbbSECRET", [e(3, 9), e(4, 8), e(12, 18)])).toBe(
      "aaa[REDACTED:t]bbb[REDACTED:t]",
    );
  });

  test("non-JSON input to redactJson throws (the scanner then blocks rather than leak)", () => {
    expect(() => redactJson("{nope", [{ path: "x", start: 0, end: 1, replacement: "[R]" }])).toThrow();
  });
});

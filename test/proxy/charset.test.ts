import { expect, test } from "bun:test";
import { declaredCharset, fromUtf8, isUtf8Charset, toUtf8 } from "../../src/proxy/charset.ts";

test("the declared charset is the Content-Type's, whichever came before it", () => {
  // Each in turn, and each again: the one remembered is only ever the last one read.
  const types: [string | null, string | null][] = [
    ["application/json", null],
    ["application/json; charset=UTF-16LE", "utf-16le"],
    ["application/json; charset=UTF-16LE", "utf-16le"],
    ['application/json; charset=" utf-32be "', "utf-32be"],
    ["application/json", null],
    ["not a type", null],
    ["application/json; charset=UTF-16LE", "utf-16le"],
    [null, null],
    ["text/plain;charset=us-ascii", "us-ascii"],
  ];
  for (const [type, charset] of [...types, ...[...types].reverse()])
    expect(declaredCharset(type)).toBe(charset);
  expect(isUtf8Charset(declaredCharset("text/plain;charset=us-ascii"))).toBe(true);
  expect(isUtf8Charset(declaredCharset("application/json; charset=utf-16le"))).toBe(false);
});

test("a UTF-16 body declared as such reads as UTF-8 and is written back the same way", () => {
  const json = '{"messages":[{"role":"user","content":"héllo"}]}';
  const bytes = new Uint8Array(Buffer.from(json, "utf16le"));
  const read = toUtf8(bytes, "application/json; charset=utf-16le");
  if (!read.ok) throw new Error(read.error);
  expect(new TextDecoder().decode(read.bytes)).toBe(json);
  expect(read.charset).toEqual({ name: "utf-16le", bom: false });
  expect(fromUtf8(read.bytes, read.charset!)).toEqual(bytes);
  // The same bytes declared as UTF-8 right after are not converted.
  expect(toUtf8(bytes, "application/json; charset=utf-8")).toEqual({ ok: true, bytes, charset: null });
});

/**
 * The WebAssembly character loop (src/detect/kernel.ts) against the JavaScript one (charPass): the
 * same hooked trigrams and base64 runs, in code units, for ASCII, Latin-1, BMP and astral text,
 * lone surrogates, and texts that cross the kernel's chunk boundaries; and the matcher finds the
 * same things with either loop.
 */
import { expect, test } from "bun:test";
import { defaults } from "../../src/config/files.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { compileRules } from "../../src/detect/compile.ts";
import { charKernel, RANGE, TRI_SPOT } from "../../src/detect/kernel.ts";
import { charPass } from "../../src/detect/loop.ts";
import { type Matcher, scanText } from "../../src/detect/matcher.ts";
import { rule } from "../helpers/records.ts";

const matcher = compileRules(loadBuiltinRules());
const jsOnly: Matcher = { ...matcher, byteHooks: false };
const enc = defaults().pipeline.encoding;

let seed = 20261122;
const rnd = (n: number) => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) % n;
};
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const secrets = [
  ["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].join(""),
  ["AKIA", "IOSFODNN7EXAMPLQ"].join(""),
  "password = Zx9vQ2mL7pR4tY8uW1eK5sN3bH6jC0dF",
  ["sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"].join(""),
  "mail bob@example.com",
  "4111 1111 1111 1111",
  "2001:db8:85a3::8a2e:370:7334",
];
const pieces = [
  () => secrets[rnd(secrets.length)]!,
  () => btoa(secrets[rnd(3)]!),
  () => Array.from({ length: rnd(40) }, () => B64[rnd(64)]).join(""),
  () => " \n\t=:\"'(){}".charAt(rnd(11)),
  () => "é",
  () => "—",
  () => "😀",
  () => "\ud800", // a lone surrogate
  () => "\udc00",
  () => "ǅ€中",
  () => "const token = getToken(); // ",
  () => String.fromCharCode(0x100 + rnd(0xff00)),
];
function randomText(parts: number): string {
  let s = "";
  for (let p = 0; p < parts; p++) s += pieces[rnd(pieces.length)]!();
  return s;
}

const triHash = (a: number, b: number, c: number) => ((a << 12) ^ (b << 6) ^ c) & ((1 << 18) - 1);

/**
 * What the JavaScript path finds: charPass's hooked positions, of which the spots (trigrams a class
 * anchor or an IPv6 spot accepts), and the literals there (mainLoop's checks: bigram slot, third character,
 * the literal from its start); and charPass's runs.
 */
function reference(text: string, rmin: number) {
  const hits: number[] = [];
  const runs: number[] = [];
  charPass(text, matcher.tri, rmin, hits, runs);
  const at3 = (p: number) => (p < text.length ? text.charCodeAt(p) & 255 : 0);
  const code = (p: number) => (p < text.length ? text.charCodeAt(p) : 0);
  const hex = (c: number) => /[0-9a-fA-F]/.test(String.fromCharCode(c));
  const spots = hits.filter(
    (p) =>
      (matcher.tri[triHash(at3(p), at3(p + 1), at3(p + 2))]! & TRI_SPOT) !== 0 &&
      (matcher.classAnchors.some((ca) => ca.c0[code(p)] && ca.c1[code(p + 1)] && ca.c2[code(p + 2)]) ||
        (matcher.letterDigitRules &&
          hex(code(p)) &&
          code(p + 1) === 58 &&
          (hex(code(p + 2)) || code(p + 2) === 58))),
  );
  const lits: string[] = [];
  for (const p of hits) {
    const slot = matcher.bigram[(at3(p) << 8) | at3(p + 1)]!;
    if (slot === 0 || matcher.third[(slot << 8) | at3(p + 2)] !== 1) continue;
    for (const al of matcher.bigramLits[slot]!) {
      const at = p - al.lead;
      const here = text.slice(at, at + al.lit.length);
      if (
        at >= 0 &&
        (al.lower === null ? here === al.lit : here.replace(/[A-Z]/g, (c) => c.toLowerCase()) === al.lower)
      )
        lits.push(`${at}:${al.lit}`);
    }
  }
  return { spots, lits, runs };
}

function kernelRun(text: string, rmin: number) {
  const runs: number[] = [];
  const r = charKernel()!.run(text, matcher, rmin, runs)!;
  const lits: string[] = [];
  for (let q = 0; q < r.lits.length; q += 2) lits.push(`${r.lits[q]}:${r.literals[r.lits[q + 1]!]!.lit}`);
  return { spots: [...r.spots], lits, runs };
}

test("the built-in rules hook on ASCII only, so the matcher uses the kernel", () => {
  expect(charKernel()).not.toBeNull();
  expect(matcher.byteHooks).toBe(true);
});

test("same spots, literals and runs as the JavaScript path on random text of every kind of character", () => {
  for (let t = 0; t < 1500; t++) {
    const text = randomText(1 + rnd(12));
    if (text.length < 2) continue;
    for (const rmin of [-1, 16, 27]) expect(kernelRun(text, rmin)).toEqual(reference(text, rmin));
  }
});

test("texts longer than a range: state carries over, positions stay in code units", () => {
  for (let t = 0; t < 12; t++) {
    // Filler up to near a range's end (in bytes: é and — are 2-3 bytes), then pieces across it.
    let text = "";
    const boundary = Math.floor((RANGE * (1 + rnd(3))) / (t % 2 ? 1 : 1.6));
    while (text.length < boundary - 40) text += rnd(4) === 0 ? "é—😀 " : "let x = y + 1;\n";
    text = text.slice(0, boundary - rnd(40));
    text += randomText(20) + "x".repeat(rnd(5)) + randomText(20);
    for (const rmin of [-1, 16]) expect(kernelRun(text, rmin)).toEqual(reference(text, rmin));
  }
  // A literal cut by a range's end (é is 2 bytes: RANGE / 2 of them fill one), a long literal, a
  // base64 run and a surrogate pair there.
  for (const cut of [-1, 0, 1, 2, 3, 4, 5, 8]) {
    const t = `${"é".repeat(RANGE / 2 - 1 - cut)}AKIAIOSFODNN7EXAMPLQ token = "${"x".repeat(20)}"`;
    expect(kernelRun(t, 16)).toEqual(reference(t, 16));
    expect(kernelRun(t, 16).lits.length).toBeGreaterThan(0);
  }
  const long = `${"a".repeat(RANGE - 20)}-----BEGIN OPENSSH PRIVATE KEY-----`;
  expect(kernelRun(long, 16)).toEqual(reference(long, 16));
  const a = `${"a ".repeat(RANGE / 2 - 10)}${"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo".repeat(2)} tail`;
  expect(kernelRun(a, 16)).toEqual(reference(a, 16));
  const b = `${"é".repeat(RANGE / 2 - 2)}😀${["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].join("")}`;
  expect(kernelRun(b, 16)).toEqual(reference(b, 16));
});

test("the matcher finds the same with the kernel as with the JavaScript loop", () => {
  const names = (e: Matcher, text: string) =>
    scanText(e, text, { encoding: enc }).map((m) => `${m.rule.name}@${m.start}-${m.end}:${m.decoded}`);
  let found = 0;
  for (let t = 0; t < 800; t++) {
    const text = randomText(1 + rnd(10));
    const got = names(matcher, text);
    expect(got).toEqual(names(jsOnly, text));
    found += got.length;
  }
  expect(found).toBeGreaterThan(300);
  // A secret after wide characters, and one past the first chunk, reported at code-unit offsets.
  const token = secrets[0]!;
  const text = `é—😀中 ${token}\n${"ü".repeat(RANGE + 7)} ${token}`;
  const starts = scanText(matcher, text, { encoding: null }).map((m) => m.start);
  expect(starts).toEqual([text.indexOf(token), text.lastIndexOf(token)]);
});

test("more spots or literals than a range's call can hold: the JavaScript loop takes over, same results", () => {
  const names = (e: Matcher, text: string) =>
    scanText(e, text, { encoding: null }).map((m) => `${m.rule.name}@${m.start}-${m.end}`);
  const key = ["AKIA", "IOSFODNN7EXAMPLQ"].join("");
  for (const fill of ["1:", "token "]) {
    const text = `${fill.repeat(RANGE / fill.length)} ${key}`;
    expect(charKernel()!.run(text, matcher, 16, [])).toBeNull();
    const got = names(matcher, text);
    expect(got).toEqual(names(jsOnly, text));
    expect(got.some((n) => n.startsWith("aws_access_key"))).toBe(true);
  }
});

test("a matcher with a non-ASCII literal keeps the JavaScript loop, and finds it", () => {
  const geheimnis = rule({
    name: "geheimnis",
    pattern: "Geheimnisü-[0-9]{8}",
    detector: "proprietary",
    severity: "warning",
    description: "test",
    tier: "custom",
    source: "config",
    tags: [],
  });
  const e = compileRules([geheimnis]);
  expect(e.byteHooks).toBe(false);
  const text = "xx Geheimnisü-12345678 yy";
  expect(scanText(e, text, { encoding: null }).map((m) => m.start)).toEqual([3]);
  const hits: number[] = [];
  charPass(text, e.tri, -1, hits, []);
  expect(hits).toContain(3);
});

/**
 * The matcher on its own: anchors chosen from patterns, capture group 1, keywords and entropy,
 * decoding (base64, hex, URL, unicode escapes; depth and length limits), segment bounds, per-rule
 * bounds, and the catastrophic-pattern check.
 */
import { describe, expect, test } from "bun:test";
import { defaults } from "../../src/config/files.ts";
import type { RuleDef } from "../../src/core/types.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { compileRules } from "../../src/detect/compile.ts";
import { shannonEntropy } from "../../src/detect/entropy.ts";
import { type EncodingOptions, MAX_MATCHES_PER_RULE, scanText } from "../../src/detect/matcher.ts";
import { checkUserPattern, compilePattern } from "../../src/detect/pattern.ts";
import { findAnchor, parseRegex } from "../../src/detect/regex-ast.ts";
import { lcg } from "../corpus/gen.ts";

const matcher = compileRules(loadBuiltinRules());
/** The decoding sluice runs with by default (every encoding on). */
const ENC: EncodingOptions = defaults().pipeline.encoding;
// Test values are assembled at run time so no credential-shaped literal sits in the source.
const AWS_ID = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");
const GH = ["ghp", "_", "EXAMPLE0fake1Key2For3Tests4Only5sluz"].join("");

const rule = (over: Partial<RuleDef>): RuleDef => ({
  name: "t",
  pattern: "x",
  detector: "custom",
  severity: "high",
  action: "",
  enabled: true,
  tier: "custom",
  source: "config",
  description: "",
  tags: [],
  ...over,
});
const names = (text: string, enc: EncodingOptions | null = null) =>
  scanText(matcher, text, { encoding: enc }).map((m) => m.rule.name);

describe("anchors", () => {
  test.each([
    ["\\b((?:AKIA|ASIA)[A-Z0-9]{16})\\b", ["AKIA", "ASIA"], 0],
    ["(?<![A-Za-z0-9._%+-])([A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[a-z]{2,8})", ["@"], 64],
    ["(?<![\\w.-])((?:[\\w.-]{1,64}/){0,4}[\\w-]{1,64}\\.(?:pem|p12))", [".pem", ".p12"], 324],
    ["xox[bp]-[0-9]{8}", ["xoxb-", "xoxp-"], 0],
  ])("%s", (src, lits, back) => {
    const a = findAnchor(parseRegex(src))!;
    expect(a.literals).toEqual(lits);
    expect(a.back).toBe(back);
  });
  test("trusted patterns starting with three small classes run where a class trigram fits (IBAN)", () => {
    const defs = [
      rule({ name: "word", source: "builtin", pattern: "\\b[A-Z]{2}[0-9]{2}[A-Z0-9]{4}\\b" }),
      rule({ name: "ci", source: "builtin", pattern: "(?i)\\b[a-k][p-z]\\d\\w{3}" }),
      rule({ name: "var", source: "builtin", pattern: "[A-Z]{1,2}[0-9]{3}" }),
      rule({ name: "user", pattern: "[A-Z]{2}[0-9]{2}" }),
    ];
    const e = compileRules(defs);
    expect(e.rules.map((r) => r.trigger)).toEqual(["class", "class", "full", "full"]);
    const text =
      "AB12CDEF at start, xAB12CDEF inside a word, ZZ99ZZZZ. bY7abc, CX1zzz, kz9_q1; QQ123 QQQ123 ÅB12CDEF";
    const naive = (t: string) =>
      defs.flatMap((d) =>
        [...t.matchAll(compilePattern(d.pattern, "g"))].map(
          (m) => `${d.name}@${m.index}-${m.index! + m[0].length}`,
        ),
      );
    const fast = (t: string, bounds?: number[]) =>
      scanText(e, t, { encoding: null, bounds }).map((m) => `${m.rule.name}@${m.start}-${m.end}`);
    expect(fast(text).sort()).toEqual(naive(text).sort());
    expect(fast("AB12CDEF").sort()).toEqual(["word@0-8", "user@0-4"].sort());
    // Two segments batched: a match never crosses the boundary, and both ends of each are seen.
    const a = "xx AB12";
    const b = "CDEF GH34IJKL";
    const joined = `${a}\n\u0000\n${b}`;
    expect(
      fast(joined, [0, a.length, a.length + 3, joined.length]).filter((m) => m.startsWith("word")),
    ).toEqual([`word@${a.length + 8}-${a.length + 16}`]);
  });

  test("patterns without a literal use the digit prefilter or a full pass", () => {
    const e = compileRules([
      rule({ name: "ssn", pattern: "\\b\\d{3}-\\d{2}-\\d{4}\\b" }),
      rule({ name: "word", pattern: "[A-Z]{3}[0-9]{3}" }),
    ]);
    expect(e.rules.map((r) => r.trigger)).toEqual(["digits", "full"]);
    expect(
      scanText(e, "id 123-45-6789 and ABC123", { encoding: null })
        .map((m) => m.rule.name)
        .sort(),
    ).toEqual(["ssn", "word"]);
  });
});

describe("matching", () => {
  test("offsets are UTF-16 offsets of the value; capture group 1 is preferred", () => {
    const text = `é✓ key ${AWS_ID} and postgres://app:Xk9mQ2vL7pR4tY8@db.internal:5432/x`;
    const ms = scanText(matcher, text, { encoding: null });
    const aws = ms.find((m) => m.rule.name === "aws_access_key_id")!;
    expect(text.slice(aws.start, aws.end)).toBe(AWS_ID);
    const db = ms.find((m) => m.rule.name === "database_url_password")!;
    expect(db.value).toBe("Xk9mQ2vL7pR4tY8");
    expect(text.slice(db.start, db.end)).toBe("Xk9mQ2vL7pR4tY8");
  });
  test("keywords must be near: an AWS secret key needs an AWS keyword", () => {
    const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEQ";
    expect(names(`value ${secret}`)).not.toContain("aws_secret_access_key");
    expect(names(`aws_secret_access_key=${secret}`)).toContain("aws_secret_access_key");
    expect(names(`${AWS_ID} ${secret}`)).toContain("aws_secret_access_key");
    expect(names(`aws_secret_access_key=${"x".repeat(400)} ${secret}`)).not.toContain(
      "aws_secret_access_key",
    );
  });
  test("randomness judged against the length: short passwords count, identifiers and hex digests do not", () => {
    expect(names('DB_PASSWORD="Tq7#vR2m!pL9"')).toContain("generic_secret_assignment");
    expect(names('password = "MyDatabasePassword1"')).not.toContain("generic_secret_assignment");
    expect(names("token: this.options.accessTokenValue")).not.toContain("generic_secret_assignment");
    expect(names('setProperty("API_TOKEN", "k9Tz2QmX4vLp8RwN")')).toContain("generic_secret_assignment");
    for (const v of ["your-api-key-here", "changeme", "<token>", "process.env.API_TOKEN", "xxxx1234xxxx5678"])
      expect({ v, found: names(`api_token = "${v}"`) }).toEqual({ v, found: [] });
    expect(names(`aws_access_key_id = ${["AKIA", "IOSFODNN7", "EXAMPLE"].join("")}`)).toEqual([]);
  });
  test("entropy: values assigned to secret-like keys must look random", () => {
    expect(shannonEntropy("aaaa")).toBe(0);
    expect(shannonEntropy("abcd")).toBe(2);
    expect(names('password = "Zx9vQ2mL7pR4tY8uW1eK5sN3bH6jC0dF"')).toContain("generic_secret_assignment");
    expect(names('password = "correct-horse-battery-staple"')).not.toContain("generic_secret_assignment");
    expect(names("api_key: 0123456789abcdef0123456789abcdef")).not.toContain("generic_secret_assignment");
    expect(names("my_secret_token := Qm8ZpL2vX7rT4nW9kH3jB6cY1dF5gS0a")).toContain(
      "generic_secret_assignment",
    );
  });
  test("entropy: the ASCII fast path gives the same bits as counting code points in a Map", () => {
    const reference = (v: string) => {
      const counts = new Map<string, number>();
      for (const ch of v) counts.set(ch, (counts.get(ch) ?? 0) + 1);
      let h = 0;
      for (const c of counts.values()) h -= (c / v.length) * Math.log2(c / v.length);
      return h;
    };
    const rnd = lcg(7);
    const alphabets = [
      "ab",
      "0123456789abcdef",
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-",
      "aé😀",
    ];
    for (let t = 0; t < 3000; t++) {
      const a = [...alphabets[t % alphabets.length]!];
      const v = Array.from({ length: 1 + rnd(80) }, () => a[rnd(a.length)]).join("");
      expect(Object.is(shannonEntropy(v), reference(v))).toBe(true);
    }
  });
  test("placeholders are not secrets", () => {
    expect(names("ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")).toEqual([]);
    expect(names(GH)).toEqual(["github_pat"]);
  });
});

describe("decoding", () => {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  test("base64, hex, URL and unicode escapes are decoded and the finding says so", () => {
    const cases: [string, string][] = [
      [`config: ${b64(`aws_access_key_id=${AWS_ID}`)}`, "base64"],
      [`blob ${Buffer.from(`token ${GH}`).toString("hex")}`, "hex"],
      [`https://x.test/?q=${encodeURIComponent(`key=${GH}&x=1`)}`, "url"],
      [
        `s = "${[...GH].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}"`,
        "unicode",
      ],
      [`b64url ${Buffer.from(`id ${AWS_ID} ok??>`).toString("base64url")}`, "base64"],
    ];
    for (const [text, kind] of cases) {
      const ms = scanText(matcher, text, { encoding: ENC });
      const m = ms.find((x) => x.decoded !== null);
      expect(m?.decoded).toBe(kind);
      expect(text.slice(m!.start, m!.end).length).toBeGreaterThan(10);
      expect(
        scanText(matcher, text, { encoding: null }).filter((x) => x.rule.detector === "secrets"),
      ).toEqual([]);
    }
  });
  test("nested encodings up to max_depth", () => {
    const twice = b64(`note: ${b64(`key ${GH}`)}`);
    expect(scanText(matcher, twice, { encoding: ENC }).map((m) => m.decoded)).toContain("base64>base64");
    expect(
      scanText(matcher, twice, { encoding: { ...ENC, max_depth: 1 } }).filter(
        (m) => m.rule.name === "github_pat",
      ),
    ).toEqual([]);
    const thrice = b64(`a ${twice} b`);
    expect(scanText(matcher, thrice, { encoding: ENC }).filter((m) => m.rule.name === "github_pat")).toEqual(
      [],
    );
    expect(scanText(matcher, thrice, { encoding: { ...ENC, max_depth: 3 } }).map((m) => m.decoded)).toContain(
      "base64>base64>base64",
    );
  });
  test("decoded length limits and switches", () => {
    const text = `x ${b64(`key ${GH}`)}`;
    expect(scanText(matcher, text, { encoding: { ...ENC, max_decoded_length: 20 } }).length).toBe(0);
    expect(scanText(matcher, text, { encoding: { ...ENC, base64: false } }).length).toBe(0);
    expect(scanText(matcher, text, { encoding: { ...ENC, min_decoded_length: 100 } }).length).toBe(0);
  });
  test("binary base64 (an image) is not scanned as text", () => {
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.alloc(300, 7),
    ]);
    expect(scanText(matcher, `data:image/png;base64,${png.toString("base64")}`, { encoding: ENC })).toEqual(
      [],
    );
  });
});

describe("segment bounds", () => {
  test("windows, keywords and matches stay inside one segment", () => {
    const a = "aws_secret_access_key is below";
    const b = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEQ";
    const joined = `${a}\n\u0000\n${b}`;
    const bounds = [0, a.length, a.length + 3, joined.length];
    expect(scanText(matcher, joined, { encoding: null }).map((m) => m.rule.name)).toContain(
      "aws_secret_access_key",
    );
    expect(scanText(matcher, joined, { encoding: null, bounds }).map((m) => m.rule.name)).not.toContain(
      "aws_secret_access_key",
    );
  });
  test("a private key cut at the end of its segment is still found, without the next segment", () => {
    const key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAexampleEXAMPLEexample0123456789";
    const next = "-----END RSA PRIVATE KEY-----";
    const joined = `${key}\n\u0000\n${next}`;
    const ms = scanText(matcher, joined, {
      encoding: null,
      bounds: [0, key.length, key.length + 3, joined.length],
    });
    const m = ms.find((x) => x.rule.name === "private_key")!;
    expect(m.end).toBeLessThanOrEqual(key.length);
  });
});

describe("bounded work", () => {
  test("no rule produces more than MAX_MATCHES_PER_RULE matches", () => {
    const e = compileRules([rule({ name: "every", pattern: "ab" })]);
    expect(scanText(e, "ab ".repeat(5000), { encoding: null }).length).toBe(MAX_MATCHES_PER_RULE);
  });
  test("catastrophic patterns are rejected with a clear message", () => {
    for (const p of [
      "(a+)+$",
      "(\\w+\\s?)+$",
      "(a|aa)+$",
      "(x+x+)+y",
      "[A-Za-z0-9._%+-]+@example\\.com",
      "\\d+\\d+\\d+z",
    ]) {
      const r = checkUserPattern(p);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toMatch(/backtrack catastrophically/);
    }
    expect(checkUserPattern("([a-z")).toEqual({
      ok: false,
      error: expect.stringMatching(/does not compile/),
    });
    expect(checkUserPattern("a*")).toEqual({ ok: false, error: expect.stringMatching(/matches empty text/) });
    expect(checkUserPattern("")).toEqual({ ok: false, error: "pattern is empty" });
    for (const p of [
      "SLT-[0-9]{6}-[A-Z]{4}",
      "(?i)secret[_-]?key\\s*=\\s*(\\S{8,64})",
      "\\bAKIA[0-9A-Z]{16}\\b",
      "sk-[a-zA-Z0-9]{20,}",
    ])
      expect(checkUserPattern(p)).toEqual({ ok: true });
  });
});

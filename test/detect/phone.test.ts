/**
 * The phone_number validator (libphonenumber-js behind it) and the phone rules as a scan meets them:
 * numbers of every supported country in the formats people write, what is skipped by design
 * (fiction ranges, the library's example numbers, placeholders, dates and addresses), and that the
 * library is loaded only once a candidate appears.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { scanText } from "../../src/detect/matcher.ts";
import { NATIONAL_WITH_ZERO, NATIONAL_WITHOUT_ZERO, phoneNumber } from "../../src/detect/phone.ts";
import { compileMatcher } from "../../src/detect/snapshot.ts";
import { Gen } from "../corpus/gen.ts";
import { PHONE_COUNTRIES, phoneOf } from "../corpus/kinds/phones.ts";

const ROOT = join(import.meta.dir, "..", "..");
const matcher = compileMatcher(loadBuiltinRules());
const phones = (text: string) =>
  scanText(matcher, text, { encoding: null })
    .filter((m) => m.rule.name.startsWith("phone_number"))
    .map((m) => m.value);

describe("phone_number validator", () => {
  test.each([
    ["+1-415-867-5309", true],
    ["+44 20 7123 4567", true],
    ["+49 (0)30 2345 6789", true],
    ["(212) 736-5000", true], // US national
    ["030 2345 6789", true], // DE national, trunk prefix 0
    ["06 12 34 56 78", false], // FR: 0612345678 is the library's French example number
    ["06 22 81 47 39", true],
    ["612 34 56 78", false], // ES: the library's Spanish example number
    ["622 81 47 39", true], // ES, written without a trunk prefix
    ["+1 212 555 0134", false], // 555-0100..0199: reserved for fiction
    ["+44 20 7946 0958", false], // UK drama range
    ["+44 7700 900123", false], // UK drama range (mobile)
    ["+61 491 570 156", false], // Australian fiction range
    ["0123 456 789", false], // placeholder run of digits
    ["(555) 555-5555", false], // two distinct digits
    ["2024-01-15", false], // a date
    ["15.01.2024", false],
    ["34.120.8.8", false], // an IPv4 address
    ["1234567", false], // too short for any plan here
    ["+1 555 555 555", false], // not a valid North American number
    ["12345678", false], // bare digits only fit plans that would need a trunk prefix
  ])("%s → %p", (v, ok) => expect(phoneNumber(v)).toBe(ok));

  test("at least 20 countries' national formats, each number found in the prose it is written in", () => {
    const countries = new Set([...NATIONAL_WITH_ZERO, ...NATIONAL_WITHOUT_ZERO]);
    expect(countries.size).toBeGreaterThanOrEqual(20);
    const g = new Gen(12);
    for (const country of PHONE_COUNTRIES) {
      for (let i = 0; i < 8; i++) {
        const v = phoneOf(g, country);
        expect([country, phoneNumber(v)]).toEqual([country, true]);
        expect([country, phones(`my phone number is ${v}.`)]).toEqual([country, [v]]);
      }
    }
  });
});

describe("phone rules in text", () => {
  test("found after a phone word in many languages and shapes", () => {
    expect(phones('{"name": "Ana", "phone": "+34 622 81 47 39", "created": "2026-03-14T09:12:44Z"}')).toEqual(
      ["+34 622 81 47 39"],
    );
    expect(phones("users:\n  - name: Sven\n    mobile: 070-381 27 94\n")).toEqual(["070-381 27 94"]);
    expect(phones("INFO notify.sms send to=+4917612345670 status=queued")).toEqual(["+4917612345670"]);
    expect(phones("if it breaks call me at (212) 736-5000 tonight")).toEqual(["(212) 736-5000"]);
    expect(phones("SUPPORT_PHONE=+14158675309")).toEqual(["+14158675309"]);
    expect(phones("Telefonnummer: 030 2345 6789")).toEqual(["030 2345 6789"]);
    expect(phones("電話：03-3224-9999")).toEqual(["03-3224-9999"]);
  });

  test("not after a phone word: versions, dates, timestamps, addresses, ids and hashes", () => {
    for (const text of [
      "phone firmware 2.14.3.1",
      "phone updated 2024-01-15T10:30:00Z",
      "mobile breakpoint 768-1024px",
      "tel server 10.0.3.7",
      "phone_id 550e8400-e29b-41d4-a716-446655440000",
      "phone sha 3f786850e387550fdab836ed7e6dc881de23001b",
      "hotel 020 7123 4567",
      "+1 415 867 5309 without any phone word",
    ])
      expect([text, phones(text)]).toEqual([text, []]);
  });

  test("not in code that handles phone numbers: call arguments, assertions, comments, source maps", () => {
    for (const text of [
      "parsePhoneNumber('+1 415 867 5309')",
      "formatNumber({ country: 'US', phone: '4158675309' }, 'NATIONAL')",
      "expect(parseNumber('Phone: +1-415-867-5309.')).toEqual(x)",
      "phoneNumber.number === '+14158675309'",
      "// phone : '4158675309',",
      " * @param phone - e.g. +1 415 867 5309",
      "{\"sourcesContent\":[\"it('parses', () => {\\n\\t\\t\\tphone : '4158675309',\\n\"]}",
    ])
      expect([text, phones(text)]).toEqual([text, []]);
  });
});

test("libphonenumber-js is loaded on the first candidate, not before", () => {
  const script = `
    import { loadBuiltinRules } from "./src/detect/builtin.ts";
    import { compileMatcher } from "./src/detect/snapshot.ts";
    import { scanText } from "./src/detect/matcher.ts";
    const loaded = () => Object.keys(require.cache).some((k) => k.includes("libphonenumber"));
    const m = compileMatcher(loadBuiltinRules());
    scanText(m, "phone firmware 2.14.3.1, id 1234567890, call me later", { encoding: null });
    const before = loaded();
    scanText(m, "call me at +1 415 867 5309", { encoding: null });
    console.log(JSON.stringify([before, loaded()]));
  `;
  const r = Bun.spawnSync(["bun", "-e", script], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(r.stderr.toString()).toBe("");
  expect(JSON.parse(r.stdout.toString())).toEqual([false, true]);
});

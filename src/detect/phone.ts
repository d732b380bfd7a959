/**
 * The `phone_number` validator: a candidate the rule's cheap pattern found (digits and separators
 * after a phone word) is a phone number when libphonenumber-js says it is valid in the numbering
 * plan of its country. Written with a leading `+` the country code says which plan; written as it
 * is dialled inside a country, it is tried against the national plans of the countries below.
 * Numbering plans change every month and differ per country: they are the library's data, never our
 * own patterns.
 *
 * The library and its "max" metadata (digit patterns per number type, not only lengths) are loaded
 * on the first candidate, so a scan or a proxy that never meets one never pays for them.
 *
 * Not a person's number, so not reported: numbers set aside for fiction and documentation
 * (FICTIONAL), the library's own example numbers (what documentation and tests of phone code use),
 * placeholders such as 0123 456 789, and shapes that are dates or IPv4 addresses.
 */
import type { CountryCode, PhoneNumber } from "libphonenumber-js/max";

type PhoneLib = typeof import("libphonenumber-js/max");

/**
 * Countries whose national formats are recognised, by how a number is written inside the country:
 * with the trunk prefix 0 (030 1234567, 06 12 34 56 78) or without one (415-867-5309, 612 34 56 78).
 * A national candidate is tried only against the plans that write it that way: a plan also accepts
 * its numbers without their trunk prefix, and 8 to 10 bare digits fit some plan far too often.
 */
export const NATIONAL_WITH_ZERO: readonly CountryCode[] = [
  "GB",
  "DE",
  "FR",
  "NL",
  "BE",
  "CH",
  "AT",
  "SE",
  "FI",
  "IE",
  "AU",
  "NZ",
  "JP",
  "ZA",
  "IN",
  "BR",
  "IT",
  "CN",
  "KR",
  "TW",
];
export const NATIONAL_WITHOUT_ZERO: readonly CountryCode[] = [
  "US",
  "CA",
  "ES",
  "IT",
  "PT",
  "PL",
  "DK",
  "NO",
  "SG",
  "MX",
  "IN",
  "BR",
  "CN",
  "HK",
];

/**
 * Ranges reserved for films, books and documentation, as E.164 prefixes followed by the count of
 * digits that may follow: North America 555-0100 to 555-0199 (any area code), the UK regulator's
 * drama numbers, and the Australian regulator's fictional ranges.
 */
const FICTIONAL = [
  /^\+1[2-9]\d{2}55501\d{2}$/,
  /^\+44(?:11[3-8]4960|1214960|1314960|1414960|1514960|1614960|1914980|2079460|2890180|2920180|1632960|7700900|8081570|9098790|3069990)\d{3}$/,
  /^\+61(?:25550|37010|75550|87010)\d{4}$/,
  /^\+6149157\d{4}$/,
];

/** Dates (2024-01-15, 15.01.2024) and IPv4 addresses: digit shapes a phone word may stand near. */
const NOT_A_NUMBER =
  /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{4}|\d{1,3}(?:\.\d{1,3}){3})$/;

let lib: PhoneLib | null = null;
/** The library's example number of each country, as its national significant number. */
let examples: Record<string, string> | null = null;

function phoneLib(): PhoneLib {
  if (lib === null) {
    // Loaded on the first candidate, synchronously: validators run inside the matcher's loop.
    lib = require("libphonenumber-js/max") as PhoneLib;
    examples = require("libphonenumber-js/examples.mobile.json") as Record<string, string>;
  }
  return lib;
}

/**
 * The numbers `value` stands for in the plans that accept it: its own plan when written with `+`,
 * otherwise every national plan below that writes numbers the way it is written (a German and a
 * French reading of 06 12 34 56 78 are both kept).
 */
export function parsePhone(value: string): PhoneNumber[] {
  const { parsePhoneNumberFromString } = phoneLib();
  if (value.startsWith("+")) {
    const p = parsePhoneNumberFromString(value);
    return p?.isValid() ? [p] : [];
  }
  const out: PhoneNumber[] = [];
  for (const country of /^\D*0/.test(value) ? NATIONAL_WITH_ZERO : NATIONAL_WITHOUT_ZERO) {
    const p = parsePhoneNumberFromString(value, country);
    if (p?.isValid()) out.push(p);
  }
  return out;
}

/** True when a number is fictional, the library's example for its country or a placeholder run. */
export function isDocumentationNumber(p: PhoneNumber): boolean {
  const national = p.nationalNumber;
  if (FICTIONAL.some((re) => re.test(p.number))) return true;
  phoneLib();
  if (p.country !== undefined && examples![p.country] === national) return true;
  if (new Set(national).size <= 2) return true; // 555 555 5555, 000 000 0000
  return "01234567890123456789".includes(national) || "98765432109876543210".includes(national);
}

/**
 * phone_number: a valid number of a real numbering plan that is not fictional or a placeholder in
 * any plan that accepts it.
 */
export function phoneNumber(value: string): boolean {
  const digits = value.replace(/\D/g, "");
  if (digits.length < 8 || digits.length > 15) return false;
  if (NOT_A_NUMBER.test(value)) return false;
  const readings = parsePhone(value);
  return readings.length > 0 && !readings.some(isDocumentationNumber);
}

/**
 * Checks a candidate value must pass after its pattern matched (a rule's `validator`).
 * Each takes the matched value as it appears in the text and returns true when it is a real one.
 */
import type { ValidatorName } from "../core/types.ts";
import { emailAddress } from "./email.ts";
import { looksRandom } from "./entropy.ts";
import { phoneNumber } from "./phone.ts";
import { base58CheckWif, base58CheckXprv, bip39Checksum, secp256k1Key } from "./wallet-keys.ts";

/** Card numbers published by payment processors for testing; never a real customer's card. */
const TEST_CARDS = new Set([
  "4111111111111111",
  "4242424242424242",
  "4012888888881881",
  "4222222222222",
  "4000056655665556",
  "4000000000000002",
  "4000000000000077",
  "4000000000003220",
  "5555555555554444",
  "5105105105105100",
  "5200828282828210",
  "2223003122003222",
  "378282246310005",
  "371449635398431",
  "378734493671000",
  "6011111111111117",
  "6011000990139424",
  "6011000000000004",
  "3530111333300000",
  "3566002020360505",
]);

/** Luhn checksum over the digits of `value` (separators ignored); 13 to 19 digits; test numbers rejected. */
export function luhn(value: string): boolean {
  const digits = value.replace(/[\s-]/g, "");
  if (!/^\d{13,19}$/.test(digits)) return false;
  if (TEST_CARDS.has(digits)) return false;
  if (/^(\d)\1+$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * US SSN ranges: area not 000, 666 or 900-999; group not 00; serial not 0000. Also rejects the
 * numbers famously printed in advertising (078-05-1120) and the 123-45-6789 style is allowed.
 */
export function ssnRange(value: string): boolean {
  const m = /^(\d{3})[-. ]?(\d{2})[-. ]?(\d{4})$/.exec(value);
  if (!m) return false;
  const area = Number(m[1]);
  if (area === 0 || area === 666 || area >= 900) return false;
  if (m[2] === "00" || m[3] === "0000") return false;
  if (value.replace(/\D/g, "") === "078051120") return false;
  return true;
}

/** IBAN length per country (ISO 13616 registry). */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

/**
 * The example IBANs of the IBAN registry and of the banks' own documentation, which validator
 * tests and tutorials copy: never someone's account.
 */
const EXAMPLE_IBANS = new Set([
  "AD1200012030200359100100",
  "AT611904300234573201",
  "BE68539007547034",
  "BE71096123456769",
  "CH9300762011623852957",
  "CY17002001280000001200527600",
  "CZ6508000000192000145399",
  "DE89370400440532013000",
  "DK5000400440116243",
  "EE382200221020145685",
  "ES9121000418450200051332",
  "FI2112345600000785",
  "FR1420041010050500013M02606",
  "FR7630006000011234567890189",
  "GB29NWBK60161331926819",
  "GB82WEST12345698765432",
  "GR1601101250000000012300695",
  "HR1210010051863000160",
  "HU42117730161111101800000000",
  "IE29AIBK93115212345678",
  "IT60X0542811101000000123456",
  "LT121000011101001000",
  "LU280019400644750000",
  "LV80BANK0000435195001",
  "MT84MALT011000012345MTLCAST001S",
  "NL91ABNA0417164300",
  "NO9386011117947",
  "PL61109010140000071219812874",
  "PT50000201231234567890154",
  "RO49AAAA1B31007593840000",
  "SE4550000000058398257466",
  "SI56263300012039086",
  "SK3112000000198742637541",
  "TR330006100519786457841326",
]);

/** IBAN: known country, that country's length, and MOD-97 of the rearranged number equal to 1. */
export function ibanMod97(value: string): boolean {
  const iban = value.replace(/[\s-]/g, "").toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban)) return false;
  const len = IBAN_LENGTHS[iban.slice(0, 2)];
  if (len === undefined || iban.length !== len) return false;
  if (EXAMPLE_IBANS.has(iban)) return false;
  // An account number of zeros with a digit or three set (DE00000000000000000066) is made up.
  if (iban.slice(4).replace(/[^1-9]/g, "").length < 4) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let rem = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const v = code >= 65 ? code - 55 : code - 48;
    rem = v >= 10 ? (rem * 100 + v) % 97 : (rem * 10 + v) % 97;
  }
  return rem === 1;
}

function ipv4Octets(value: string): number[] | null {
  const parts = value.split(".");
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p[0] === "0")) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

/** True when an IPv4 address is public: not private, loopback, link-local, CGNAT, documentation, multicast or reserved. */
export function publicIpv4(value: string): boolean {
  const o = ipv4Octets(value);
  if (!o) return false;
  const [a, b, c] = o as [number, number, number, number];
  if (a === 0 || a === 10 || a === 127) return false; // "this" network, private, loopback
  if (a === 100 && b >= 64 && b <= 127) return false; // CGNAT 100.64/10
  if (a === 169 && b === 254) return false; // link-local
  if (a === 172 && b >= 16 && b <= 31) return false; // private
  if (a === 192 && b === 168) return false; // private
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false; // IETF protocol, TEST-NET-1
  if (a === 198 && (b === 18 || b === 19)) return false; // benchmarking
  if (a === 198 && b === 51 && c === 100) return false; // TEST-NET-2
  if (a === 203 && b === 0 && c === 113) return false; // TEST-NET-3
  if (a >= 224) return false; // multicast, reserved, broadcast
  return true;
}

/** Expand an IPv6 text form into 8 hextets, or null when it is not one. */
export function parseIpv6(value: string): number[] | null {
  if (!/^[0-9a-fA-F:]+$/.test(value) || value.length < 2) return null;
  const halves = value.split("::");
  if (halves.length > 2) return null;
  const part = (s: string) => (s === "" ? [] : s.split(":"));
  const head = part(halves[0]!);
  const tail = halves.length === 2 ? part(halves[1]!) : [];
  const all = [...head, ...tail];
  if (all.some((h) => !/^[0-9a-fA-F]{1,4}$/.test(h))) return null;
  if (halves.length === 1 && all.length !== 8) return null;
  if (halves.length === 2 && all.length > 7) return null;
  const fill = 8 - all.length;
  return [...head, ...Array(halves.length === 2 ? fill : 0).fill("0"), ...tail].map((h) =>
    Number.parseInt(h, 16),
  );
}

/** True when an IPv6 address is public (global unicast outside documentation and special ranges). */
export function publicIpv6(value: string): boolean {
  const h = parseIpv6(value);
  if (!h) return false;
  const first = h[0]!;
  if (h.every((x) => x === 0)) return false; // ::
  if (h.slice(0, 7).every((x) => x === 0) && h[7] === 1) return false; // ::1
  if ((first & 0xe000) !== 0x2000) return false; // only 2000::/3 is global unicast
  if (first === 0x2001 && h[1] === 0x0db8) return false; // documentation
  if (first === 0x2001 && h[1]! < 0x0200) return false; // IETF protocol assignments (Teredo, ORCHID, …)
  if (first === 0x2002) return false; // 6to4 carries an IPv4 address, judged elsewhere
  if (first === 0x3fff && h[1]! < 0x1000) return false; // documentation (RFC 9637)
  return true;
}

/**
 * Public resolvers that documentation and code use as the standard example of an address (Google,
 * Cloudflare, Quad9, OpenDNS): they say nothing about a person.
 */
const WELL_KNOWN_RESOLVERS = new Set([
  "8.8.8.8",
  "8.8.4.4",
  "1.1.1.1",
  "1.0.0.1",
  "9.9.9.9",
  "149.112.112.112",
  "208.67.222.222",
  "208.67.220.220",
  "2001:4860:4860::8888",
  "2001:4860:4860::8844",
  "2606:4700:4700::1111",
  "2606:4700:4700::1001",
]);

/**
 * Addresses of the reserved example domains (example.com, .net, .org): what documentation resolves
 * when it shows a lookup.
 */
const EXAMPLE_DOMAIN_ADDRESSES = new Set([
  "93.184.216.34",
  "93.184.215.14",
  "2606:2800:220:1:248:1893:25c8:1946",
  "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
]);

/**
 * Addresses people make up: one octet repeated (123.123.123.123), counting up (1.2.3.4, 2.3.4.5)
 * or mirrored (222.111.111.222); and a network's own address (x.x.x.0), which names no host.
 */
function madeUpIpv4(value: string): boolean {
  const o = value.split(".").map(Number);
  if (o.length !== 4) return false;
  const [a, b, c, d] = o as [number, number, number, number];
  if (d === 0) return true;
  if (a === b && b === c && c === d) return true;
  if (b === a + 1 && c === b + 1 && d === c + 1) return true;
  return a === d && b === c;
}

/**
 * exclude_private_ips: keep only public IPv4/IPv6 addresses that are not a well-known resolver, an
 * address of the example domains or a made-up one.
 */
export function excludePrivateIps(value: string): boolean {
  const v = value.toLowerCase();
  if (WELL_KNOWN_RESOLVERS.has(v) || EXAMPLE_DOMAIN_ADDRESSES.has(v)) return false;
  return value.includes(":") ? publicIpv6(value) : publicIpv4(value) && !madeUpIpv4(value);
}

/** Credentials of documentation and tutorials, as `user:password` decoded from Basic auth. */
const PLACEHOLDER_LOGINS =
  /^(?:[<{$%].*|[^:]*:[<{$%*].*|(?:user(?:name)?|login|foo|admin|test|me|name|id|client_?id):(?:pass(?:word)?|passwd|pwd|secret|bar|test|changeme|token|x+))$/i;

/**
 * basic_auth: base64 of `user:password` (HTTP Basic, Docker `auth`), printable, with a password, and not
 * a documentation login such as `user:pass` or `username:password`.
 */
export function basicAuth(value: string): boolean {
  let text: string;
  try {
    text = atob(value.replace(/=+$/, "").padEnd(Math.ceil(value.replace(/=+$/, "").length / 4) * 4, "="));
  } catch {
    return false;
  }
  const colon = text.indexOf(":");
  if (colon < 1 || colon === text.length - 1) return false;
  if (!/^[\x20-\x7e]+$/.test(text)) return false;
  return !PLACEHOLDER_LOGINS.test(text);
}

/** login_pair: `user:password` as written in text (curl -u), not a documentation login. */
export function loginPair(value: string): boolean {
  const colon = value.indexOf(":");
  return colon > 0 && colon < value.length - 1 && !PLACEHOLDER_LOGINS.test(value);
}

export const VALIDATOR_FNS: Record<ValidatorName, (value: string) => boolean> = {
  luhn,
  ssn_range: ssnRange,
  iban_mod97: ibanMod97,
  exclude_private_ips: excludePrivateIps,
  basic_auth: basicAuth,
  login_pair: loginPair,
  bip39_checksum: bip39Checksum,
  base58check_wif: base58CheckWif,
  base58check_xprv: base58CheckXprv,
  secp256k1_key: secp256k1Key,
  random_secret: looksRandom,
  phone_number: phoneNumber,
  email_address: emailAddress,
};

/**
 * Phone numbers of 26 countries, as developers meet them: a JSON user record, a YAML fixture, a log
 * line, prose ("call me at …"), a .env line, besides the shared contexts. Each number is drawn from
 * a country's numbering plan (a national significant number template, its free digits random) and
 * kept only when libphonenumber-js says it is valid; it is written in the country's national format,
 * its international format or E.164. Fictional ranges and the library's example numbers are never
 * drawn (the rule skips them by design).
 */

import examples from "libphonenumber-js/examples.mobile.json";
import { type CountryCode, parsePhoneNumberFromString } from "libphonenumber-js/max";
import { type Kind, TEXTUAL } from "../contexts.ts";
import type { Gen } from "../gen.ts";

/** Per country, templates of national significant numbers: `#` is a random digit. */
const PLANS: [CountryCode, string[]][] = [
  ["US", ["212#######", "415#######", "312#######", "617#######", "206#######"]],
  ["CA", ["416#######", "604#######", "514#######"]],
  ["GB", ["207#######", "161#######", "7[1-9]########"]],
  ["DE", ["30########", "89#######", "151########", "176########"]],
  ["FR", ["1########", "6########", "7########"]],
  ["ES", ["6########", "91#######"]],
  ["IT", ["3#########", "06########"]],
  ["NL", ["6########", "20#######"]],
  ["BE", ["47#######", "2#######"]],
  ["CH", ["7[5-9]#######", "44#######"]],
  ["AT", ["664#######", "1#######"]],
  ["SE", ["7[0236]#######", "8#######"]],
  ["NO", ["4#######", "9#######"]],
  ["DK", ["2#######", "3#######"]],
  ["FI", ["40#######", "9#######"]],
  ["PL", ["5########", "22#######"]],
  ["PT", ["9[1236]#######", "21#######"]],
  ["IE", ["8[5-7]#######", "1#######"]],
  ["AU", ["4########", "2########"]],
  ["NZ", ["21#######", "9#######"]],
  ["IN", ["9#########", "8#########"]],
  ["JP", ["90########", "3########"]],
  ["BR", ["119########", "21########"]],
  ["MX", ["55########", "33########"]],
  ["ZA", ["8[2-4]#######", "21#######"]],
  ["SG", ["8#######", "9#######", "6#######"]],
  ["CN", ["139########", "10########"]],
  ["KR", ["10########", "2########"]],
];

const LIBRARY_EXAMPLES = new Set(
  Object.entries(examples as Record<string, string>).map(
    ([c, n]) => parsePhoneNumberFromString(n, c as CountryCode)?.number,
  ),
);
const FICTIONAL = /^\+1\d{3}55501|^\+44(?:20794|7700900)|^\+61(?:25550|491570)/;

function fill(g: Gen, template: string): string {
  return template.replace(/\[(\d)-(\d)\]|\[(\d+)\]|#/g, (_, lo?: string, hi?: string, set?: string) => {
    if (lo !== undefined) return String(Number(lo) + g.int(Number(hi) - Number(lo) + 1));
    if (set !== undefined) return g.pick([...set]);
    return String(g.int(10));
  });
}

/** A valid number of `country`, written nationally, internationally or as E.164. */
export function phoneOf(g: Gen, country: CountryCode): string {
  const templates = PLANS.find(([c]) => c === country)![1];
  for (;;) {
    const p = parsePhoneNumberFromString(fill(g, g.pick(templates)), country);
    if (!p?.isValid() || LIBRARY_EXAMPLES.has(p.number) || FICTIONAL.test(p.number)) continue;
    if (new Set(p.nationalNumber).size <= 3) continue;
    const form = g.int(4);
    return form === 0 ? p.number : form === 1 ? p.formatInternational() : p.formatNational();
  }
}

/** Countries written with a Latin-script phone word (the phone_number rule). */
export const PHONE_COUNTRIES = PLANS.map(([c]) => c).filter((c) => c !== "CN" && c !== "KR");

const NAMES = ["Aiko Tanaka", "Sven Lindqvist", "Priya Raman", "Diego Costa", "Fatima Haddad", "Olu Adeyemi"];

/** The developer contexts a phone number is written in. */
const DOCUMENTS: ((g: Gen, v: string, country: CountryCode) => string)[] = [
  (g, v, c) =>
    JSON.stringify(
      {
        id: 4000 + g.int(999),
        name: g.pick(NAMES),
        phone: v,
        country: c,
        created_at: "2026-03-14T09:12:44Z",
      },
      null,
      2,
    ),
  (g, v) =>
    `users:\n  - id: ${g.int(999)}\n    name: ${g.pick(NAMES)}\n    mobile: "${v}"\n    verified_at: 2026-03-14\n`,
  (g, v) =>
    `2026-11-25T10:31:07.${g.digits(3)}Z INFO notify.sms send to=${v} template=otp_v2 status=queued req=${g.hex(12)}`,
  (g, v) =>
    g.pick([
      `if the deploy breaks tonight call me at ${v}, I'm on call until 2`,
      `You can reach me on ${v} (WhatsApp works too) while I'm travelling.`,
      `Telefon: ${v} - bitte nur in dringenden Fällen`,
      `Mi teléfono es ${v}, llámame mañana.`,
    ]),
  (_g, v) => `SUPPORT_PHONE=${v.includes(" ") ? `"${v}"` : v}\nSUPPORT_EMAIL_ENABLED=true\nPORT=8080`,
];

export const PHONES: Kind[] = [
  {
    rule: "phone_number",
    family: "pii",
    category: "pii",
    label: "phone",
    env: "CONTACT_PHONE",
    host: "",
    value: (g) => phoneOf(g, g.pick(PHONE_COUNTRIES)),
    contexts: TEXTUAL,
    documents: (g) =>
      PHONE_COUNTRIES.flatMap((country, i) =>
        [0, 1].map((k) => {
          const value = phoneOf(g, country);
          return { text: DOCUMENTS[(i + k * 2) % DOCUMENTS.length]!(g, value, country), value };
        }),
      ),
  },
  {
    rule: "phone_number_cjk",
    family: "pii",
    category: "pii",
    label: "電話",
    env: "TEL",
    host: "",
    value: (g) => phoneOf(g, "JP"),
    contexts: [],
    documents: (g) =>
      (["JP", "CN", "KR", "JP", "CN", "KR"] as const).map((country, i) => {
        const value = phoneOf(g, country);
        const label = { JP: ["電話", "携帯"], CN: ["电话", "手机"], KR: ["전화", "휴대폰"] }[country][i % 2]!;
        const text =
          i < 3
            ? JSON.stringify({ name: g.pick(NAMES), [label]: value }, null, 2)
            : `お問い合わせ / contact\n${label}：${value}\n受付 9:00-18:00`;
        return { text, value };
      }),
  },
];

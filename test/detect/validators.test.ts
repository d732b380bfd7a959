/** The validators of rules (a rule's `validator`), with their edge cases. */
import { describe, expect, test } from "bun:test";
import { emailAddress } from "../../src/detect/email.ts";
import {
  basicAuth,
  excludePrivateIps,
  ibanMod97,
  loginPair,
  luhn,
  parseIpv6,
  publicIpv4,
  publicIpv6,
  ssnRange,
} from "../../src/detect/validators.ts";
import {
  base58CheckWif,
  base58CheckXprv,
  bip39Checksum,
  secp256k1Key,
} from "../../src/detect/wallet-keys.ts";
import { Gen } from "../corpus/gen.ts";

describe("luhn", () => {
  test.each([
    ["4539 1488 0343 6467", true],
    ["4539-1488-0343-6467", true],
    ["4539148803436467", true],
    ["5425233430109903", true],
    ["371452849163021", true],
    ["4539148803436468", false], // checksum off by one
    ["4111111111111111", false], // published test card
    ["4242424242424242", false], // Stripe test card
    ["378282246310005", false], // Amex test card
    ["0000000000000000", false], // one repeated digit
    ["453914880343", false], // 12 digits: too short
    ["45391488034364670000", false], // 20 digits: too long
    ["4539x488", false],
  ])("%s → %p", (v, ok) => expect(luhn(v)).toBe(ok));
});

describe("ssn_range", () => {
  test.each([
    ["123-45-6789", true],
    ["536-22-1948", true],
    ["899-99-9999", true],
    ["665-01-0001", true],
    ["000-12-3456", false], // area 000
    ["666-12-3456", false], // area 666
    ["900-12-3456", false], // area 9xx
    ["999-12-3456", false],
    ["123-00-4567", false], // group 00
    ["123-45-0000", false], // serial 0000
    ["078-05-1120", false], // the advertising number
    ["12-345-6789", false],
  ])("%s → %p", (v, ok) => expect(ssnRange(v)).toBe(ok));
});

describe("iban_mod97", () => {
  test.each([
    ["DE44 5001 0517 5407 3249 31", true],
    ["GB26MIDL40051512345674", true],
    ["FR0930004000030004187263R57", true],
    ["NL38RABO0310427986", true],
    ["de44500105175407324931", true], // lower case is normalised
    ["DE44 5001 0517 5407 3249 32", false], // checksum
    ["DE89 3704 0044 0532 0130 00", false], // the IBAN registry's example
    ["GB29NWBK60161331926819", false], // the IBAN registry's example
    ["NL91ABNA0417164300", false], // the IBAN registry's example
    ["DE00000000000000000066", false], // an account number of zeros
    ["GB29NWBK6016133192681", false], // length for GB is 22
    ["XX89370400440532013000", false], // unknown country
    ["DE00370400440532013000", false],
    ["AB12CDEF", false],
  ])("%s → %p", (v, ok) => expect(ibanMod97(v)).toBe(ok));
});

describe("exclude_private_ips", () => {
  test.each([
    ["8.8.4.5", true],
    ["34.201.17.5", true],
    ["1.1.1.2", true],
    ["10.0.0.1", false],
    ["172.16.0.1", false],
    ["172.31.255.255", false],
    ["172.32.0.1", true],
    ["192.168.1.20", false],
    ["127.0.0.1", false],
    ["169.254.10.1", false],
    ["100.64.0.1", false], // CGNAT
    ["192.0.2.44", false], // TEST-NET-1
    ["198.51.100.7", false], // TEST-NET-2
    ["203.0.113.9", false], // TEST-NET-3
    ["0.0.0.0", false],
    ["224.0.0.1", false], // multicast
    ["255.255.255.255", false],
    ["01.2.3.4", false], // leading zero: not an address
    ["256.1.1.1", false],
  ])("IPv4 %s → %p", (v, ok) => {
    expect(publicIpv4(v)).toBe(ok);
    expect(excludePrivateIps(v)).toBe(ok);
  });
  test.each([
    "123.123.123.123", // one octet repeated
    "4.4.4.4",
    "1.2.3.4", // counting up
    "222.111.111.222", // mirrored
    "93.184.216.34", // example.com
    "2606:2800:220:1:248:1893:25c8:1946", // example.com
  ])("made-up and example-domain addresses are not reported: %s", (ip) => {
    expect(excludePrivateIps(ip)).toBe(false);
  });
  test("well-known public resolvers are public addresses but no one's: not reported", () => {
    for (const ip of ["8.8.8.8", "1.1.1.1", "9.9.9.9", "2001:4860:4860::8888", "2606:4700:4700::1111"]) {
      expect(ip.includes(":") ? publicIpv6(ip) : publicIpv4(ip)).toBe(true);
      expect(excludePrivateIps(ip)).toBe(false);
    }
  });
  test.each([
    ["2607:f8b0:4004:800::200e", true],
    ["2a03:2880:f12f:83:face:b00c:0:25de", true],
    ["::1", false],
    ["::", false],
    ["fe80::1ff:fe23:4567:890a", false], // link-local
    ["fd12:3456:789a:1::1", false], // unique local
    ["2001:db8::8a2e:370:7334", false], // documentation
    ["3fff:0:1::1", false], // documentation (RFC 9637)
    ["ff02::1", false], // multicast
    ["2001:0:4136:e378::1", false], // Teredo
    ["1:2:3:4:5:6:7:8:9", false],
    ["2607:f8b0::200e::1", false],
  ])("IPv6 %s → %p", (v, ok) => {
    expect(publicIpv6(v)).toBe(ok);
    expect(excludePrivateIps(v)).toBe(ok);
  });
  test("IPv6 expansion", () => {
    expect(parseIpv6("2001:db8::1")).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]);
    expect(parseIpv6("::")).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIpv6("g::1")).toBeNull();
  });
});

describe("basic_auth and login_pair", () => {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  test.each([
    [b64("deploy:Zx9vQ2mL7pR4"), true],
    [b64("svc-report:k3#Lm9!pQ").replace(/=+$/, ""), true], // padding left off
    [b64("user:password"), false], // the documentation login
    [b64("username:pass"), false],
    [b64("admin:$" + "{ADMIN_PASSWORD}"), false],
    [b64("no colon here"), false],
    [b64("user:"), false],
    [b64("\u0001\u0002:\u0003binary"), false],
    ["not base64 at all!", false],
  ])("basic_auth %s → %p", (v, ok) => expect(basicAuth(v)).toBe(ok));
  test.each([
    ["deploy:Zx9vQ2mL7pR4", true],
    ["user:password", false],
    ["admin:changeme", false],
    ["api:$API_TOKEN", false],
    ["nocolon", false],
  ])("login_pair %s → %p", (v, ok) => expect(loginPair(v)).toBe(ok));
});

describe("wallet keys", () => {
  const g = new Gen(99);
  test("bip39_checksum: generated phrases of every length pass; a changed word or a repeat fails", () => {
    for (const n of [12, 15, 18, 21, 24] as const) {
      const phrase = g.mnemonic(n);
      expect(bip39Checksum(phrase)).toBe(true);
    }
    expect(bip39Checksum(`${"abandon ".repeat(11)}about`)).toBe(false); // the published test vector
    expect(bip39Checksum("the quick brown fox jumps over the lazy dog while seven wizards judge")).toBe(
      false,
    );
    expect(bip39Checksum("apple banana")).toBe(false);
    let failures = 0;
    for (let i = 0; i < 200; i++) {
      const words = g.mnemonic(24).split(" ");
      words[3] = words[3] === "zoo" ? "abandon" : "zoo";
      if (!bip39Checksum(words.join(" "))) failures++;
    }
    expect(failures).toBeGreaterThan(190); // 8 checksum bits: 1 in 256 passes by chance
  });

  test("base58check_wif: mainnet and testnet keys, compressed or not; not addresses or broken checksums", () => {
    const key = g.secpKey();
    const wif = (version: number, compressed: boolean) =>
      g.base58check(Uint8Array.from([version, ...key, ...(compressed ? [1] : [])]));
    expect(base58CheckWif(wif(0x80, false))).toBe(true);
    expect(base58CheckWif(wif(0x80, true))).toBe(true);
    expect(base58CheckWif(wif(0xef, true))).toBe(true);
    expect(base58CheckWif(wif(0x00, true))).toBe(false); // an address version byte
    const good = wif(0x80, true);
    const flipped = good.slice(0, -1) + (good.at(-1) === "a" ? "b" : "a");
    expect(base58CheckWif(flipped)).toBe(false);
    expect(base58CheckWif(g.base58check(Uint8Array.from([0x00, ...g.bytes(20)])))).toBe(false); // P2PKH address
    expect(base58CheckWif("0OIl")).toBe(false); // not Base58
  });

  test("base58check_xprv: private versions only, with the 0x00 key prefix", () => {
    const body = (version: number[], keyPrefix: number) =>
      g.base58check(
        Uint8Array.from([
          ...version,
          0,
          ...g.bytes(4),
          ...g.bytes(4),
          ...g.bytes(32),
          keyPrefix,
          ...g.secpKey(),
        ]),
      );
    expect(base58CheckXprv(body([0x04, 0x88, 0xad, 0xe4], 0))).toBe(true); // xprv
    expect(base58CheckXprv(body([0x04, 0x35, 0x83, 0x94], 0))).toBe(true); // tprv
    expect(base58CheckXprv(body([0x04, 0xb2, 0x43, 0x0c], 0))).toBe(true); // zprv
    expect(base58CheckXprv(body([0x04, 0x88, 0xb2, 0x1e], 0))).toBe(false); // xpub
    expect(base58CheckXprv(body([0x04, 0x88, 0xad, 0xe4], 2))).toBe(false); // a public key where the private one goes
  });

  test("secp256k1_key: in range and not a pattern", () => {
    expect(secp256k1Key(`0x${g.hex(64)}`)).toBe(true);
    expect(secp256k1Key(g.hex(64))).toBe(true);
    expect(secp256k1Key(`0x${"0".repeat(63)}1`)).toBe(false);
    expect(secp256k1Key("f".repeat(64))).toBe(false); // above the group order
    expect(secp256k1Key("0123456789abcdef".repeat(4))).toBe(false);
    expect(secp256k1Key(g.hex(63))).toBe(false);
  });
});

describe("email_address", () => {
  test.each([
    ["maria.lindqvist@acme-corp.io", true],
    ["ops+alerts@mail.northwind-traders.co.uk", true],
    ["francois@etu.inp-n7.fr", true],
    ["user@my-example.com", false], // placeholder domain
    ["email@domain-one.com", false],
    ["tom@test.te-st.com", false], // a test label
    ["EMAIL@EXAMPLE.COM", false],
    ["something@subdomain.domain-with-hyphens.tld", false],
    ["sender@server.com", false],
    ["first.last@fabrikam.io", false], // "someone" in documentation
    ["jane.doe@acme-corp.io", true], // a name, however common
    ["work+user@fabrikam.io", false],
    ["security@xmldom.org", false], // a role mailbox
    ["postmaster@fabrikam.io", false],
    ["aaaa@gmail.com", false], // one repeated character
    ["asdlkjf@lkajsdf.com", false], // a key mash
    ["PROJECT_NUMBER-compute@developer.gserviceaccount.com", false], // a service account
    ["sa-name@my-project.iam.gserviceaccount.com", false], // a service account
    ["trusted.com@evil.com", false], // a host before @, as in URL tests
    ["a@b.com", false],
  ])("%s → %p", (v, ok) => expect(emailAddress(v)).toBe(ok));
});

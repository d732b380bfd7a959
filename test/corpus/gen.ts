/**
 * The corpus's value generator: a seeded random source and the alphabets and shapes secrets are made
 * of (hex, base64, UUIDs, Luhn card numbers, IBANs, Base58Check, BIP-39 phrases). Every credential in
 * the corpus is made here at run time from its documented format: none is real and none sits in the
 * source as a literal.
 */
import { createBase58check } from "@scure/base";
import { wordlist } from "@scure/bip39/wordlists/english.js";

export const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
export const LOWER = "abcdefghijklmnopqrstuvwxyz";
export const DIGITS = "0123456789";
export const ALNUM = UPPER + LOWER + DIGITS;
export const HEX = "0123456789abcdef";
export const B64 = `${ALNUM}+/`;
export const B64URL = `${ALNUM}_-`;
export const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

const sha256 = (d: Uint8Array) => Bun.SHA256.hash(d) as Uint8Array;
const base58check = createBase58check(sha256);

/**
 * The seeded linear congruential sequence that several property tests and the engine benchmark's
 * request draw from: `rnd(n)` is in [0, n). Their cases stay as they were drawn; new code takes Gen.
 */
export function lcg(seed: number): (n: number) => number {
  let s = seed;
  return (n) => (s = (s * 1103515245 + 12345) % 2 ** 31) % n;
}

/** mulberry32: a small seeded generator with good low bits. */
export class Gen {
  #seed: number;
  constructor(seed: number) {
    this.#seed = seed | 0;
  }
  int(n: number): number {
    this.#seed = (this.#seed + 0x6d2b79f5) | 0;
    let t = Math.imul(this.#seed ^ (this.#seed >>> 15), 1 | this.#seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)]!;
  }
  /** A random token (no character three times in a row, so it never looks like a placeholder). */
  tok(n: number, alphabet = ALNUM): string {
    let out = "";
    while (out.length < n) {
      const c = alphabet[this.int(alphabet.length)]!;
      if (out.length >= 2 && out.at(-1) === c && out.at(-2) === c) continue;
      out += c;
    }
    return out;
  }
  hex(n: number): string {
    return this.tok(n, HEX);
  }
  upperHex(n: number): string {
    return this.tok(n, "0123456789ABCDEF");
  }
  digits(n: number): string {
    return String(1 + this.int(9)) + this.tok(n - 1, DIGITS);
  }
  alnum(n: number): string {
    return this.tok(n);
  }
  /** Lower-case letters and digits (many providers' tokens). */
  lowerNum(n: number): string {
    return this.tok(n, LOWER + DIGITS);
  }
  /** Upper-case letters and digits. */
  upperNum(n: number): string {
    return this.tok(n, UPPER + DIGITS);
  }
  letters(n: number): string {
    return this.tok(n, UPPER + LOWER);
  }
  b64(n: number): string {
    return this.tok(n, B64);
  }
  b64url(n: number): string {
    return this.tok(n, B64URL);
  }
  uuid(): string {
    return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${this.pick(["8", "9", "a", "b"])}${this.hex(3)}-${this.hex(12)}`;
  }
  bytes(n: number): Uint8Array {
    return Uint8Array.from({ length: n }, () => this.int(256));
  }
  /** Standard base64 of `n` random bytes (with padding). */
  b64bytes(n: number): string {
    return Buffer.from(this.bytes(n)).toString("base64");
  }
  /** A password as people pick them: letters, digits and a few symbols, 12 to 20 characters. */
  password(): string {
    return this.tok(12 + this.int(9), `${ALNUM}!#%^*_+-`);
  }
  /** A card number with a valid Luhn check digit (Visa or Mastercard), not a published test number. */
  card(): string {
    const body = this.pick(["4", "51", "52", "53", "54", "55"]) + this.tok(14, DIGITS);
    const digits = body.slice(0, 15);
    let sum = 0;
    for (let i = 0; i < 15; i++) {
      let d = Number(digits[14 - i]);
      if (i % 2 === 0) {
        d *= 2;
        if (d > 9) d -= 9;
      }
      sum += d;
    }
    return digits + String((10 - (sum % 10)) % 10);
  }
  /** A German IBAN with its MOD-97 check digits right. */
  iban(): string {
    const bban = this.tok(18, DIGITS);
    const n = BigInt(`${bban}131400`); // D=13, E=14, then "00"
    const check = String(98n - (n % 97n)).padStart(2, "0");
    return `DE${check}${bban}`;
  }
  /** Base58Check of a payload (Bitcoin addresses and keys). */
  base58check(payload: Uint8Array): string {
    return base58check.encode(payload);
  }
  /** A secp256k1 private key as 32 bytes (top byte kept below 0xff so it is in range). */
  secpKey(): Uint8Array {
    const k = this.bytes(32);
    k[0] = 1 + this.int(0xfe);
    return k;
  }
  /** A BIP-39 mnemonic of `words` English words with a correct checksum. */
  mnemonic(words: 12 | 15 | 18 | 21 | 24): string {
    const entropy = this.bytes((words * 11 * 32) / 33 / 8);
    const hash = sha256(entropy);
    const bits: number[] = [];
    for (const b of entropy) for (let i = 7; i >= 0; i--) bits.push((b >> i) & 1);
    for (let i = 0; i < words / 3; i++) bits.push((hash[i >> 3]! >> (7 - (i & 7))) & 1);
    const out: string[] = [];
    for (let w = 0; w < words; w++) {
      let idx = 0;
      for (let b = 0; b < 11; b++) idx = (idx << 1) | bits[w * 11 + b]!;
      out.push(wordlist[idx]!);
    }
    // A real phrase rarely repeats a word; the validator rejects repeats, so draw again.
    return new Set(out).size < words - 1 ? this.mnemonic(words) : out.join(" ");
  }
}

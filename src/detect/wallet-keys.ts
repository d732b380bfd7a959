/**
 * Checks for cryptocurrency wallet secrets, so that only real ones are reported: a BIP-39 seed phrase
 * (every word from the English list, the checksum in its last word right), a Bitcoin private key in
 * wallet import format or an extended private key (Base58Check: version bytes and checksum right), an
 * Ethereum private key (a valid secp256k1 scalar that is not a pattern). Random prose, hashes and hex
 * pass none of them. Hashing is Bun's native SHA-256; the word list and Base58 come from @scure.
 * Pure: no I/O.
 */
import { base58 } from "@scure/base";

/** The BIP-39 English word list and each word's index, loaded on the first phrase checked. */
let wordIndex: Map<string, number> | null = null;
function bip39Words(): Map<string, number> {
  if (!wordIndex) {
    const { wordlist } = require("@scure/bip39/wordlists/english.js") as { wordlist: string[] };
    wordIndex = new Map(wordlist.map((w, i) => [w, i]));
  }
  return wordIndex;
}

function sha256(data: Uint8Array): Uint8Array {
  return Bun.SHA256.hash(data) as Uint8Array;
}

/**
 * A BIP-39 mnemonic of 12, 15, 18, 21 or 24 English words whose checksum (the last ENT/32 bits, the
 * first bits of SHA-256 of the entropy) is right. Phrases that repeat words (the published test
 * vectors `abandon abandon … about`, `zoo zoo … wrong`) are rejected: a real phrase seldom repeats one.
 */
export function bip39Checksum(value: string): boolean {
  const words = value.trim().toLowerCase().split(/\s+/);
  const n = words.length;
  if (n < 12 || n > 24 || n % 3 !== 0) return false;
  if (new Set(words).size < n - 1) return false;
  const index = bip39Words();
  const bits: number[] = [];
  for (const w of words) {
    const i = index.get(w);
    if (i === undefined) return false;
    for (let b = 10; b >= 0; b--) bits.push((i >> b) & 1);
  }
  const checksumBits = n / 3; // ENT/32, with ENT = 11n * 32/33
  const entropy = new Uint8Array((bits.length - checksumBits) / 8);
  for (let i = 0; i < entropy.length * 8; i++) entropy[i >> 3]! |= bits[i]! << (7 - (i & 7));
  const hash = sha256(entropy);
  for (let i = 0; i < checksumBits; i++)
    if (((hash[i >> 3]! >> (7 - (i & 7))) & 1) !== bits[entropy.length * 8 + i]) return false;
  return true;
}

/** The payload of a Base58Check string (its 4-byte double-SHA-256 checksum right), or null. */
export function base58CheckPayload(value: string): Uint8Array | null {
  let raw: Uint8Array;
  try {
    raw = base58.decode(value);
  } catch {
    return null;
  }
  if (raw.length < 5) return null;
  const payload = raw.subarray(0, raw.length - 4);
  const sum = sha256(sha256(payload));
  for (let i = 0; i < 4; i++) if (sum[i] !== raw[raw.length - 4 + i]) return null;
  return payload;
}

/** A Bitcoin private key in wallet import format: mainnet (0x80) or testnet (0xef), compressed or not. */
export function base58CheckWif(value: string): boolean {
  const p = base58CheckPayload(value);
  if (!p || (p[0] !== 0x80 && p[0] !== 0xef)) return false;
  if (p.length === 33) return secp256k1Scalar(p.subarray(1));
  return p.length === 34 && p[33] === 0x01 && secp256k1Scalar(p.subarray(1, 33));
}

/** Version bytes of BIP-32 extended private keys: xprv, tprv, yprv, zprv, uprv, vprv, Yprv, Zprv. */
const XPRV_VERSIONS = new Set([
  0x0488ade4, 0x04358394, 0x049d7878, 0x04b2430c, 0x044a4e28, 0x045f18bc, 0x0295b005, 0x02aa7a99,
]);

/** A BIP-32 extended private key: 78 bytes, a private-key version, a 0x00 before the 32-byte key. */
export function base58CheckXprv(value: string): boolean {
  const p = base58CheckPayload(value);
  if (p?.length !== 78) return false;
  const version = ((p[0]! << 24) | (p[1]! << 16) | (p[2]! << 8) | p[3]!) >>> 0;
  return XPRV_VERSIONS.has(version) && p[45] === 0 && secp256k1Scalar(p.subarray(46));
}

/** The order of the secp256k1 group: a private key is a number from 1 to n - 1. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

function secp256k1Scalar(key: Uint8Array): boolean {
  let k = 0n;
  for (const b of key) k = (k << 8n) | BigInt(b);
  return k > 0n && k < SECP256K1_N;
}

/**
 * An Ethereum (secp256k1) private key as 64 hex digits, with or without `0x`: in range, and not a
 * pattern (a run of one digit, a repeated block such as `0123456789abcdef` four times).
 */
export function secp256k1Key(value: string): boolean {
  const hex = value.startsWith("0x") || value.startsWith("0X") ? value.slice(2) : value;
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return false;
  const lower = hex.toLowerCase();
  if (new Set(lower).size < 10) return false;
  for (const block of [8, 16, 32]) if (lower.slice(0, block).repeat(64 / block) === lower) return false;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = Number.parseInt(lower.slice(i * 2, i * 2 + 2), 16);
  return secp256k1Scalar(bytes);
}

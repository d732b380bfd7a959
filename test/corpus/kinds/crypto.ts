/** The corpus kinds of category crypto: one entry per rule, its value made from the provider's documented format. */
import { AT_REST, IN_CODE, type Kind, kindsOf } from "../contexts.ts";

const kind = kindsOf("crypto");

export const CRYPTO: Kind[] = [
  kind(
    "bip39_seed_phrase",
    "wallet seed",
    "MNEMONIC",
    "",
    (g) => `${g.mnemonic(g.pick([12, 12, 24, 18, 15]))}`,
    IN_CODE,
  ),
  kind(
    "bitcoin_wif_private_key",
    "Bitcoin",
    "BTC_PRIVATE_KEY",
    "",
    (g) => `${g.base58check(Uint8Array.from([0x80, ...g.secpKey(), ...(g.int(2) ? [1] : [])]))}`,
    AT_REST,
  ),
  kind(
    "bitcoin_extended_private_key",
    "Bitcoin",
    "XPRV",
    "",
    (g) =>
      `${g.base58check(Uint8Array.from([0x04, 0x88, 0xad, 0xe4, g.int(4), ...g.bytes(4), ...g.bytes(4), ...g.bytes(32), 0, ...g.secpKey()]))}`,
    AT_REST,
  ),
  kind("ethereum_private_key", "Ethereum", "ETH_PRIVATE_KEY", "", (g) => `0x${g.hex(64)}`, AT_REST),
];

/**
 * What compilation and scanning both need to agree on: the character loop's rolling trigram hash
 * and the hex digits (spots of an IPv6 address, hex runs for the decoder).
 */

export const TRI_MASK = (1 << 18) - 1;
/** The rolling trigram hash of the hot loop: ((a << 12) ^ (b << 6) ^ c) over 18 bits. */
export const triHash = (a: number, b: number, c: number) => ((a << 12) ^ (b << 6) ^ c) & TRI_MASK;

export const HEX_DIGITS = "0123456789abcdefABCDEF";
/** 1 for each hex digit (ASCII codes only). */
export const HEX_CLASS = new Uint8Array(128);
for (const c of HEX_DIGITS) HEX_CLASS[c.charCodeAt(0)] = 1;

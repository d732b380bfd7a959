/**
 * Text a human reviewing a tool description does not see but a model reads: Unicode tag characters
 * (U+E0000–E007F, which spell ASCII invisibly), zero-width characters, bidirectional controls, and
 * ANSI escape sequences (concealed or overwritten text in a terminal). Pure functions, no I/O.
 */

export const HIDDEN_KINDS = ["tag_characters", "zero_width", "bidi_control", "ansi_escape"] as const;
export type HiddenKind = (typeof HIDDEN_KINDS)[number];

export interface HiddenText {
  kind: HiddenKind;
  /** How many characters (code points) of this kind. */
  count: number;
  /** For tag characters: the ASCII they spell. */
  decoded?: string;
}

// Tag characters, except inside an emoji flag sequence (🏴 + a-z tags + cancel tag, e.g. England's flag).
const TAGS = /[\u{E0000}-\u{E007F}]+/gu;
const FLAG_TAGS = /\u{1F3F4}[\u{E0061}-\u{E007A}]+\u{E007F}/gu;
// Zero-width and invisible formatting characters, and the variation selectors used for steganography.
// U+200D (ZWJ) between two pictographs is an emoji sequence, not hidden text.
const ZERO_WIDTH =
  /[\u200B\u200C\u2060-\u2064]|\u180E|\u00AD|[\u{E0100}-\u{E01EF}]|(?<!^)\uFEFF|(?<!\p{Extended_Pictographic}\uFE0F?)\u200D|\u200D(?!\p{Extended_Pictographic})/gu;
const BIDI = /[\u202A-\u202E\u2066-\u2069]/g;
// CSI / OSC / single-character escapes, C1 CSI, and backspace overwrites.
const ANSI =
  /\u001B(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001B]*(?:\u0007|\u001B\\)|[@-Z\\-_])|\u009B[0-?]*[ -/]*[@-~]|\u0008/g;

/** Find hidden text. Cheap when there is none (one pass per class). */
export function findHidden(text: string): HiddenText[] {
  const out: HiddenText[] = [];
  // Fast path: every class lives outside printable ASCII except ESC and backspace.
  if (!/[^\x20-\x7E\t\n\r]/.test(text)) return out;
  const tags = text.replace(FLAG_TAGS, "").match(TAGS);
  if (tags) {
    const all = tags.join("");
    let decoded = "";
    let count = 0;
    for (const ch of all) {
      count++;
      const cp = ch.codePointAt(0)! - 0xe0000;
      if (cp >= 0x20 && cp < 0x7f) decoded += String.fromCharCode(cp);
      else if (cp === 0x0a || cp === 0x0d) decoded += " ";
    }
    out.push({ kind: "tag_characters", count, decoded });
  }
  const zw = text.match(ZERO_WIDTH);
  if (zw) out.push({ kind: "zero_width", count: zw.length });
  const bidi = text.match(BIDI);
  if (bidi) out.push({ kind: "bidi_control", count: bidi.length });
  const ansi = text.match(ANSI);
  if (ansi) out.push({ kind: "ansi_escape", count: ansi.length });
  return out;
}

/**
 * What a model effectively reads: invisible characters and escapes removed, tag characters decoded
 * to the ASCII they spell. Pattern matching runs on this so that `<IMP\u200BORTANT>` still matches.
 */
export function revealHidden(text: string): string {
  if (!/[^\x20-\x7E\t\n\r]/.test(text)) return text;
  return text
    .replace(FLAG_TAGS, "\u{1F3F4}")
    .replace(TAGS, (m) => {
      let s = "";
      for (const ch of m) {
        const cp = ch.codePointAt(0)! - 0xe0000;
        if (cp >= 0x20 && cp < 0x7f) s += String.fromCharCode(cp);
      }
      return s;
    })
    .replace(ZERO_WIDTH, "")
    .replace(BIDI, "")
    .replace(ANSI, "");
}

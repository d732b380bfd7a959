/**
 * What a text looks like once the characters no tool sends on purpose are undone: invisible
 * characters dropped (zero-width spaces and joiners, soft hyphens, bidi controls, Unicode tags),
 * fullwidth and other compatibility forms folded (NFKC: `ｇｈｐ＿` → `ghp_`, mathematical letters), and
 * Cyrillic and Greek letters that look like Latin ones mapped to them where they sit next to
 * ASCII letters or digits (`ghр_…` with a Cyrillic `р`). Text in those scripts on its own is left
 * as it is. Each character of the result knows where it came from, so matches found in it are
 * reported, and redacted, at the original's offsets.
 *
 * Pure: no I/O.
 */

/** A normalized text and, for each of its characters, the original offset it came from. */
export interface Normalized {
  text: string;
  /** `from[i]` is the original offset of `text[i]`; `from[text.length]` is the original length. */
  from: Int32Array;
}

/** Whether the text holds any character this file may change (almost no text does). */
function suspect(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xad) continue;
    if (
      c === 0xad ||
      (c >= 0x034f && c <= 0x052f) ||
      c === 0x061c ||
      (c >= 0x115f && c <= 0x1160) ||
      (c >= 0x17b4 && c <= 0x17b5) ||
      c === 0x180e ||
      (c >= 0x200b && c <= 0x206f) ||
      (c >= 0x2100 && c <= 0x24ff) ||
      c === 0x3164 ||
      (c >= 0xfe00 && c <= 0xffa0) ||
      c === 0xd835 ||
      c === 0xdb40
    )
      return true;
  }
  return false;
}

/** Characters dropped: they render as nothing. */
function invisible(c: number): boolean {
  return (
    c === 0x00ad ||
    c === 0x034f ||
    c === 0x061c ||
    c === 0x115f ||
    c === 0x1160 ||
    c === 0x17b4 ||
    c === 0x17b5 ||
    c === 0x180e ||
    (c >= 0x200b && c <= 0x200f) ||
    (c >= 0x202a && c <= 0x202e) ||
    (c >= 0x2060 && c <= 0x2064) ||
    (c >= 0x2066 && c <= 0x206f) ||
    c === 0x3164 ||
    c === 0xfeff ||
    c === 0xffa0
  );
}

/** Cyrillic and Greek letters drawn like a Latin one. */
const CONFUSABLE: Record<string, string> = {
  а: "a",
  е: "e",
  о: "o",
  р: "p",
  с: "c",
  х: "x",
  у: "y",
  і: "i",
  ј: "j",
  ѕ: "s",
  ԁ: "d",
  һ: "h",
  ԛ: "q",
  ԝ: "w",
  ӏ: "l",
  А: "A",
  В: "B",
  Е: "E",
  К: "K",
  М: "M",
  Н: "H",
  О: "O",
  Р: "P",
  С: "C",
  Т: "T",
  Х: "X",
  У: "Y",
  І: "I",
  Ј: "J",
  Ѕ: "S",
  Α: "A",
  Β: "B",
  Ε: "E",
  Ζ: "Z",
  Η: "H",
  Ι: "I",
  Κ: "K",
  Μ: "M",
  Ν: "N",
  Ο: "O",
  Ρ: "P",
  Τ: "T",
  Υ: "Y",
  Χ: "X",
  ο: "o",
  ν: "v",
  α: "a",
  ι: "i",
  κ: "k",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
};

const asciiAlnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** The text with evasions undone, or null when it holds nothing to undo. */
export function normalizeForMatching(text: string): Normalized | null {
  if (!suspect(text)) return null;
  const out: string[] = [];
  const from: number[] = [];
  let changed = false;
  const n = text.length;
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    // Unicode tag characters (U+E0000–E007F) are invisible; they are dropped.
    if (c === 0xdb40 && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdc7f) {
        i += 2;
        changed = true;
        continue;
      }
    }
    const width = c >= 0xd800 && c <= 0xdbff && i + 1 < n ? 2 : 1;
    const ch = text.slice(i, i + width);
    if (invisible(c)) {
      changed = true;
      i += 1;
      continue;
    }
    let rep = ch;
    const conf = CONFUSABLE[ch];
    if (conf !== undefined) {
      if (nextToAscii(text, i, width)) rep = conf;
    } else if (c >= 0x80) rep = ch.normalize("NFKC");
    if (rep !== ch) changed = true;
    for (let k = 0; k < rep.length; k++) {
      out.push(rep[k]!);
      from.push(i);
    }
    i += width;
  }
  if (!changed) return null;
  from.push(n);
  return { text: out.join(""), from: Int32Array.from(from) };
}

/**
 * Whether an ASCII letter or digit is the nearest visible character on either side (invisible
 * characters and other confusables in between are skipped): `gh` + Cyrillic `р` + `_` is a token,
 * a Russian word is not.
 */
function nextToAscii(text: string, i: number, width: number): boolean {
  for (let j = i - 1; j >= 0 && j >= i - 8; j--) {
    const c = text.charCodeAt(j);
    if (invisible(c) || CONFUSABLE[text[j]!] !== undefined) continue;
    if (asciiAlnum(c)) return true;
    break;
  }
  for (let j = i + width; j < text.length && j < i + width + 8; j++) {
    const c = text.charCodeAt(j);
    if (invisible(c) || CONFUSABLE[text[j]!] !== undefined) continue;
    return asciiAlnum(c);
  }
  return false;
}

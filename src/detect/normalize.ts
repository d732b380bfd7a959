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

/**
 * Compatibility forms NFKC folds into ASCII letters, digits and punctuation: superscripts and
 * subscripts, letterlike symbols and number forms, enclosed alphanumerics, fullwidth forms, the
 * Latin ligatures, the long s, the ideographic space and (as their high surrogates) mathematical
 * alphanumerics and enclosed alphanumeric supplements. Other characters are left alone: NFKC of
 * accented letters, dashes, quotes, arrows or CJK text changes nothing a rule looks for.
 */
function compat(c: number): boolean {
  return (
    (c >= 0x2070 && c <= 0x218f) ||
    (c >= 0x2460 && c <= 0x24ff) ||
    (c >= 0xfe00 && c <= 0xffef) ||
    (c >= 0xfb00 && c <= 0xfb06) ||
    c === 0x017f ||
    c === 0x3000 ||
    c === 0xd835 ||
    c === 0xd83c
  );
}

/** Whether `c` is a Cyrillic or Greek code unit (where the look-alikes are). */
const greekOrCyrillic = (c: number) => c >= 0x0370 && c <= 0x052f;

/** Whether this file may change the code unit `c`: the units `SUSPECT` finds. */
export function suspectUnit(c: number): boolean {
  return c >= 0xad && (invisible(c) || compat(c) || greekOrCyrillic(c) || c === 0xdb40);
}

/**
 * The code units of `suspectUnit` as one character class, so that a text is checked by the regex
 * engine rather than a loop (an eighth of the time on a Claude Code body); test/detect/evasion.test.ts
 * checks that the two agree on every code unit.
 */
export const SUSPECT =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: a class of UTF-16 code units, combining ones and lone surrogates among them on purpose
  /[\u00ad\u017f\u034f\u0370-\u052f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u218f\u2460-\u24ff\u3000\u3164\ufb00-\ufb06\ufe00-\uffef\ud835\ud83c\udb40]/;

/**
 * Whether the text holds any character this file may change (almost no text does: curly quotes,
 * dashes, ellipses and arrows of ordinary prose are not among them).
 */
const suspect = (text: string): boolean => SUSPECT.test(text);

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

/**
 * The text with evasions undone, or null when it holds nothing to undo. Runs of characters that stay
 * as they are are copied as slices; only the characters that change are looked at one by one.
 */
export function normalizeForMatching(text: string): Normalized | null {
  if (!suspect(text)) return null;
  const n = text.length;
  const parts: string[] = [];
  let from = new Int32Array(n + 16);
  let len = 0;
  const room = (k: number) => {
    if (len + k < from.length) return;
    const grown = new Int32Array(Math.max(from.length * 2, len + k + 16));
    grown.set(from.subarray(0, len));
    from = grown;
  };
  let changed = false;
  // Characters [kept, i) are copied unchanged when the next change (or the end) comes.
  let kept = 0;
  const keep = (end: number) => {
    if (end <= kept) return;
    parts.push(text.slice(kept, end));
    room(end - kept);
    for (let k = kept; k < end; k++) from[len++] = k;
  };
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    if (c < 0xad) {
      i++;
      continue;
    }
    // Unicode tag characters (U+E0000–E007F) are invisible; they are dropped.
    if (c === 0xdb40 && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdc7f) {
        keep(i);
        kept = i += 2;
        changed = true;
        continue;
      }
    }
    if (invisible(c)) {
      keep(i);
      kept = i += 1;
      changed = true;
      continue;
    }
    const width = c >= 0xd800 && c <= 0xdbff && i + 1 < n ? 2 : 1;
    let rep: string | null = null;
    if (greekOrCyrillic(c)) {
      const conf = CONFUSABLE[text[i]!];
      if (conf !== undefined && nextToAscii(text, i, width)) rep = conf;
    } else if (compat(c)) {
      const ch = text.slice(i, i + width);
      const folded = ch.normalize("NFKC");
      if (folded !== ch) rep = folded;
    }
    if (rep !== null) {
      keep(i);
      parts.push(rep);
      room(rep.length);
      for (let k = 0; k < rep.length; k++) from[len++] = i;
      kept = i + width;
      changed = true;
    }
    i += width;
  }
  if (!changed) return null;
  keep(n);
  room(1);
  from[len] = n;
  return { text: parts.join(""), from: from.slice(0, len + 1) };
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

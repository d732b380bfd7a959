/**
 * Decoding: the spans of a text that are base64, hex, URL-encoded or unicode-escaped and decode to
 * printable text, so that the matcher can scan them again (matcher.ts, up to `max_depth` levels).
 * Candidates are rejected by cheap looks before anything is decoded: base64/hex runs come from the
 * character loop, base64 of text has a known first character in every 4-character group, and only a
 * prefix is decoded before the whole.
 */
import { HEX_CLASS } from "./chars.ts";
import type { EncodingOptions } from "./matcher.ts";

/**
 * Starts of base64/hex runs at least `runMin` long (the hot loop counts the current run; 0 = none
 * wanted), turned into [start, end) pairs: maximal runs of base64/hex characters.
 */
export function runPairs(text: string, starts: number[], runMin: number): number[] {
  const out: number[] = [];
  for (const s of starts) {
    // The rest of the run, by the regex engine (a run can be thousands of characters).
    RUN_REST.lastIndex = s + runMin;
    RUN_REST.test(text);
    out.push(s, RUN_REST.lastIndex);
  }
  return out;
}
const RUN_REST = /[A-Za-z0-9+/]*/y;

/**
 * Whether `text[next, end)` can be the last line of the wrapped value whose first line starts at
 * `s` (and does not just begin the next word): hex stays hex, and base64 comes out at a whole
 * number of 4-character groups with its padding.
 */
function endsEncoding(text: string, s: number, next: number, end: number): boolean {
  if (/^[0-9a-fA-F]+$/.test(text.slice(s, s + MIN_RUN))) return /^[0-9a-fA-F]+$/.test(text.slice(next, end));
  let pad = 0;
  while (text.charCodeAt(end + pad) === 61 /* = */ && pad < 2) pad++;
  return (end - next + pad) % 4 === 0;
}

/**
 * Runs joined across line breaks where base64 or hex is wrapped (MIME at 76 columns, PEM at 64,
 * `base64` at 76, `xxd -p` at 60): a run (a multiple of 4 characters, at least MIN_RUN) that a line
 * break follows continues on the next line while the lines are as long as the first, and a value
 * across a break is decoded whole. The last line is shorter, possibly shorter than the runs the
 * loop reports; it is read here. Pairs are
 * [start, end) as from runPairs, an end now past line breaks (removed before decoding).
 */
export function joinWrapped(text: string, runs: number[]): number[] {
  const out: number[] = [];
  for (let k = 0; k < runs.length; k += 2) {
    const s = runs[k]!;
    let e = runs[k + 1]!;
    // The wrap width is the first line's; a shorter line is the last.
    const width = e - s;
    let line = width;
    while (line === width && width >= MIN_RUN && width % 4 === 0) {
      const br =
        text.charCodeAt(e) === 10 ? 1 : text.charCodeAt(e) === 13 && text.charCodeAt(e + 1) === 10 ? 2 : 0;
      if (br === 0) break;
      const next = e + br;
      if (runs[k + 2] === next && runs[k + 3]! - next <= width) {
        k += 2;
        e = runs[k + 1]!;
        line = e - next;
        continue;
      }
      RUN_REST.lastIndex = next;
      RUN_REST.test(text);
      const end = RUN_REST.lastIndex;
      if (end > next && end - next < width && endsEncoding(text, s, next, end)) e = end;
      break;
    }
    out.push(s, e);
  }
  return out;
}

/**
 * Shortest base64/hex run considered for decoding: 16 characters (12 bytes of base64, 8 of hex).
 * No rule matches a value that decodes to fewer characters; the hot loop notes runs this long.
 */
export const MIN_RUN = 16;

const PRINTABLE_MIN = 0.9;
/** Characters that end a URL-encoded span, and the longest span looked at. */
const URL_STOP = new Uint8Array(65536);
for (const c of " \t\r\n\"'<>`\u0000") URL_STOP[c.charCodeAt(0)] = 1;
const MAX_SPAN = 20_000;

function printableRatio(s: string): number {
  if (s.length === 0) return 0;
  let ok = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 32 && c < 127) || c === 9 || c === 10 || c === 13 || (c >= 160 && c !== 0xfffd)) ok++;
  }
  return ok / s.length;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

/**
 * Base64 of text: the first character of every 4-character group encodes the top six bits of a
 * byte, which for tab, newline and printable ASCII is 2 to 31 ('C' to 'f'). Checking three groups
 * rejects most identifiers and binary blobs before any decoding.
 */
const QUAD_HEAD = new Uint8Array(128);
for (const c of "CDEFGHIJKLMNOPQRSTUVWXYZabcdef") QUAD_HEAD[c.charCodeAt(0)] = 1;
function looksLikeBase64Text(run: string): boolean {
  const url = run.includes("-") || run.includes("_");
  for (let q = 0; q < 12 && q < run.length - 3; q += 4) {
    const c = run.charCodeAt(q);
    if (c >= 128 || QUAD_HEAD[c] === 0) return false;
  }
  if (url && (run.includes("+") || run.includes("/"))) return false;
  return /[A-Z]/.test(run) && /[a-z0-9]/.test(run);
}

function decodeBase64(s: string): string | null {
  let t = s.replace(/=+$/, "");
  const url = /[-_]/.test(t);
  if (url && /[+/]/.test(t)) return null;
  if (t.length % 4 === 1) return null;
  if (url) t = t.replace(/-/g, "+").replace(/_/g, "/");
  try {
    // Check a prefix first: most candidates are identifiers or binary and fail here cheaply.
    const head = t.length > 64 ? t.slice(0, 64) : t;
    const headText = utf8.decode(Uint8Array.fromBase64(head, { lastChunkHandling: "loose" }));
    if (printableRatio(headText) < PRINTABLE_MIN) return null;
    const bytes = Uint8Array.fromBase64(t, { lastChunkHandling: "loose" });
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

function decodeHex(s: string): string | null {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(s)) return null;
  try {
    return utf8.decode(Uint8Array.fromHex(s));
  } catch {
    return null;
  }
}

interface Decoded {
  start: number;
  end: number;
  text: string;
  kind: string;
}

/** The encoded spans of `text` (base64, hex, URL, unicode escapes): one scan with a branch per encoding. */
export function findEncoded(text: string, lineRuns: number[], enc: EncodingOptions): Decoded[] {
  const out: Decoded[] = [];
  const runs = joinWrapped(text, lineRuns);
  const ok = (d: string | null) =>
    d !== null &&
    d.length >= enc.min_decoded_length &&
    d.length <= enc.max_decoded_length &&
    printableRatio(d) >= PRINTABLE_MIN;
  const maxEncoded = Math.ceil(enc.max_decoded_length * 2) + 4;
  for (let k = 0; k < runs.length; k += 2) {
    const s = runs[k]!;
    let e = runs[k + 1]!;
    if (e - s > maxEncoded) continue;
    // Cheap looks before any slicing: hex needs hex digits, base64 of text needs quad heads.
    const c0 = text.charCodeAt(s);
    const isHexStart =
      enc.hex &&
      e - s >= enc.min_decoded_length * 2 &&
      HEX_CLASS[c0] === 1 &&
      HEX_CLASS[text.charCodeAt(s + 1)] === 1 &&
      HEX_CLASS[text.charCodeAt(s + 2)] === 1;
    const isB64Start =
      enc.base64 &&
      c0 < 128 &&
      QUAD_HEAD[c0] === 1 &&
      QUAD_HEAD[text.charCodeAt(s + 4)] === 1 &&
      QUAD_HEAD[text.charCodeAt(s + 8)] === 1;
    if (!isHexStart && !isB64Start) continue;
    while (e < text.length && text[e] === "=" && e - runs[k + 1]! < 2) e++;
    const spanned = text.slice(s, e);
    const run = spanned.includes("\n") ? spanned.replace(/\r?\n/g, "") : spanned;
    if (isHexStart && /^[0-9a-fA-F]+$/.test(run)) {
      const d = decodeHex(run);
      if (ok(d)) {
        out.push({ start: s, end: e, text: d!, kind: "hex" });
        continue;
      }
    }
    if (isB64Start && looksLikeBase64Text(run)) {
      const d = decodeBase64(run);
      if (ok(d)) out.push({ start: s, end: e, text: d!, kind: "base64" });
    }
  }
  if (enc.url) {
    let p = text.indexOf("%");
    while (p !== -1) {
      if (/^%[0-9a-fA-F]{2}/.test(text.slice(p, p + 3))) {
        let s = p;
        while (s > 0 && p - s < MAX_SPAN && URL_STOP[text.charCodeAt(s - 1)] !== 1) s--;
        let e = p;
        while (e < text.length && e - p < MAX_SPAN && URL_STOP[text.charCodeAt(e)] !== 1) e++;
        const span = text.slice(s, e);
        try {
          const d = decodeURIComponent(span.replace(/\+/g, " "));
          if (d !== span && ok(d)) out.push({ start: s, end: e, text: d, kind: "url" });
        } catch {
          /* not URL encoding */
        }
        p = text.indexOf("%", e);
      } else p = text.indexOf("%", p + 1);
    }
  }
  if (enc.unicode) {
    let p = text.indexOf("\\");
    while (p !== -1) {
      const nx = text[p + 1];
      if (
        (nx === "u" && /^[0-9a-fA-F]{4}/.test(text.slice(p + 2, p + 6))) ||
        (nx === "x" && /^[0-9a-fA-F]{2}/.test(text.slice(p + 2, p + 4)))
      ) {
        const re = /(?:\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|[^\s"'`\\])+/y;
        re.lastIndex = p;
        const m = re.exec(text);
        if (m) {
          const span = m[0];
          const d = span
            .replace(/\\u([0-9a-fA-F]{4})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16)))
            .replace(/\\x([0-9a-fA-F]{2})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16)));
          if ((span.match(/\\[ux]/g)?.length ?? 0) >= 2 && ok(d))
            out.push({ start: p, end: p + span.length, text: d, kind: "unicode" });
          p = text.indexOf("\\", p + span.length);
          continue;
        }
      }
      p = text.indexOf("\\", p + 2);
    }
  }
  return out;
}

/**
 * The text inside a data field: base64 (an inline file, a `data:` URL) or a percent-encoded `data:`
 * URL. Tools attach files as such fields (Gemini `inlineData`, Anthropic `document` sources, OpenAI
 * `file_data`), whatever MIME type they declare: a text file sent as `application/octet-stream` is
 * still text that leaves the machine. Images, PDFs, audio and encrypted blobs are binary and give
 * null; the first bytes tell, so a megabyte image costs one small decode.
 */

/** Decoded bytes looked at before the whole value is decoded. */
const HEAD_BYTES = 768;
/** Share of printable characters (with tab and line breaks) text has. */
const PRINTABLE_MIN = 0.95;

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const utf8 = new TextDecoder("utf-8");

/** `s` as text when it is valid UTF-8 with few control characters; null otherwise. */
function asText(bytes: Uint8Array, cut: boolean): string | null {
  let text: string;
  try {
    // A head cut inside a multi-byte character is not an error in the text.
    text = cut ? utf8.decode(bytes) : strictUtf8.decode(bytes);
  } catch {
    return null;
  }
  if (cut && text.slice(0, -1).includes("\ufffd")) return null;
  let printable = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return null;
    if (c >= 32 || c === 9 || c === 10 || c === 13) printable++;
  }
  return text.length > 0 && printable / text.length >= PRINTABLE_MIN ? text : null;
}

function fromBase64(s: string): Uint8Array | null {
  const t = s.includes("-") || s.includes("_") ? s.replace(/-/g, "+").replace(/_/g, "/") : s;
  try {
    return Uint8Array.fromBase64(t.replace(/\s+/g, ""), { lastChunkHandling: "loose" });
  } catch {
    return null;
  }
}

/**
 * The text a data field holds: what its base64 decodes to when that is text, null when it is
 * binary, and the value itself when it is not base64 (then it is text in a data field's place).
 * @example textOfData("data:application/octet-stream;base64,aGVsbG8gd29ybGQ=") // "hello world"
 */
export function textOfData(value: string): string | null {
  let payload = value;
  if (value.startsWith("data:")) {
    const comma = value.indexOf(",");
    if (comma < 0) return null;
    payload = value.slice(comma + 1);
    if (!/;base64$/i.test(value.slice(0, comma))) {
      try {
        return asText(new TextEncoder().encode(decodeURIComponent(payload)), false);
      } catch {
        return null;
      }
    }
  }
  const headChars = Math.ceil(HEAD_BYTES / 3) * 4;
  if (payload.length > headChars) {
    const head = fromBase64(payload.slice(0, headChars));
    if (!head) return value;
    if (asText(head, true) === null) return null;
  }
  const bytes = fromBase64(payload);
  return bytes ? asText(bytes, false) : value;
}

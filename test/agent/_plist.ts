/**
 * The checks `plutil -lint` makes of an XML property list, for machines without plutil: the text is
 * well-formed XML (a strict parser: any error or warning is a problem), declares Apple's plist
 * DOCTYPE, and its elements follow the structure of Apple's PropertyList-1.0 DTD: one `plist`
 * (version 1.0) around one value; a `dict` alternates `key` and one value, with no key twice; an
 * `array` holds values; `true`/`false` are empty; `integer`, `real`, `date` and `data` hold what
 * their type allows. Returns the problems found, none for a valid list.
 */
import { DOMParser, type Element, type Node } from "@xmldom/xmldom";

const VALUES = new Set(["array", "data", "date", "dict", "real", "integer", "string", "true", "false"]);
const TEXT_ONLY = new Set(["key", "string", "data", "date", "real", "integer"]);
const ELEMENT = 1;
const TEXT = 3;
const CDATA = 4;
const COMMENT = 8;

function children(el: Element): Element[] {
  const out: Element[] = [];
  for (let n: Node | null = el.firstChild; n; n = n.nextSibling)
    if (n.nodeType === ELEMENT) out.push(n as Element);
  return out;
}

/** Text between the tags of an element that may hold nothing else (comments aside). */
function textOf(el: Element, problems: string[]): string {
  let text = "";
  for (let n: Node | null = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === TEXT || n.nodeType === CDATA) text += n.nodeValue ?? "";
    else if (n.nodeType !== COMMENT) problems.push(`<${el.tagName}> may hold only text, not <${n.nodeName}>`);
  }
  return text;
}

function checkValue(el: Element, path: string, problems: string[]): void {
  const tag = el.tagName;
  if (!VALUES.has(tag)) {
    problems.push(`${path}: <${tag}> is not a property-list value`);
    return;
  }
  if (tag === "true" || tag === "false") {
    if (el.childNodes.length) problems.push(`${path}: <${tag}/> must be empty`);
    return;
  }
  if (TEXT_ONLY.has(tag)) {
    const t = textOf(el, problems);
    if (tag === "integer" && !/^\s*(?:[+-]?\d+|0x[0-9a-fA-F]+)\s*$/.test(t))
      problems.push(`${path}: <integer> ${JSON.stringify(t)} is not an integer`);
    if (
      tag === "real" &&
      !/^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$|^\s*[+-]?(?:inf|nan)\s*$/i.test(t)
    )
      problems.push(`${path}: <real> ${JSON.stringify(t)} is not a number`);
    if (tag === "date" && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(t.trim()))
      problems.push(`${path}: <date> ${JSON.stringify(t)} is not YYYY-MM-DDTHH:MM:SSZ`);
    if (tag === "data" && !/^[A-Za-z0-9+/=\s]*$/.test(t)) problems.push(`${path}: <data> is not base64`);
    return;
  }
  const kids = children(el);
  if (tag === "array") {
    for (const [i, k] of kids.entries()) checkValue(k, `${path}[${i}]`, problems);
    return;
  }
  // dict: (key, value)*
  const seen = new Set<string>();
  for (let i = 0; i < kids.length; i += 2) {
    const key = kids[i]!;
    if (key.tagName !== "key") {
      problems.push(`${path}: expected <key>, found <${key.tagName}>`);
      return;
    }
    const name = textOf(key, problems);
    if (seen.has(name)) problems.push(`${path}: key ${JSON.stringify(name)} appears twice`);
    seen.add(name);
    const v = kids[i + 1];
    if (!v) problems.push(`${path}: key ${JSON.stringify(name)} has no value`);
    else checkValue(v, `${path}.${name}`, problems);
  }
  for (let n: Node | null = el.firstChild; n; n = n.nextSibling)
    if (n.nodeType === TEXT && (n.nodeValue ?? "").trim())
      problems.push(`${path}: text outside of keys and values: ${JSON.stringify(n.nodeValue)}`);
}

export function checkPlist(text: string): string[] {
  const problems: string[] = [];
  let doc: ReturnType<DOMParser["parseFromString"]>;
  try {
    doc = new DOMParser({
      onError: (level: string, msg: string) => void problems.push(`XML ${level}: ${msg}`),
    }).parseFromString(text, "text/xml");
  } catch (e) {
    return [...problems, `XML fatal error: ${(e as Error).message}`];
  }
  if (!text.startsWith("<?xml ")) problems.push("no XML declaration");
  if (
    !/<!DOCTYPE plist PUBLIC "-\/\/Apple\/\/DTD PLIST 1\.0\/\/EN" "http:\/\/www\.apple\.com\/DTDs\/PropertyList-1\.0\.dtd">/.test(
      text,
    )
  )
    problems.push("no Apple plist DOCTYPE");
  const root = doc.documentElement;
  if (!root || root.tagName !== "plist") return [...problems, "the root element is not <plist>"];
  if ((root.getAttribute("version") ?? "1.0") !== "1.0")
    problems.push(`plist version ${root.getAttribute("version")}`);
  const top = children(root);
  if (top.length !== 1) problems.push(`<plist> holds ${top.length} values, not one`);
  else checkValue(top[0]!, "plist", problems);
  return problems;
}

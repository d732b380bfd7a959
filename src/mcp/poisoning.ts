/**
 * Tool-description poisoning detector: walks a tool definition (name, title, description, the whole
 * input and output schema: parameter names, descriptions, defaults, enums, examples) and the server's
 * `instructions`, reports hidden text and matches of the POISON_PATTERNS table. Pure, no I/O.
 */
import { findHidden, type HiddenKind, revealHidden } from "./hidden.ts";
import {
  type FieldKind,
  POISON_PATTERNS,
  type PoisonCategory,
  type PoisonPattern,
} from "./poison-patterns.ts";

export interface PoisonFinding {
  tool: string;
  /** Where in the definition, e.g. `inputSchema.properties.path.description`. */
  field: string;
  category: PoisonCategory | "hidden_text";
  /** Pattern id, or the hidden-text kind. */
  pattern: string;
  /** A short excerpt of what matched (revealed text), at most 60 characters. */
  excerpt: string;
  /** Set when the match was only visible after revealing hidden text. */
  hidden?: HiddenKind[];
}

export interface TextField {
  path: string;
  kind: FieldKind;
  text: string;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const seg = (k: string) => (/^[A-Za-z_$][\w$-]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`);
const DESCRIPTIVE = new Set(["description", "title", "$comment", "markdownDescription"]);

/**
 * Every string in a JSON schema, with its path and kind, in document order. The walk keeps its own
 * stack, so a schema nested as deep as JSON.parse accepts is walked to its last string: depth can
 * neither crash the walk nor hide a description from it.
 */
export function schemaFields(schema: unknown, path: string, out: TextField[] = []): TextField[] {
  // Work items, last first: a value to walk at a path, or a property name to report.
  const stack: (TextField | { value: unknown; path: string })[] = [{ value: schema, path }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if ("kind" in item) {
      out.push(item);
      continue;
    }
    const { value, path: at } = item;
    if (typeof value === "string") out.push({ path: at, kind: "value", text: value });
    else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${at}[${i}]` });
    } else if (isObj(value)) {
      const entries = Object.entries(value);
      for (let e = entries.length - 1; e >= 0; e--) {
        const [k, v] = entries[e]!;
        const p = `${at}${seg(k)}`;
        if (
          (k === "properties" || k === "patternProperties" || k === "$defs" || k === "definitions") &&
          isObj(v)
        ) {
          const named = Object.entries(v);
          for (let n = named.length - 1; n >= 0; n--) {
            const [name, sub] = named[n]!;
            const pp = `${p}${seg(name)}`;
            stack.push({ value: sub, path: pp }, { path: pp, kind: "name", text: name });
          }
        } else if (DESCRIPTIVE.has(k) && typeof v === "string")
          stack.push({ path: p, kind: "description", text: v });
        else stack.push({ value: v, path: p });
      }
    }
  }
  return out;
}

/** The strings of one tool definition that a model reads. */
export function toolFields(tool: Record<string, unknown>): TextField[] {
  const out: TextField[] = [];
  if (typeof tool.name === "string") out.push({ path: "name", kind: "name", text: tool.name });
  if (typeof tool.title === "string") out.push({ path: "title", kind: "description", text: tool.title });
  if (typeof tool.description === "string")
    out.push({ path: "description", kind: "description", text: tool.description });
  if (isObj(tool.annotations) && typeof tool.annotations.title === "string")
    out.push({ path: "annotations.title", kind: "description", text: tool.annotations.title });
  if (tool.inputSchema !== undefined) schemaFields(tool.inputSchema, "inputSchema", out);
  if (tool.outputSchema !== undefined) schemaFields(tool.outputSchema, "outputSchema", out);
  return out;
}

function excerpt(text: string, index: number, length: number): string {
  const s = text.slice(index, index + Math.min(length, 60)).replace(/\s+/g, " ");
  return length > 60 ? `${s}…` : s;
}

/** Scan one string. */
export function scanField(
  tool: string,
  field: TextField,
  patterns: PoisonPattern[] = POISON_PATTERNS,
): PoisonFinding[] {
  const out: PoisonFinding[] = [];
  const hidden = findHidden(field.text);
  for (const h of hidden)
    out.push({
      tool,
      field: field.path,
      category: "hidden_text",
      pattern: h.kind,
      excerpt: h.decoded
        ? excerpt(h.decoded, 0, h.decoded.length)
        : `${h.count} ${h.kind.replace("_", " ")} character(s)`,
    });
  const revealed = hidden.length ? revealHidden(field.text) : field.text;
  // Tag characters spell text that is not part of the visible run: scan it on its own too.
  const texts = [revealed];
  for (const h of hidden) if (h.decoded) texts.push(h.decoded);
  const seen = new Set<string>();
  for (const p of patterns) {
    if (p.fields && !p.fields.includes(field.kind)) continue;
    if (seen.has(p.category)) continue;
    for (const t of texts) {
      const m = p.pattern.exec(t);
      if (!m) continue;
      seen.add(p.category);
      const visible = p.pattern.test(field.text);
      out.push({
        tool,
        field: field.path,
        category: p.category,
        pattern: p.id,
        excerpt: excerpt(t, m.index, m[0].length),
        ...(visible ? {} : { hidden: hidden.map((h) => h.kind) }),
      });
      break;
    }
  }
  return out;
}

/** Scan a tool definition. */
export function scanTool(tool: Record<string, unknown>): PoisonFinding[] {
  const name = typeof tool.name === "string" ? tool.name : "(unnamed)";
  return toolFields(tool).flatMap((f) => scanField(name, f));
}

/** Poisoning in free text that reaches the model (server `instructions`, prompt descriptions). */
export function poisonInText(owner: string, path: string, text: string): PoisonFinding[] {
  return scanField(owner, { path, kind: "description", text });
}

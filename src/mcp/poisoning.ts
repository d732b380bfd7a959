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

/** Every string in a JSON schema, with its path and kind. */
export function schemaFields(schema: unknown, path: string, out: TextField[] = [], depth = 0): TextField[] {
  if (depth > 32) return out;
  if (typeof schema === "string") out.push({ path, kind: "value", text: schema });
  else if (Array.isArray(schema)) {
    for (let i = 0; i < schema.length; i++) schemaFields(schema[i], `${path}[${i}]`, out, depth + 1);
  } else if (isObj(schema)) {
    for (const [k, v] of Object.entries(schema)) {
      const p = `${path}${seg(k)}`;
      if (
        (k === "properties" || k === "patternProperties" || k === "$defs" || k === "definitions") &&
        isObj(v)
      ) {
        for (const [name, sub] of Object.entries(v)) {
          const pp = `${p}${seg(name)}`;
          out.push({ path: pp, kind: "name", text: name });
          schemaFields(sub, pp, out, depth + 1);
        }
      } else if (DESCRIPTIVE.has(k) && typeof v === "string")
        out.push({ path: p, kind: "description", text: v });
      else schemaFields(v, p, out, depth + 1);
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

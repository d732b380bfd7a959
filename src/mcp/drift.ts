/**
 * Tool drift ("rug pull") detection: a SHA-256 of every tool definition per server, compared with the
 * baseline persisted from earlier sessions, and a readable diff of what changed (description length,
 * added text, parameter changes). Hashing and diffing are pure; persistence is behind BaselineStore.
 */
import { createHash } from "node:crypto";

export interface Baseline {
  sha256: string;
  /** The definition as canonical JSON. */
  definition: string;
}

/** Where baselines live: the store's `mcp_tool_baselines` table, or a file when there is no store. */
export interface BaselineStore {
  get(serverId: string, tool: string): Baseline | null;
  put(serverId: string, tool: string, baseline: Baseline): void;
}

/** The part of the store's McpRepo that baselines need (src/store/mcp.ts). */
export interface BaselineRepo {
  getBaseline(server_id: string, tool_name: string): { sha256: string; definition: unknown } | null;
  putBaseline(server_id: string, tool_name: string, sha256: string, definition: unknown): unknown;
}

/** Baselines in the store's `mcp_tool_baselines` table. */
export class StoreBaselines implements BaselineStore {
  constructor(readonly repo: BaselineRepo) {}
  get(serverId: string, tool: string): Baseline | null {
    const b = this.repo.getBaseline(serverId, tool);
    if (!b) return null;
    return { sha256: b.sha256, definition: canonicalJson(b.definition) };
  }
  put(serverId: string, tool: string, b: Baseline): void {
    this.repo.putBaseline(serverId, tool, b.sha256, JSON.parse(b.definition));
  }
}

/** In-memory baselines (tests, `--no-store`). */
export class MemoryBaselines implements BaselineStore {
  #m = new Map<string, Baseline>();
  get(s: string, t: string) {
    return this.#m.get(`${s}\u0000${t}`) ?? null;
  }
  put(s: string, t: string, b: Baseline) {
    this.#m.set(`${s}\u0000${t}`, b);
  }
}

/**
 * JSON with object keys sorted, so that key order never looks like drift. The walk keeps its own
 * stack (a tool definition from a server may be nested as deep as JSON.parse accepts).
 */
export function canonicalJson(v: unknown): string {
  const out: string[] = [];
  // Work items, last first: a value to write, or text to emit (separators and closing brackets).
  const stack: ({ value: unknown } | string)[] = [{ value: v }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === "string") {
      out.push(item);
      continue;
    }
    const x = item.value;
    if (Array.isArray(x)) {
      out.push("[");
      stack.push("]");
      for (let i = x.length - 1; i >= 0; i--) {
        stack.push({ value: x[i] === undefined ? null : x[i] });
        if (i > 0) stack.push(",");
      }
    } else if (x && typeof x === "object") {
      const entries = Object.entries(x as Record<string, unknown>)
        .filter(([, e]) => e !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      out.push("{");
      stack.push("}");
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, e] = entries[i]!;
        stack.push({ value: e }, `${i > 0 ? "," : ""}${JSON.stringify(k)}:`);
      }
    } else out.push(JSON.stringify(x) ?? "null");
  }
  return out.join("");
}

export function baselineOf(tool: unknown): Baseline {
  const definition = canonicalJson(tool);
  return { sha256: createHash("sha256").update(definition).digest("hex"), definition };
}

export interface ToolDiff {
  tool: string;
  description: { before: number; after: number };
  /** Text present in the new description and not in the old one (trimmed to 200 characters). */
  added_text: string;
  removed_text: string;
  parameters: { added: string[]; removed: string[]; changed: string[] };
  /** Other top-level fields that changed (title, annotations, outputSchema…). */
  other: string[];
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const clip = (s: string, n = 200) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** The part of `b` not in `a` and the part of `a` not in `b`, after removing the common prefix and suffix. */
export function textDelta(a: string, b: string): { added: string; removed: string } {
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  return { added: b.slice(p, b.length - s).trim(), removed: a.slice(p, a.length - s).trim() };
}

function paramSummary(schema: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (!isObj(schema) || !isObj(schema.properties)) return out;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  for (const [name, def] of Object.entries(schema.properties)) {
    out.set(name, canonicalJson({ def, required: required.has(name) }));
  }
  return out;
}

function describeParamChange(name: string, before: string, after: string): string {
  const a = JSON.parse(before) as { def: Record<string, unknown>; required: boolean };
  const b = JSON.parse(after) as { def: Record<string, unknown>; required: boolean };
  const bits: string[] = [];
  const keys = new Set([...Object.keys(a.def ?? {}), ...Object.keys(b.def ?? {})]);
  for (const k of [...keys].sort()) {
    const x = canonicalJson(a.def?.[k]);
    const y = canonicalJson(b.def?.[k]);
    if (x === y) continue;
    if (k === "description" && typeof a.def[k] === "string" && typeof b.def[k] === "string") {
      const d = textDelta(a.def[k] as string, b.def[k] as string);
      bits.push(
        `description${d.added ? ` +"${clip(d.added, 80)}"` : ""}${d.removed ? ` -"${clip(d.removed, 80)}"` : ""}`,
      );
    } else bits.push(`${k} ${clip(x, 40)} → ${clip(y, 40)}`);
  }
  if (a.required !== b.required) bits.push(b.required ? "now required" : "now optional");
  return `${name} (${bits.join("; ")})`;
}

export function diffTools(before: Record<string, unknown>, after: Record<string, unknown>): ToolDiff {
  const da = typeof before.description === "string" ? before.description : "";
  const db = typeof after.description === "string" ? after.description : "";
  const delta = textDelta(da, db);
  const pa = paramSummary(before.inputSchema);
  const pb = paramSummary(after.inputSchema);
  const added = [...pb.keys()].filter((k) => !pa.has(k));
  const removed = [...pa.keys()].filter((k) => !pb.has(k));
  const changed = [...pb.keys()]
    .filter((k) => pa.has(k) && pa.get(k) !== pb.get(k))
    .map((k) => describeParamChange(k, pa.get(k)!, pb.get(k)!));
  const other: string[] = [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const k of [...keys].sort()) {
    if (k === "description" || k === "name") continue;
    if (k === "inputSchema") {
      const { properties: _a, required: _ra, ...restA } = isObj(before.inputSchema) ? before.inputSchema : {};
      const { properties: _b, required: _rb, ...restB } = isObj(after.inputSchema) ? after.inputSchema : {};
      if (canonicalJson(restA) !== canonicalJson(restB)) other.push("inputSchema");
      continue;
    }
    if (canonicalJson(before[k]) !== canonicalJson(after[k])) other.push(k);
  }
  return {
    tool: String(after.name ?? before.name ?? ""),
    description: { before: da.length, after: db.length },
    added_text: clip(delta.added),
    removed_text: clip(delta.removed),
    parameters: { added, removed, changed },
    other,
  };
}

/** One line a person can read: what changed in the tool. */
export function formatDiff(d: ToolDiff): string {
  const parts: string[] = [];
  if (d.description.before !== d.description.after || d.added_text || d.removed_text) {
    let s = `description ${d.description.before} → ${d.description.after} chars`;
    if (d.added_text) s += `, added "${d.added_text}"`;
    if (d.removed_text) s += `, removed "${d.removed_text}"`;
    parts.push(s);
  }
  if (d.parameters.added.length) parts.push(`parameters added: ${d.parameters.added.join(", ")}`);
  if (d.parameters.removed.length) parts.push(`parameters removed: ${d.parameters.removed.join(", ")}`);
  if (d.parameters.changed.length) parts.push(`parameters changed: ${d.parameters.changed.join(", ")}`);
  if (d.other.length) parts.push(`other fields changed: ${d.other.join(", ")}`);
  return parts.join("; ") || "definition changed";
}

export type DriftResult =
  | { tool: string; status: "new" | "same" }
  | { tool: string; status: "changed"; diff: ToolDiff; previous: Baseline; current: Baseline };

/** Compare a tool with its baseline. Does not write: the caller decides (warn re-baselines, block keeps). */
export function checkDrift(
  store: BaselineStore,
  serverId: string,
  tool: Record<string, unknown>,
): DriftResult {
  const name = String(tool.name ?? "");
  const current = baselineOf(tool);
  const previous = store.get(serverId, name);
  if (!previous) return { tool: name, status: "new" };
  if (previous.sha256 === current.sha256) return { tool: name, status: "same" };
  let before: Record<string, unknown> = {};
  try {
    before = JSON.parse(previous.definition) as Record<string, unknown>;
  } catch {
    /* unreadable baseline: diff against nothing */
  }
  return { tool: name, status: "changed", diff: diffTools(before, tool), previous, current };
}

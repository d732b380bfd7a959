/**
 * Baselines: known findings that `sluice scan --baseline FILE` suppresses. An entry is keyed by rule,
 * file and a salted scrypt hash of the value's sha256, never by line, so it survives the finding
 * moving within the file; it never holds the raw value (only the masked preview, for humans).
 */
import { randomBytes, scryptSync } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { z } from "zod";
import type { ScanFinding } from "./types.ts";

export const BASELINE_VERSION = 1;

const entrySchema = z.object({
  rule: z.string(),
  file: z.string(),
  hash: z.string(),
  preview: z.string().optional(),
  line: z.number().int().optional(),
});
export const baselineSchema = z.object({
  sluice_baseline: z.literal(BASELINE_VERSION),
  created_at: z.string().optional(),
  salt: z.string().regex(/^[0-9a-f]{32}$/),
  entries: z.array(entrySchema),
});
export type Baseline = z.infer<typeof baselineSchema>;
export type BaselineEntry = z.infer<typeof entrySchema>;

export class BaselineError extends Error {
  override name = "BaselineError";
}

/** Costly enough that guessing a short value (an SSN) from a baseline entry takes real work. */
const SCRYPT = { N: 1024, r: 8, p: 1 };

export class BaselineHasher {
  readonly #salt: Buffer;
  readonly #cache = new Map<string, string>();
  constructor(readonly salt: string) {
    this.#salt = Buffer.from(salt, "hex");
  }
  hash(f: Pick<ScanFinding, "rule" | "file" | "content_hash">): string {
    const key = `${f.rule}\0${f.file}\0${f.content_hash}`;
    let h = this.#cache.get(key);
    if (!h) {
      h = scryptSync(key, this.#salt, 16, SCRYPT).toString("hex");
      this.#cache.set(key, h);
    }
    return h;
  }
}

export function loadBaseline(path: string): Baseline {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new BaselineError(`cannot read baseline ${path}: ${(e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not the parser's message: JavaScriptCore quotes the offending token, which could be a secret.
    throw new BaselineError(`cannot read baseline ${path}: not valid JSON`);
  }
  const parsed = baselineSchema.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new BaselineError(
      `baseline ${path} is invalid: ${i.path.join(".") || "(top level)"}: ${i.message}`,
    );
  }
  return parsed.data;
}

/** Split findings into those the baseline does not know and the number it suppressed. */
export function applyBaseline(
  findings: ScanFinding[],
  baseline: Baseline,
): { kept: ScanFinding[]; suppressed: number } {
  const hasher = new BaselineHasher(baseline.salt);
  const known = new Set(baseline.entries.map((e) => `${e.rule}\0${e.file}\0${e.hash}`));
  const kept: ScanFinding[] = [];
  let suppressed = 0;
  for (const f of findings) {
    if (known.has(`${f.rule}\0${f.file}\0${hasher.hash(f)}`)) suppressed++;
    else kept.push(f);
  }
  return { kept, suppressed };
}

export function createBaseline(findings: ScanFinding[]): Baseline {
  const salt = randomBytes(16).toString("hex");
  const hasher = new BaselineHasher(salt);
  const seen = new Set<string>();
  const entries: BaselineEntry[] = [];
  for (const f of findings) {
    const hash = hasher.hash(f);
    const key = `${f.rule}\0${f.file}\0${hash}`;
    if (seen.has(key)) continue;
    seen.add(key);
    entries.push({ rule: f.rule, file: f.file, hash, preview: f.preview, line: f.line });
  }
  entries.sort((a, b) => (a.file === b.file ? (a.line ?? 0) - (b.line ?? 0) : a.file < b.file ? -1 : 1));
  return { sluice_baseline: BASELINE_VERSION, created_at: new Date().toISOString(), salt, entries };
}

export function writeBaseline(path: string, baseline: Baseline): void {
  writeFileSync(path, `${JSON.stringify(baseline, null, 2)}\n`);
}

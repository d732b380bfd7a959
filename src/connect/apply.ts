/**
 * `sluice connect <tool> --apply` and `--undo`: the tool's settings (tools.ts) written where the tool
 * reads them, and put back as they were.
 *
 * - Environment variables go in a marked block of the shell profile (`~/.zshrc`, `~/.bashrc`, fish's
 *   `config.fish`, else `~/.profile`), replaced whole when it is there already.
 * - TOML keys (Codex's `~/.codex/config.toml`) are set as top-level lines, leaving every other line
 *   and comment as it was; the file is parsed before (a broken file is not touched) and after (the
 *   keys must read back as written).
 * - JSON keys (OpenCode's `opencode.json`) are set at their path, every other key kept; the file is
 *   written again with two-space indentation (a file that is not plain JSON is not touched).
 *
 * Before a file is changed, its bytes are copied beside it (`<file>.sluice-backup`); the list of what
 * was changed is kept in `{config_dir}/connect.json` with a hash of what was written. `--undo` puts
 * every backup back byte for byte (or removes a file sluice created), unless the file was changed
 * since, which it reports instead of overwriting someone's edit.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse as parseToml } from "smol-toml";
import type { Setting, Tool, ToolId } from "./tools.ts";

export interface ConnectEnv {
  home: string;
  /** The user's shell (`$SHELL`), to choose the profile file. */
  shell: string | undefined;
  /** sluice's config directory, where connect.json is kept. */
  configDir: string;
}

interface Changed {
  file: string;
  /** The backup of the file as it was, or null when sluice created the file. */
  backup: string | null;
  /** SHA-256 of what sluice wrote: undo only restores a file still as sluice left it. */
  written: string;
}

type State = Partial<Record<ToolId, Changed[]>>;

const sha256 = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
const stateFile = (env: ConnectEnv) => join(env.configDir, "connect.json");

function readState(env: ConnectEnv): State {
  try {
    return JSON.parse(readFileSync(stateFile(env), "utf8")) as State;
  } catch {
    return {};
  }
}

function writeState(env: ConnectEnv, state: State): void {
  mkdirSync(env.configDir, { recursive: true });
  writeFileSync(stateFile(env), `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/** The profile file the user's shell reads, and how it sets a variable. */
export function shellProfile(env: ConnectEnv): {
  file: string;
  line: (name: string, value: string) => string;
} {
  const sh = (env.shell ?? "").split("/").pop() ?? "";
  if (sh === "fish")
    return { file: join(env.home, ".config/fish/config.fish"), line: (n, v) => `set -gx ${n} ${v}` };
  const file = sh === "zsh" ? ".zshrc" : sh === "bash" ? ".bashrc" : ".profile";
  return { file: join(env.home, file), line: (n, v) => `export ${n}=${v}` };
}

const blockStart = (id: ToolId) => `# >>> sluice connect ${id} >>>`;
const blockEnd = (id: ToolId) => `# <<< sluice connect ${id} <<<`;

/** `text` with the tool's block set to `lines` (added at the end, or replacing the block there). */
function withBlock(text: string, id: ToolId, lines: string[]): string {
  const block = [blockStart(id), ...lines, blockEnd(id)].join("\n");
  const start = text.indexOf(blockStart(id));
  const end = text.indexOf(blockEnd(id));
  if (start !== -1 && end > start)
    return text.slice(0, start) + block + text.slice(end + blockEnd(id).length);
  const sep = text === "" || text.endsWith("\n") ? "" : "\n";
  return `${text}${sep}${text === "" ? "" : "\n"}${block}\n`;
}

/** `text` (a TOML document) with top-level `key = "value"` set, other lines untouched. */
function withTomlKey(text: string, key: string, value: string): string {
  const lines = text === "" ? [] : text.split("\n");
  const firstTable = lines.findIndex((l) => /^\s*\[/.test(l));
  // Before the first table, else at the end (before the empty string a final newline leaves).
  const top = firstTable !== -1 ? firstTable : lines.at(-1) === "" ? lines.length - 1 : lines.length;
  const line = `${key} = ${JSON.stringify(value)}`;
  const at = lines.slice(0, top).findIndex((l) => new RegExp(`^\\s*${key}\\s*=`).test(l));
  if (at !== -1) lines[at] = line;
  else lines.splice(top, 0, line);
  const out = lines.join("\n");
  return out.endsWith("\n") ? out : `${out}\n`;
}

/** `text` (a JSON document) with the value at the dotted `key` set, other keys kept. */
function withJsonKey(file: string, text: string, key: string, value: string): string {
  let doc: unknown;
  try {
    doc = text.trim() === "" ? {} : JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not plain JSON, so it is left alone: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc))
    throw new Error(`${file} does not hold a JSON object, so it is left alone`);
  let at = doc as Record<string, unknown>;
  const path = key.split(".");
  for (const k of path.slice(0, -1)) {
    const next = at[k];
    if (next !== undefined && (typeof next !== "object" || next === null || Array.isArray(next)))
      throw new Error(`${file}: ${key} cannot be set (${k} is not an object); left alone`);
    at = (at[k] ??= {}) as Record<string, unknown>;
  }
  if (at[path.at(-1)!] === value) return text;
  at[path.at(-1)!] = value;
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** The value at the dotted `key` of a JSON document, or undefined. */
export function jsonValue(doc: unknown, key: string): unknown {
  let at = doc;
  for (const k of key.split("."))
    at = at && typeof at === "object" ? (at as Record<string, unknown>)[k] : undefined;
  return at;
}

/** Where each setting goes: file → its new text. Throws when a file cannot be read as what it must be. */
function plan(tool: Tool, env: ConnectEnv): Map<string, { before: string | null; after: string }> {
  const files = new Map<string, { before: string | null; after: string }>();
  const current = (file: string) => {
    const seen = files.get(file);
    if (seen) return seen;
    const before = existsSync(file) ? readFileSync(file, "utf8") : null;
    const entry = { before, after: before ?? "" };
    files.set(file, entry);
    return entry;
  };
  const envSettings = tool.settings.filter((s): s is Extract<Setting, { kind: "env" }> => s.kind === "env");
  if (envSettings.length > 0) {
    const profile = shellProfile(env);
    const f = current(profile.file);
    f.after = withBlock(
      f.after,
      tool.id,
      envSettings.map((s) => profile.line(s.name, s.value)),
    );
  }
  for (const s of tool.settings) {
    if (s.kind === "env") continue;
    const file = s.file.replace(/^~(?=\/)/, env.home);
    const f = current(file);
    if (s.kind === "json") {
      f.after = withJsonKey(file, f.after, s.key, s.value);
      if (jsonValue(JSON.parse(f.after), s.key) !== s.value)
        throw new Error(`${file}: ${s.key} did not read back as written; left alone`);
      continue;
    }
    try {
      parseToml(f.after);
    } catch (e) {
      throw new Error(
        `${file} is not valid TOML, so it is left alone: ${(e as Error).message.split("\n")[0]}`,
      );
    }
    f.after = withTomlKey(f.after, s.key, s.value);
    const back = parseToml(f.after) as Record<string, unknown>;
    if (back[s.key] !== s.value)
      throw new Error(`${file}: ${s.key} did not read back as written; left alone`);
  }
  return files;
}

export interface ApplyReport {
  /** Files written, with their backups. */
  changed: { file: string; backup: string | null }[];
  /** Files that already held the settings. */
  unchanged: string[];
}

/** Write the tool's settings. Running it again changes nothing. */
export function applyTool(tool: Tool, env: ConnectEnv): ApplyReport {
  const state = readState(env);
  const record = state[tool.id] ?? [];
  const report: ApplyReport = { changed: [], unchanged: [] };
  for (const [file, { before, after }] of plan(tool, env)) {
    if (before === after) {
      report.unchanged.push(file);
      continue;
    }
    const earlier = record.find((c) => c.file === file);
    let backup = earlier ? earlier.backup : null;
    if (!earlier && before !== null) {
      backup = `${file}.sluice-backup`;
      copyFileSync(file, backup);
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, after);
    const entry = { file, backup, written: sha256(after) };
    if (earlier) Object.assign(earlier, entry);
    else record.push(entry);
    report.changed.push({ file, backup });
  }
  state[tool.id] = record;
  writeState(env, state);
  return report;
}

export interface UndoReport {
  restored: string[];
  removed: string[];
  /** Files changed since sluice wrote them: left as they are. */
  kept: string[];
}

/** Put back every file `apply` changed for this tool. */
export function undoTool(id: ToolId, env: ConnectEnv): UndoReport {
  const state = readState(env);
  const report: UndoReport = { restored: [], removed: [], kept: [] };
  const left: Changed[] = [];
  for (const c of state[id] ?? []) {
    const now = existsSync(c.file) ? readFileSync(c.file, "utf8") : null;
    if (now !== null && sha256(now) !== c.written) {
      report.kept.push(c.file);
      left.push(c);
      continue;
    }
    if (c.backup) {
      copyFileSync(c.backup, c.file);
      rmSync(c.backup, { force: true });
      report.restored.push(c.file);
    } else {
      rmSync(c.file, { force: true });
      report.removed.push(c.file);
    }
  }
  if (left.length > 0) state[id] = left;
  else delete state[id];
  writeState(env, state);
  return report;
}

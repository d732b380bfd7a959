/**
 * What every command line goes through before a command runs: the command is found in the tree
 * (`sluice rules validate`), its flags are checked against what it declares, and `--help` is
 * rendered here. A mistake is refused rather than ignored: an unknown command or flag, or a flag that
 * needs a value and has none, exits with the command's usage code and one line naming the mistake,
 * with a "did you mean" when a known name is close. A flag whose value is optional (`scan --diff`)
 * never takes the next flag as its value.
 *
 * Help is written for a reader: plain when stdout is not a terminal, wrapped to its width, each flag
 * once (a boolean as `--[no-]<flag>`), then the examples.
 */
import type { ArgDef, CommandDef } from "citty";

// biome-ignore lint/suspicious/noExplicitAny: command definitions of any argument shape
type Command = CommandDef<any>;

/** Flags whose value may be left out (the flag alone means something). */
const OPTIONAL_VALUE: Record<string, string[]> = { scan: ["diff"] };
/** `sluice scan` exits 2 for an alert: its usage errors use 4. */
const USAGE_EXIT: Record<string, number> = { scan: 4 };

export interface Resolved {
  cmd: Command;
  /** Command names from the root: ["rules", "validate"]. */
  path: string[];
  /** The arguments after the command names. */
  rest: string[];
}

export class UsageProblem extends Error {
  constructor(
    message: string,
    readonly path: string[],
  ) {
    super(message);
  }
  get exitCode(): number {
    return USAGE_EXIT[this.path[0] ?? ""] ?? 2;
  }
}

async function value<T>(v: T | (() => T | Promise<T>) | Promise<T> | undefined): Promise<T | undefined> {
  return typeof v === "function" ? await (v as () => T | Promise<T>)() : await v;
}

/** Edit distance, for suggestions (names are short). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** The closest of `names` to `word`, when one is close enough to be what was meant. */
export function suggest(word: string, names: string[]): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const n of names) {
    const d = n.startsWith(word) || word.startsWith(n) ? 1 : distance(word, n);
    if (d < bestD) {
      bestD = d;
      best = n;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

/** Find the command `argv` names, below `root`. */
export async function resolveCommand(root: Command, argv: string[]): Promise<Resolved> {
  let cmd = root;
  const path: string[] = [];
  let i = 0;
  for (;;) {
    const subs = await value(cmd.subCommands);
    if (!subs) break;
    const word = argv[i];
    if (word === undefined || word.startsWith("-")) break;
    const next = (subs as Record<string, unknown>)[word];
    if (!next) {
      const hint = suggest(word, Object.keys(subs));
      const where = ["sluice", ...path].join(" ");
      throw new UsageProblem(
        `unknown command "${word}"${hint ? ` (did you mean "${hint}"?)` : ""}; see ${where} --help`,
        path,
      );
    }
    cmd = (await value(next as Command)) as Command;
    path.push(word);
    i++;
  }
  return { cmd, path, rest: argv.slice(i) };
}

/**
 * Check `rest` against the flags `cmd` declares, and return it with each optional-value flag that
 * stands alone written as `--flag=`. Arguments after `--` are not looked at.
 */
export async function checkFlags(r: Resolved): Promise<string[]> {
  const args = ((await value(r.cmd.args)) ?? {}) as Record<string, ArgDef>;
  const byName = new Map<string, { name: string; def: ArgDef }>();
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    byName.set(name, { name, def });
    const aliases = "alias" in def && def.alias ? (Array.isArray(def.alias) ? def.alias : [def.alias]) : [];
    for (const a of aliases) byName.set(a, { name, def });
  }
  const optional = new Set(OPTIONAL_VALUE[r.path[0] ?? ""] ?? []);
  const where = ["sluice", ...r.path].join(" ");
  const flagNames = [...byName.keys()].filter((n) => n.length > 1).map((n) => `--${n}`);
  const out: string[] = [];
  for (let i = 0; i < r.rest.length; i++) {
    const a = r.rest[i]!;
    if (a === "--") {
      out.push(...r.rest.slice(i));
      break;
    }
    if (!a.startsWith("-") || a === "-") {
      out.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const raw = (eq === -1 ? a : a.slice(0, eq)).replace(/^--?/, "");
    if (raw === "help" || raw === "h") {
      out.push(a);
      continue;
    }
    const negated = raw.startsWith("no-") && byName.get(raw.slice(3))?.def.type === "boolean";
    const known = byName.get(negated ? raw.slice(3) : raw);
    if (!known) {
      const hint = suggest(`--${raw}`, flagNames);
      throw new UsageProblem(
        `unknown flag ${a.slice(0, eq === -1 ? undefined : eq)}${hint ? ` (did you mean ${hint}?)` : ""}; see ${where} --help`,
        r.path,
      );
    }
    const takesValue = known.def.type === "string" || known.def.type === "enum";
    if (!takesValue || eq !== -1) {
      out.push(a);
      continue;
    }
    const next = r.rest[i + 1];
    const hasValue = next !== undefined && (!next.startsWith("-") || next === "-" || /^-\d/.test(next));
    if (hasValue) {
      out.push(a, next);
      i++;
    } else if (optional.has(known.name)) out.push(`--${known.name}=`);
    else throw new UsageProblem(`${a} needs a value; see ${where} --help`, r.path);
  }
  // Required positionals, counted before `--` (what follows belongs to a wrapped command).
  const ownEnd = out.indexOf("--");
  const own = ownEnd === -1 ? out : out.slice(0, ownEnd);
  const positionals = own.filter(
    (a, i) => (!a.startsWith("-") || a === "-") && !takesValueAt(own, i, byName),
  );
  const required = Object.entries(args).filter(([, d]) => d.type === "positional" && d.required !== false);
  if (positionals.length < required.length) {
    const [name] = required[positionals.length]!;
    throw new UsageProblem(`missing <${name}>; see ${where} --help`, r.path);
  }
  return out;
}

/** Whether `args[i]` is the value of the flag before it (`--type pii`), not a positional. */
function takesValueAt(args: string[], i: number, byName: Map<string, { def: ArgDef }>): boolean {
  const prev = args[i - 1];
  if (!prev?.startsWith("-") || prev.includes("=")) return false;
  const def = byName.get(prev.replace(/^--?/, ""))?.def;
  return def?.type === "string" || def?.type === "enum";
}

/** Wrap `text` to `width` columns, each line after the first indented by `indent`. */
function wrap(text: string, width: number, indent: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  const lines: string[] = [];
  let line = "";
  for (const w of words) {
    if (line && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines.join(`\n${" ".repeat(indent)}`);
}

export interface HelpOptions {
  color: boolean;
  width: number;
  examples: string[];
  /** A line of usage to show instead of the generated one (`sluice mcp [options] -- <command>`). */
  usage?: string;
}

/** The help of a command, for a terminal or a pipe. */
export async function renderHelp(r: Resolved, o: HelpOptions): Promise<string> {
  const bold = (s: string) => (o.color ? `\x1b[1m${s}\x1b[22m` : s);
  const cyan = (s: string) => (o.color ? `\x1b[36m${s}\x1b[39m` : s);
  const width = Math.max(40, Math.min(o.width, 100));
  const meta = (await value(r.cmd.meta)) ?? {};
  const args = ((await value(r.cmd.args)) ?? {}) as Record<string, ArgDef>;
  const subs = (await value(r.cmd.subCommands)) as Record<string, Command> | undefined;
  const name = ["sluice", ...r.path].join(" ");
  const positionals = Object.entries(args).filter(([, d]) => d.type === "positional");
  const flags = Object.entries(args).filter(([, d]) => d.type !== "positional");
  const out: string[] = [];
  if (meta.description) out.push(wrap(meta.description, width, 0), "");
  const usage =
    o.usage ??
    `${name}${subs ? " <command>" : ""}${flags.length ? " [options]" : ""}${positionals.map(([n, d]) => (d.required ? ` <${n}>` : ` [${n}]`)).join("")}`;
  out.push(`${bold("Usage:")} ${cyan(wrap(usage, width - 7, 7))}`, "");
  const table = (rows: [string, string][]) => {
    const left = Math.min(32, Math.max(...rows.map(([l]) => l.length)) + 2);
    for (const [l, d] of rows) {
      const head = `  ${l.padEnd(left)}`;
      out.push(
        head.length > left + 2
          ? `  ${cyan(l)}\n${" ".repeat(left + 2)}${wrap(d, width - left - 2, left + 2)}`
          : `  ${cyan(l.padEnd(left))}${wrap(d, width - left - 2, left + 2)}`,
      );
    }
    out.push("");
  };
  if (subs) {
    out.push(bold("Commands:"));
    const rows: [string, string][] = [];
    for (const [n, c] of Object.entries(subs)) {
      const m = (await value((await value(c))?.meta)) ?? {};
      rows.push([n, m.description ?? ""]);
    }
    table(rows);
  }
  if (positionals.length) {
    out.push(bold("Arguments:"));
    table(positionals.map(([n, d]) => [n, d.description ?? ""]));
  }
  if (flags.length) {
    out.push(bold("Options:"));
    table(
      flags.map(([n, d]) => {
        const alias = "alias" in d && d.alias ? (Array.isArray(d.alias) ? d.alias : [d.alias]) : [];
        const short = alias
          .filter((a) => a.length === 1)
          .map((a) => `-${a}, `)
          .join("");
        const flag = d.type === "boolean" ? `--[no-]${n}` : `--${n}`;
        const val =
          d.type === "string" ? (OPTIONAL_VALUE[r.path[0] ?? ""]?.includes(n) ? " [value]" : " <value>") : "";
        const def = d.type === "string" && d.default !== undefined ? ` (default: ${d.default})` : "";
        return [`${short}${flag}${val}`, `${d.description ?? ""}${def}`];
      }),
    );
  }
  if (o.examples.length) {
    out.push(bold("Examples:"));
    for (const e of o.examples) out.push(`  ${e}`);
    out.push("");
  }
  return out.join("\n");
}

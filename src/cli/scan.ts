import { writeFileSync } from "node:fs";
import { defineCommand } from "citty";
import pkg from "../../package.json" with { type: "json" };

/** The flags `run` reads, as citty parses them (both spellings of a two-word flag). */
export interface ScanArgs {
  _: string[];
  diff?: string;
  baseline?: string;
  "create-baseline"?: string;
  format?: string;
  output?: string;
  config?: string;
  rules?: string;
  "default-rules"?: boolean;
  color?: boolean;
  jobs?: string;
}

const STRING_FLAGS: Record<string, keyof ScanArgs> = {
  "--diff": "diff",
  "--baseline": "baseline",
  "--create-baseline": "create-baseline",
  "--format": "format",
  "-f": "format",
  "--output": "output",
  "-o": "output",
  "--config": "config",
  "-c": "config",
  "--rules": "rules",
  "--jobs": "jobs",
  "-j": "jobs",
};
const BOOLEAN_FLAGS: Record<string, "default-rules" | "color"> = {
  "--default-rules": "default-rules",
  "--color": "color",
};

/**
 * The plain command lines of `sluice scan` parsed without citty (~1-2 ms of a scan's start-up: its
 * parser converts every flag name between camel and kebab case, again on each read of a flag that
 * was not given). Only `--flag value`, `--flag=value`, `-x value`, the boolean flags and
 * positionals; anything else (help, `--`, an unknown or camelCase flag, a value that starts with
 * "-", a flag with no value) returns null, and citty parses the command line as before. The test
 * compares both parsers on many command lines.
 */
export function parseScanArgs(raw: string[]): ScanArgs | null {
  const out: ScanArgs = { _: [], format: "text", "default-rules": true, color: true };
  const negated: ("default-rules" | "color")[] = [];
  for (let i = 0; i < raw.length; i++) {
    const a = raw[i]!;
    if (a === "-" || !a.startsWith("-")) {
      out._.push(a);
      continue;
    }
    const bool = BOOLEAN_FLAGS[a];
    if (bool) {
      out[bool] = true;
      continue;
    }
    const no = a.startsWith("--no-") ? BOOLEAN_FLAGS[`--${a.slice(5)}`] : undefined;
    if (no) {
      negated.push(no); // as in citty: `--no-color` anywhere wins over `--color`
      continue;
    }
    const eq = a.startsWith("--") ? a.indexOf("=") : -1;
    const key = STRING_FLAGS[eq === -1 ? a : a.slice(0, eq)];
    if (!key) return null;
    let value: string | undefined;
    if (eq !== -1) value = a.slice(eq + 1);
    else {
      value = raw[++i];
      if (value === undefined || value.startsWith("-")) return null;
    }
    (out as unknown as Record<string, string>)[key] = value;
  }
  for (const k of negated) out[k] = false;
  return out;
}

/** Every value of a repeatable string flag (`--rules a.yaml --rules b.yaml`). */
function allValues(raw: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const a = raw[i]!;
    if (a === `--${name}` && raw[i + 1] !== undefined) out.push(raw[++i]!);
    else if (a.startsWith(`--${name}=`)) out.push(a.slice(name.length + 3));
  }
  return out;
}

export default defineCommand({
  meta: {
    name: "scan",
    description:
      "Scan files, directories, stdin or a git diff for secrets, personal data and proprietary content. Exit code: 0 clean, 1 block, 2 alert, 3 log, 4 error.",
  },
  args: {
    paths: {
      type: "positional",
      required: false,
      description: "Files or directories; '-' or none reads stdin",
    },
    diff: {
      type: "string",
      description: "Scan the lines a change adds: staged changes (no value), a ref, or a range a..b",
    },
    baseline: { type: "string", description: "Suppress the findings recorded in this baseline file" },
    "create-baseline": { type: "string", description: "Write the current findings to this baseline file" },
    format: { type: "string", alias: "f", default: "text", description: "text, json or sarif" },
    output: { type: "string", alias: "o", description: "Write the report to this file instead of stdout" },
    config: { type: "string", alias: "c", description: "Config file (default {config_dir}/config.yaml)" },
    rules: { type: "string", description: "Extra rules file (YAML or JSON); repeatable" },
    "default-rules": {
      type: "boolean",
      default: true,
      description: "Use the built-in rules (--no-default-rules)",
    },
    color: { type: "boolean", default: true, description: "Colour output (--no-color)" },
    jobs: { type: "string", alias: "j", description: "Parallel workers (default: number of cores, max 8)" },
  },
  run: ({ args, rawArgs }) => scanCommand(args as unknown as ScanArgs, rawArgs),
});

/** `sluice scan` with parsed flags (from citty or parseScanArgs). */
export async function scanCommand(args: ScanArgs, rawArgs: string[]): Promise<void> {
  const { runScan, ScanError } = await import("../scan/run.ts");
  const { renderJson, renderSummaryLine, renderText, reportExitCode } = await import("../scan/report.ts");
  const { EXIT } = await import("../scan/types.ts");
  const fail = (msg: string) => {
    process.stderr.write(`sluice scan: ${msg}\n`);
    process.exit(EXIT.error);
  };
  const format = args.format ?? "text";
  if (!["text", "json", "sarif"].includes(format))
    fail(`--format must be text, json or sarif (got "${format}")`);
  let jobs: number | undefined;
  if (args.jobs !== undefined) {
    jobs = Number(args.jobs);
    if (!Number.isInteger(jobs) || jobs < 1) fail(`--jobs must be a positive integer (got "${args.jobs}")`);
  }
  const paths = (args._ as string[]) ?? [];
  let diff = args.diff as string | undefined;
  if (diff !== undefined && diff !== "") {
    // `--diff src/` means "staged changes under src/" when src/ is not a revision.
    const { isRevision } = await import("../scan/diff.ts");
    const { existsSync } = await import("node:fs");
    if (!diff.includes("..") && existsSync(diff) && !(await isRevision(diff, process.cwd()))) {
      paths.unshift(diff);
      diff = "";
    }
  }
  const rulesFiles = allValues(rawArgs, "rules");
  if (rulesFiles.length === 0 && args.rules) rulesFiles.push(args.rules);
  if (diff === undefined && paths.length === 0 && process.stdin.isTTY)
    process.stderr.write(
      "sluice scan: reading stdin (pass files or directories to scan them; Ctrl-D ends)\n",
    );
  try {
    const { report, warnings } = await runScan({
      paths,
      diff,
      baseline: args.baseline,
      createBaseline: args["create-baseline"],
      configPath: args.config,
      rulesFiles,
      noDefaultRules: args["default-rules"] === false,
      jobs,
      version: pkg.version,
    });
    for (const w of warnings) process.stderr.write(`sluice scan: warning: ${w}\n`);
    for (const f of report.files.filter((x) => x.error))
      process.stderr.write(`sluice scan: warning: ${f.file}: ${f.skipped}\n`);
    // isatty and Bun.write rather than process.stdout, whose stream costs ~1 ms to create; node:tty
    // (which loads Node's stream modules, ~1.5 ms) only for text, the one format with colours.
    const toTty = format === "text" && !args.output && (await import("node:tty")).isatty(1);
    const color = args.color !== false && !process.env.NO_COLOR && toTty;
    const out =
      format === "json"
        ? renderJson(report)
        : format === "sarif"
          ? (await import("../scan/sarif.ts")).renderSarif(report)
          : renderText(report, color);
    if (args.output) writeFileSync(args.output, out);
    // Nothing to write for a clean text scan; an empty Bun.write would truncate a file stdout points to
    // (`{ echo start; sluice scan; } > ci.log` would lose "start").
    else if (out)
      await Bun.write(Bun.stdout, out).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "EPIPE") throw e; // the reader went away (`| head`): nothing more to say to it
      });
    if (format === "text" || args.output)
      process.stderr.write(renderSummaryLine(report, args.color !== false && !!process.stderr.isTTY));
    if (args["create-baseline"])
      process.stderr.write(
        `sluice scan: wrote baseline ${args["create-baseline"]} (${report.findings.length + report.suppressed} findings)\n`,
      );
    process.exitCode = args["create-baseline"] ? EXIT.clean : reportExitCode(report);
  } catch (e) {
    if (e instanceof ScanError) fail(e.message);
    throw e;
  }
}

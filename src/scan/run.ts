/**
 * One `sluice scan` run, from options to report: config and rules, the inputs (files, stdin or a git
 * diff), the scan itself (parallel for many files), then the baseline. The CLI only parses flags
 * and prints what comes back.
 */
import { ConfigError, loadConfig } from "../config/load.ts";
import type { RuleDef } from "../core/types.ts";
import { applyBaseline, BaselineError, createBaseline, loadBaseline, writeBaseline } from "./baseline.ts";
import { addedLines, GitError, scanAdded } from "./diff.ts";
import { makeTextScanner, rulesInForce, type ScanSetup } from "./engine.ts";
import { scanStream } from "./file.ts";
import { scanFiles } from "./pool.ts";
import type { ScanReport } from "./report.ts";
import { formatProblem, parseRuleFile } from "./rulefile.ts";
import type { FileResult, ScanFinding } from "./types.ts";
import { checkRulePatterns } from "./validate.ts";
import { walk } from "./walk.ts";

/** A problem that stops the scan before it starts (exit code 4). */
export class ScanError extends Error {
  override name = "ScanError";
}

export interface ScanOptions {
  /** Files and directories; empty or "-" means stdin. */
  paths: string[];
  /** Undefined: not a diff scan. "": staged changes. Otherwise a ref or a range. */
  diff?: string;
  baseline?: string;
  createBaseline?: string;
  configPath?: string;
  rulesFiles?: string[];
  /** Leave out the built-in rules (config and --rules only). */
  noDefaultRules?: boolean;
  jobs?: number;
  cwd?: string;
  stdin?: ReadableStream<Uint8Array>;
  version?: string;
}

export const STDIN_NAME = "<stdin>";

export async function loadSetup(
  opts: Pick<ScanOptions, "configPath" | "rulesFiles" | "noDefaultRules" | "cwd">,
) {
  let config: ScanSetup["config"];
  let warnings: string[] = [];
  try {
    const loaded = loadConfig({ configPath: opts.configPath, projectDir: opts.cwd ?? process.cwd() });
    config = loaded.config;
    warnings = loaded.warnings;
  } catch (e) {
    if (e instanceof ConfigError) throw new ScanError(e.message);
    throw e;
  }
  const extra: RuleDef[] = [];
  const problems: string[] = [];
  for (const file of opts.rulesFiles ?? []) {
    const parsed = parseRuleFile(file, "import");
    const bad = [...parsed.problems, ...checkRulePatterns(parsed.rules, parsed.lines, file)];
    problems.push(...bad.map(formatProblem));
    extra.push(...parsed.rules);
  }
  if (problems.length) throw new ScanError(`invalid rules file:\n${problems.join("\n")}`);
  const rules = rulesInForce(config, { builtin: !opts.noDefaultRules, extra });
  return { setup: { config, rules } satisfies ScanSetup, warnings };
}

function byPosition(a: ScanFinding, b: ScanFinding): number {
  return a.line - b.line || a.column - b.column || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0);
}

export async function runScan(opts: ScanOptions): Promise<{ report: ScanReport; warnings: string[] }> {
  const started = performance.now();
  const cwd = opts.cwd ?? process.cwd();
  const { setup, warnings } = await loadSetup(opts);
  const skipGlobs = setup.config.allowlists.paths.map((g) => new Bun.Glob(g));
  const pathAllowed = (file: string) => skipGlobs.some((g) => g.match(file));
  let files: FileResult[] = [];
  let mode: ScanReport["mode"] = "files";
  const pool = { workers: 0 };

  if (opts.diff !== undefined) {
    mode = "diff";
    try {
      const { top, files: added } = await addedLines({ ref: opts.diff, cwd, paths: opts.paths });
      const scan = makeTextScanner(setup);
      files = scanAdded(added, top, cwd, scan).filter((f) => !pathAllowed(f.file));
    } catch (e) {
      if (e instanceof GitError) throw new ScanError(e.message);
      throw e;
    }
  } else {
    const wantStdin = opts.paths.length === 0 || opts.paths.includes("-");
    const paths = opts.paths.filter((p) => p !== "-");
    if (wantStdin) {
      if (paths.length === 0) mode = "stdin";
      const scan = makeTextScanner(setup);
      files.push(
        await scanStream(opts.stdin ?? (Bun.stdin.stream() as ReadableStream<Uint8Array>), STDIN_NAME, scan),
      );
    }
    if (paths.length) {
      const w = walk(paths, { cwd, skipGlobs: setup.config.allowlists.paths });
      if (w.missing.length) throw new ScanError(`no such file or directory: ${w.missing.join(", ")}`);
      files.push(...(await scanFiles(w.files, setup, { jobs: opts.jobs }, pool)));
    }
  }

  const all = files.flatMap((f) => f.findings.sort(byPosition));
  let findings = all;
  let suppressed = 0;
  try {
    if (opts.baseline) {
      const res = applyBaseline(all, loadBaseline(opts.baseline));
      findings = res.kept;
      suppressed = res.suppressed;
    }
    if (opts.createBaseline) {
      writeBaseline(opts.createBaseline, createBaseline(all));
    }
  } catch (e) {
    if (e instanceof BaselineError) throw new ScanError(e.message);
    throw new ScanError((e as Error).message);
  }
  return {
    report: {
      mode,
      findings,
      files,
      suppressed,
      durationMs: performance.now() - started,
      rules: setup.rules,
      version: opts.version ?? "0.0.0",
      cwd,
      workers: pool.workers,
    },
    warnings,
  };
}

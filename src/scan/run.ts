/**
 * One `sluice scan` run, from options to report: config and rules, the inputs (files, stdin or a git
 * diff), the scan itself (parallel for many files), then the baseline. The CLI only parses flags
 * and prints what comes back.
 *
 * Start-up is part of a scan's time: the walk comes first, so that when there is enough to scan the
 * workers start loading while this thread loads the scanner and the config; everything a plain
 * scan does not need (zod and the YAML parser without a config file, diff, baseline, rule files)
 * is imported only when used.
 */
import { ConfigError, loadConfigQuick } from "../config/files.ts";
import type { RuleDef } from "../core/types.ts";
import type { ScanReport } from "./report.ts";
import type { ScanSetup } from "./setup.ts";
import type { FileResult, ScanFinding } from "./types.ts";
import { type FileEntry, pathSkipper, walk } from "./walk.ts";
import { defaultJobs, PARALLEL_MIN_BYTES, ScanWorker } from "./workers.ts";

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
    const loaded = await loadConfigQuick({
      configPath: opts.configPath,
      projectDir: opts.cwd ?? process.cwd(),
    });
    config = loaded.config;
    warnings = loaded.warnings;
  } catch (e) {
    if (e instanceof ConfigError) throw new ScanError(e.message);
    throw e;
  }
  const extra: RuleDef[] = [];
  const problems: string[] = [];
  if (opts.rulesFiles?.length) {
    const { formatRuleProblem } = await import("../detect/rule-file.ts");
    const { checkRulePatterns, readRuleFile } = await import("./validate.ts");
    for (const file of opts.rulesFiles) {
      const parsed = readRuleFile(file, "import");
      const bad = [...parsed.problems, ...checkRulePatterns(parsed.rules, parsed.lines, file)];
      problems.push(...bad.map(formatRuleProblem));
      extra.push(...parsed.rules);
    }
  }
  if (problems.length) throw new ScanError(`invalid rules file:\n${problems.join("\n")}`);
  const { rulesInForce } = await import("./setup.ts");
  const rules = rulesInForce(config, { builtin: !opts.noDefaultRules, extra });
  return { setup: { config, rules } satisfies ScanSetup, warnings };
}

function byPosition(a: ScanFinding, b: ScanFinding): number {
  return a.line - b.line || a.column - b.column || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0);
}

export async function runScan(opts: ScanOptions): Promise<{ report: ScanReport; warnings: string[] }> {
  const workers: ScanWorker[] = [];
  try {
    return await scanAll(opts, workers);
  } finally {
    for (const w of workers) w.terminate();
  }
}

async function scanAll(
  opts: ScanOptions,
  workers: ScanWorker[],
): Promise<{ report: ScanReport; warnings: string[] }> {
  const started = performance.now();
  const cwd = opts.cwd ?? process.cwd();
  const jobs = opts.jobs ?? defaultJobs();
  const wantStdin = opts.diff === undefined && (opts.paths.length === 0 || opts.paths.includes("-"));
  const paths = opts.diff === undefined ? opts.paths.filter((p) => p !== "-") : [];
  // The walk needs no config (allowlists.paths are applied below), so it comes before the config.
  const walked = paths.length ? walk(paths, { cwd }) : null;
  if (walked && jobs > 1 && walked.files.reduce((n, f) => n + f.size, 0) >= PARALLEL_MIN_BYTES)
    for (let i = 1; i < jobs; i++) workers.push(new ScanWorker());

  const { setup, warnings } = await loadSetup(opts);
  const skipGlobs = setup.config.allowlists.paths.map((g) => new Bun.Glob(g));
  const pathAllowed = (file: string) => skipGlobs.some((g) => g.match(file));
  let files: FileResult[] = [];
  let mode: ScanReport["mode"] = "files";
  const pool = { workers: 0 };

  if (opts.diff !== undefined) {
    mode = "diff";
    const { addedLines, GitError, scanAdded } = await import("./diff.ts");
    const { makeTextScanner } = await import("./setup.ts");
    try {
      const { top, files: added } = await addedLines({ ref: opts.diff, cwd, paths: opts.paths });
      const scan = makeTextScanner(setup);
      files = scanAdded(added, top, cwd, scan).filter((f) => !pathAllowed(f.file));
    } catch (e) {
      if (e instanceof GitError) throw new ScanError(e.message);
      throw e;
    }
  } else {
    if (wantStdin) {
      if (paths.length === 0) mode = "stdin";
      const { makeTextScanner } = await import("./setup.ts");
      const { scanStream } = await import("./file.ts");
      const scan = makeTextScanner(setup);
      files.push(
        await scanStream(opts.stdin ?? (Bun.stdin.stream() as ReadableStream<Uint8Array>), STDIN_NAME, scan),
      );
    }
    if (walked) {
      if (walked.missing.length)
        throw new ScanError(`no such file or directory: ${walked.missing.join(", ")}`);
      // The walk ran before the config was loaded: its allowlisted paths are left out here.
      const isSkipped = pathSkipper(setup.config.allowlists.paths);
      const kept: FileEntry[] = walked.files.filter((f) => !isSkipped(f));
      const { scanFiles } = await import("./pool.ts");
      files.push(...(await scanFiles(kept, setup, { jobs: opts.jobs, workers: workers.splice(0) }, pool)));
    }
  }

  const all = files.flatMap((f) => f.findings.sort(byPosition));
  let findings = all;
  let suppressed = 0;
  if (opts.baseline || opts.createBaseline) {
    const { applyBaseline, BaselineError, createBaseline, loadBaseline, writeBaseline } = await import(
      "./baseline.ts"
    );
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

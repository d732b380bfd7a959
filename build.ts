#!/usr/bin/env bun
/**
 * `bun run build`: compile standalone binaries `dist/sluice-<target-triple>` and
 * `dist/sluice-agent-<target-triple>`, and `dist/checksums.txt` over all of them (`<hex> <filename>`,
 * sorted by filename). Host target by default; `--all` for every shipped triple; `--target <triple>`
 * for one; `--outdir <dir>` elsewhere than dist/. VERSION, GIT_COMMIT and BUILT_AT are baked in with
 * `define` (from SLUICE_VERSION / SLUICE_GIT_COMMIT / SLUICE_BUILT_AT, else package.json, git and now).
 * A smoke check runs each host binary and fails the build when the build_id it reports differs from
 * its line in checksums.txt. `--record` also copies checksums.txt to checksums/<version>.txt.
 * `--verify` builds nothing: it checks an existing outdir (every file against checksums.txt, the
 * host binaries run), as the release does on each platform before publishing.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import pkg from "./package.json" with { type: "json" };
import { sha256File } from "./src/core/build-info.ts";
import { builtinAnalyses } from "./src/detect/analysis.ts";
import { builtinRuleData } from "./src/detect/builtin-rules.ts";
import { kernelModuleBytes } from "./src/detect/kernel.ts";
import { builtinSnapshot } from "./src/detect/snapshot-build.ts";

/** Shipped target triple → Bun compile target. No linux aarch64 binary is shipped. */
export const TARGETS = {
  "x86_64-unknown-linux-gnu": "bun-linux-x64",
  "x86_64-apple-darwin": "bun-darwin-x64",
  "aarch64-apple-darwin": "bun-darwin-arm64",
} as const;
/** What can be built: the shipped targets, and linux aarch64 for the arm64 container image only. */
const BUILDABLE = { ...TARGETS, "aarch64-unknown-linux-gnu": "bun-linux-arm64" } as const;
export type Triple = keyof typeof BUILDABLE;

/** The programs compiled for each triple: `<name>-<triple>`. */
export const PROGRAMS = ["sluice", "sluice-agent"] as const;
export type Program = (typeof PROGRAMS)[number];

export function hostTriple(): Triple {
  const key = `${process.platform}-${process.arch}`;
  const map: Record<string, Triple> = {
    "linux-x64": "x86_64-unknown-linux-gnu",
    "linux-arm64": "aarch64-unknown-linux-gnu",
    "darwin-x64": "x86_64-apple-darwin",
    "darwin-arm64": "aarch64-apple-darwin",
  };
  const t = map[key];
  if (!t) throw new Error(`no sluice binary target for ${key}; targets: ${Object.keys(TARGETS).join(", ")}`);
  return t;
}

function gitCommit(): string {
  const r = Bun.spawnSync(["git", "rev-parse", "HEAD"], {
    cwd: import.meta.dir,
    stdout: "pipe",
    stderr: "ignore",
  });
  return r.exitCode === 0 ? r.stdout.toString().trim() : "unknown";
}

export interface BuildIdentity {
  version: string;
  commit: string;
  builtAt: string;
}

export function identity(env = process.env): BuildIdentity {
  return {
    version: env.SLUICE_VERSION || pkg.version,
    commit: env.SLUICE_GIT_COMMIT || gitCommit(),
    builtAt:
      env.SLUICE_BUILT_AT ||
      (env.SOURCE_DATE_EPOCH
        ? new Date(Number(env.SOURCE_DATE_EPOCH) * 1000).toISOString()
        : new Date().toISOString()),
  };
}

/** What each program is made of, besides the build identity every binary carries. */
function programOptions(program: Program) {
  if (program === "sluice-agent")
    // The agent supervises, serves two endpoints and writes service files: none of the matcher.
    return { entrypoints: [join(import.meta.dir, "src/agent/cli.ts")], define: {}, splitting: false };
  return {
    // The scan worker is a second entrypoint so that `sluice scan` can start workers in the binary.
    entrypoints: [join(import.meta.dir, "src/cli.ts"), join(import.meta.dir, "src/scan/worker.ts")],
    define: {
      // The built-in rules parsed, analysed and compiled now, not at every start, as JSON texts (a
      // string each) parsed when first needed (src/detect/builtin.ts, precomputed.ts).
      SLUICE_BUILTIN_RULES: JSON.stringify(JSON.stringify(builtinRuleData())),
      SLUICE_PATTERN_ANALYSES: JSON.stringify(JSON.stringify(builtinAnalyses())),
      SLUICE_MATCHER_SNAPSHOT: JSON.stringify(JSON.stringify(builtinSnapshot())),
      // The character loop's WebAssembly, assembled now (~1 ms at every thread's start otherwise).
      SLUICE_CHAR_KERNEL: JSON.stringify(kernelModuleBytes().toHex()),
    },
    // Lazily imported commands (serve's dashboard pulls in elysia, file-type, debug, node:tty...) go
    // to chunks of their own, so `sluice scan` does not load their Node built-ins at start (~1.5 ms).
    splitting: true,
  };
}

/** Compile `<program>-<triple>` into outdir; returns its path. */
export async function compile(
  triple: Triple,
  outdir: string,
  id: BuildIdentity,
  program: Program = "sluice",
): Promise<string> {
  const outfile = join(outdir, `${program}-${triple}`);
  const { entrypoints, define, splitting } = programOptions(program);
  const result = await Bun.build({
    entrypoints,
    compile: {
      target: BUILDABLE[triple],
      outfile,
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    // Bytecode compiled at build time (ESM needs the explicit format): `sluice scan` of an empty
    // directory starts in ~35 ms instead of ~80 ms, since nothing is parsed at start-up.
    bytecode: true,
    splitting,
    format: "esm",
    // --minify breaks Elysia; whitespace + syntax only.
    minify: { whitespace: true, syntax: true, identifiers: false },
    define: {
      SLUICE_VERSION: JSON.stringify(id.version),
      SLUICE_GIT_COMMIT: JSON.stringify(id.commit),
      SLUICE_BUILT_AT: JSON.stringify(id.builtAt),
      ...define,
    },
  } as Parameters<typeof Bun.build>[0]);
  if (!result.success) {
    for (const l of result.logs) console.error(l);
    throw new Error(`build of ${program} for ${triple} failed`);
  }
  return outfile;
}

/** `<hex> <filename>` per binary, sorted by filename. */
export function writeChecksums(outdir: string, files: string[]): string {
  const lines = files
    .map((f) => ({ name: basename(f), hex: sha256File(f) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((x) => `${x.hex} ${x.name}`);
  const path = join(outdir, "checksums.txt");
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

/**
 * checksums.txt as filename → hex. Throws on anything but sorted `<64 hex> <filename>` lines, one
 * per file, so that the file install.sh reads is the file this checks.
 */
export function readChecksums(path: string): Map<string, string> {
  const sums = new Map<string, string>();
  let previous = "";
  for (const [i, line] of readFileSync(path, "utf8").split("\n").entries()) {
    if (line === "") continue;
    const m = /^([0-9a-f]{64}) ([^\s/]+)$/.exec(line);
    if (!m) throw new Error(`${path}:${i + 1}: not "<sha256 hex> <filename>": ${JSON.stringify(line)}`);
    const [, hex, name] = m as unknown as [string, string, string];
    if (sums.has(name)) throw new Error(`${path}:${i + 1}: ${name} is listed twice`);
    if (name < previous) throw new Error(`${path}:${i + 1}: ${name} is out of order (sorted by filename)`);
    previous = name;
    sums.set(name, hex);
  }
  return sums;
}

/**
 * Run the binary's `version` command and compare the build_id it reports with its checksums.txt
 * line (and, when given, its version and commit with the build's). Throws naming the file and both.
 */
export function smokeCheck(binary: string, expectedHex: string | undefined, id?: BuildIdentity): void {
  const name = basename(binary);
  if (!expectedHex) throw new Error(`smoke check: checksums.txt has no line for ${name}`);
  const r = Bun.spawnSync([binary, "version"], { stdout: "pipe", stderr: "pipe", cwd: "/" });
  if (r.exitCode !== 0) throw new Error(`smoke check: ${name} version exited ${r.exitCode}: ${r.stderr}`);
  const info = JSON.parse(r.stdout.toString()) as { build_id: string; version: string; commit: string };
  if (info.build_id !== `sha256:${expectedHex}`)
    throw new Error(
      `smoke check: ${name} reports build_id ${info.build_id}, checksums.txt says sha256:${expectedHex}`,
    );
  if (id && (info.version !== id.version || info.commit !== id.commit))
    throw new Error(
      `smoke check: ${name} reports ${info.version} (${info.commit}), expected ${id.version} (${id.commit})`,
    );
}

/**
 * Check a built outdir: checksums.txt is well formed and lists every binary there, each file's
 * SHA-256 equals its line, and each binary for this machine reports that same build_id when run.
 * Returns what was checked and run.
 */
export function verifyOutdir(outdir: string): { checked: string[]; ran: string[] } {
  const sums = readChecksums(join(outdir, "checksums.txt"));
  const binaries = readdirSync(outdir).filter((f) => PROGRAMS.some((p) => f.startsWith(`${p}-`)));
  for (const f of binaries) if (!sums.has(f)) throw new Error(`checksums.txt has no line for ${f}`);
  for (const [name, hex] of sums) {
    const file = join(outdir, name);
    if (!existsSync(file)) throw new Error(`checksums.txt lists ${name}, which is not in ${outdir}`);
    const actual = sha256File(file);
    if (actual !== hex) throw new Error(`${name}: sha256 ${actual}, checksums.txt says ${hex}`);
  }
  const host = hostTriple();
  const ran: string[] = [];
  for (const p of PROGRAMS) {
    const name = `${p}-${host}`;
    if (!sums.has(name)) continue;
    smokeCheck(join(outdir, name), sums.get(name));
    ran.push(name);
  }
  return { checked: [...sums.keys()], ran };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      all: { type: "boolean", default: false },
      target: { type: "string", multiple: true },
      outdir: { type: "string", default: "dist" },
      record: { type: "boolean", default: false },
      verify: { type: "boolean", default: false },
    },
  });
  const outdir = resolve(values.outdir!);
  try {
    if (values.verify) {
      const { checked, ran } = verifyOutdir(outdir);
      console.log(`verified ${checked.length} files against checksums.txt; ran ${ran.join(", ") || "none"}`);
    } else await build(values, outdir);
  } catch (e) {
    console.error(`build: ${(e as Error).message}`);
    process.exit(1);
  }
}

async function build(values: { all?: boolean; target?: string[]; record?: boolean }, outdir: string) {
  const host = hostTriple();
  const triples: Triple[] = values.all
    ? (Object.keys(TARGETS) as Triple[])
    : values.target?.length
      ? values.target.map((t) => {
          if (!(t in BUILDABLE))
            throw new Error(`unknown target ${t}; targets: ${Object.keys(TARGETS).join(", ")}`);
          return t as Triple;
        })
      : [host];
  mkdirSync(outdir, { recursive: true });
  const id = identity();
  const built: string[] = [];
  for (const t of triples)
    for (const p of PROGRAMS) {
      const t0 = performance.now();
      built.push(await compile(t, outdir, id, p));
      console.log(`built ${built.at(-1)} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }
  const sumsPath = writeChecksums(outdir, built);
  console.log(`wrote ${sumsPath}`);
  const sums = readChecksums(sumsPath);
  for (const file of built)
    if (file.endsWith(`-${host}`)) {
      smokeCheck(file, sums.get(basename(file)), id);
      console.log(`smoke check ok: ${basename(file)} reports build_id sha256:${sums.get(basename(file))}`);
    }
  if (values.record) {
    const dest = join(import.meta.dir, "checksums", `${id.version}.txt`);
    mkdirSync(dirname(dest), { recursive: true });
    copyFileSync(sumsPath, dest);
    console.log(`recorded ${dest}`);
  }
}

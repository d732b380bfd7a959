#!/usr/bin/env bun
/**
 * `bun run build`: compile standalone binaries `dist/sluice-<target-triple>` and `dist/checksums.txt`
 * (SPEC §9). Host target by default; `--all` for every triple of the table; `--target <triple>` for
 * one; `--outdir <dir>` elsewhere than dist/. VERSION, GIT_COMMIT and BUILT_AT are baked in with
 * `define` (from SLUICE_VERSION / SLUICE_GIT_COMMIT / SLUICE_BUILT_AT, else package.json, git and now).
 * A smoke check runs the host binary and fails the build when its reported build_id differs from
 * the SHA-256 of the file on disk. `--record` also copies checksums.txt to checksums/<version>.txt.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import pkg from "./package.json" with { type: "json" };
import { builtinAnalyses } from "./src/detect/analysis.ts";
import { builtinRuleData } from "./src/detect/builtin-rules.ts";
import { kernelModuleBytes } from "./src/detect/kernel.ts";
import { builtinSnapshot } from "./src/detect/snapshot-build.ts";

/** Target triple → Bun compile target. No linux aarch64 binary is shipped (SPEC §9). */
export const TARGETS = {
  "x86_64-unknown-linux-gnu": "bun-linux-x64",
  "x86_64-apple-darwin": "bun-darwin-x64",
  "aarch64-apple-darwin": "bun-darwin-arm64",
} as const;
export type Triple = keyof typeof TARGETS;

export function hostTriple(): Triple {
  const key = `${process.platform}-${process.arch}`;
  const map: Record<string, Triple> = {
    "linux-x64": "x86_64-unknown-linux-gnu",
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

export async function compile(triple: Triple, outdir: string, id: BuildIdentity): Promise<string> {
  const outfile = join(outdir, `sluice-${triple}`);
  const result = await Bun.build({
    // The scan worker is a second entrypoint so that `sluice scan` can start workers in the binary.
    entrypoints: [join(import.meta.dir, "src/cli.ts"), join(import.meta.dir, "src/scan/worker.ts")],
    compile: {
      target: TARGETS[triple],
      outfile,
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    // Bytecode compiled at build time (ESM needs the explicit format): `sluice scan` of an empty
    // directory starts in ~35 ms instead of ~80 ms, since nothing is parsed at start-up.
    bytecode: true,
    // Lazily imported commands (serve's dashboard pulls in elysia, file-type, debug, node:tty...) go
    // to chunks of their own, so `sluice scan` does not load their Node built-ins at start (~1.5 ms).
    splitting: true,
    format: "esm",
    // --minify breaks Elysia; whitespace + syntax only (STYLE.md).
    minify: { whitespace: true, syntax: true, identifiers: false },
    define: {
      SLUICE_VERSION: JSON.stringify(id.version),
      SLUICE_GIT_COMMIT: JSON.stringify(id.commit),
      SLUICE_BUILT_AT: JSON.stringify(id.builtAt),
      // The built-in rules parsed, analysed and compiled now, not at every start, as JSON texts (a
      // string each) parsed when first needed (src/detect/builtin.ts, precomputed.ts).
      SLUICE_BUILTIN_RULES: JSON.stringify(JSON.stringify(builtinRuleData())),
      SLUICE_PATTERN_ANALYSES: JSON.stringify(JSON.stringify(builtinAnalyses())),
      SLUICE_ENGINE_SNAPSHOT: JSON.stringify(JSON.stringify(builtinSnapshot())),
      // The character loop's WebAssembly, assembled now (~1 ms at every thread's start otherwise).
      SLUICE_CHAR_KERNEL: JSON.stringify(kernelModuleBytes().toHex()),
    },
  } as Parameters<typeof Bun.build>[0]);
  if (!result.success) {
    for (const l of result.logs) console.error(l);
    throw new Error(`build for ${triple} failed`);
  }
  return outfile;
}

export function sha256File(path: string): string {
  return new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");
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

/** Run the binary's `version` command and compare its build_id with the file's SHA-256. */
export function smokeCheck(binary: string, id: BuildIdentity): void {
  const r = Bun.spawnSync([binary, "version"], { stdout: "pipe", stderr: "pipe", cwd: "/" });
  if (r.exitCode !== 0) throw new Error(`smoke check: ${binary} version exited ${r.exitCode}: ${r.stderr}`);
  const info = JSON.parse(r.stdout.toString()) as { build_id: string; version: string; commit: string };
  const expected = `sha256:${sha256File(binary)}`;
  if (info.build_id !== expected)
    throw new Error(`smoke check: build_id ${info.build_id} differs from the binary's ${expected}`);
  if (info.version !== id.version || info.commit !== id.commit)
    throw new Error(
      `smoke check: reported ${info.version} (${info.commit}), expected ${id.version} (${id.commit})`,
    );
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      all: { type: "boolean", default: false },
      target: { type: "string", multiple: true },
      outdir: { type: "string", default: "dist" },
      record: { type: "boolean", default: false },
    },
  });
  const host = hostTriple();
  const triples: Triple[] = values.all
    ? (Object.keys(TARGETS) as Triple[])
    : values.target?.length
      ? values.target.map((t) => {
          if (!(t in TARGETS))
            throw new Error(`unknown target ${t}; targets: ${Object.keys(TARGETS).join(", ")}`);
          return t as Triple;
        })
      : [host];
  const outdir = resolve(values.outdir!);
  mkdirSync(outdir, { recursive: true });
  const id = identity();
  const built: string[] = [];
  for (const t of triples) {
    const t0 = performance.now();
    const file = await compile(t, outdir, id);
    built.push(file);
    console.log(`built ${file} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    if (t === host) {
      smokeCheck(file, id);
      console.log(`smoke check ok: build_id sha256:${sha256File(file)}`);
    }
  }
  const sums = writeChecksums(outdir, built);
  console.log(`wrote ${sums}`);
  if (values.record) {
    mkdirSync(join(import.meta.dir, "checksums"), { recursive: true });
    const dest = join(import.meta.dir, "checksums", `${id.version}.txt`);
    copyFileSync(sums, dest);
    console.log(`recorded ${dest}`);
  }
}

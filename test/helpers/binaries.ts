/**
 * The compiled binaries for this machine (`sluice-<triple>`, `sluice-agent-<triple>` and their
 * `checksums.txt`), built by build.ts's own functions once and shared: by every test file of a run,
 * and across runs through a cache directory in the temp dir keyed by the SHA-256 of everything that
 * goes into them (src/, web/, rules/, build.ts, package.json, bun.lock). A cache not used for an
 * hour is removed when another is made, so stale builds do not pile up.
 *
 * @example
 * const bins = await hostBinaries(); // bins.sluice, bins.agent, bins.dir (with checksums.txt)
 */
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { type BuildIdentity, compile, hostTriple, PROGRAMS, writeChecksums } from "../../build.ts";

const REPO = resolve(import.meta.dir, "../..");
const PREFIX = "sluice-test-bin-";
/** The cache's place: the temp dir itself, not the run's own (run-temp.ts), so that it outlives the run. */
const CACHE_ROOT = process.env.SLUICE_TEST_CACHE_DIR ?? tmpdir();
const STALE_MS = 3600_000;

/** The identity baked into test binaries, so that tests can check what they report. */
export const TEST_IDENTITY: BuildIdentity = {
  version: "9.8.7-test",
  commit: "abc123",
  builtAt: "2026-01-02T03:04:05Z",
};

export interface HostBinaries {
  dir: string;
  sluice: string;
  agent: string;
}

function sourceHash(): string {
  const h = new Bun.CryptoHasher("sha256");
  h.update(JSON.stringify(TEST_IDENTITY));
  const files: string[] = ["build.ts", "package.json", "bun.lock"].map((f) => join(REPO, f));
  for (const d of ["src", "web", "rules"])
    for (const e of readdirSync(join(REPO, d), { recursive: true, withFileTypes: true }))
      if (e.isFile()) files.push(join(e.parentPath, e.name));
  for (const f of files.sort()) {
    h.update(`${relative(REPO, f)}\0`);
    h.update(readFileSync(f));
  }
  return h.digest("hex").slice(0, 16);
}

function prune(keep: string) {
  for (const name of readdirSync(CACHE_ROOT))
    if (name.startsWith(PREFIX) && name !== keep) {
      const p = join(CACHE_ROOT, name);
      try {
        if (Date.now() - statSync(p).mtimeMs > STALE_MS) rmSync(p, { recursive: true, force: true });
      } catch {
        /* another run removed it */
      }
    }
}

async function build(): Promise<HostBinaries> {
  const triple = hostTriple();
  const name = `${PREFIX}${sourceHash()}`;
  const dir = join(CACHE_ROOT, name);
  const paths = { dir, sluice: join(dir, `sluice-${triple}`), agent: join(dir, `sluice-agent-${triple}`) };
  if (existsSync(join(dir, "checksums.txt"))) {
    const now = new Date();
    utimesSync(dir, now, now);
    return paths;
  }
  // Built beside, then renamed into place: a concurrent run either finds the whole cache or none.
  const tmp = mkdtempSync(join(CACHE_ROOT, `${name}.building-`));
  try {
    const built = [];
    for (const p of PROGRAMS) built.push(await compile(triple, tmp, TEST_IDENTITY, p));
    writeChecksums(tmp, built);
    try {
      renameSync(tmp, dir);
    } catch {
      /* another run finished first: use its build */
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  prune(name);
  return paths;
}

let shared: Promise<HostBinaries> | null = null;

/** The host binaries, built at most once per run (and not at all when the cache is current). */
export function hostBinaries(): Promise<HostBinaries> {
  shared ??= build();
  return shared;
}

/**
 * Change one character of text embedded in the binary: it still runs, with different bytes. Read in
 * pieces and written in place, so that no 100 MB buffer is left to the collector of this process.
 */
export function tamper(file: string) {
  const needle = Buffer.from("Print version and build identity");
  const fd = openSync(file, "r+");
  try {
    const buf = Buffer.alloc(1 << 20);
    for (let pos = 0; ; pos += buf.length - needle.length) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      const at = buf.subarray(0, n).indexOf(needle);
      if (at >= 0) {
        writeSync(fd, "p", pos + at);
        return;
      }
      if (n < buf.length) throw new Error(`no "${needle}" in ${file}`);
    }
  } finally {
    closeSync(fd);
  }
}

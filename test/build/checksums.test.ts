/**
 * The release checks of build.ts on real binaries (the shared test build): checksums.txt is sorted
 * `<hex> <filename>` over both programs, `bun build.ts --verify` accepts the build, and the smoke
 * check and --verify refuse a tampered binary (one that still runs and reports its own, different
 * build_id), a missing line and an unsorted file.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { hostTriple, readChecksums, smokeCheck } from "../../build.ts";
import { sha256File } from "../../src/core/build-info.ts";
import { type HostBinaries, hostBinaries, tamper } from "../helpers/binaries.ts";

// Compiled binaries started and hashed on a busy two-core machine take seconds, not milliseconds.
setDefaultTimeout(60_000);

const REPO = resolve(import.meta.dir, "../..");
let bins: HostBinaries;
beforeAll(async () => {
  bins = await hostBinaries();
}, 120_000);

const copies: string[] = [];
afterAll(() => {
  for (const d of copies) rmSync(d, { recursive: true, force: true });
});

/** A copy of the build in a new directory; `change` edits its checksums.txt text. */
function copyBuild(change: (sums: string) => string = (s) => s): string {
  const dir = mkdtempSync(join(tmpdir(), "sluice-checksums-"));
  copies.push(dir);
  for (const f of [bins.sluice, bins.agent]) copyFileSync(f, join(dir, basename(f)));
  writeFileSync(join(dir, "checksums.txt"), change(readFileSync(join(bins.dir, "checksums.txt"), "utf8")));
  return dir;
}

function verify(dir: string) {
  const r = Bun.spawnSync([process.execPath, join(REPO, "build.ts"), "--verify", "--outdir", dir], {
    cwd: REPO,
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
}

test("checksums.txt: one sorted line per binary, the hash of each file", () => {
  const triple = hostTriple();
  const text = readFileSync(join(bins.dir, "checksums.txt"), "utf8");
  // Sorted by filename: "sluice-agent-…" before "sluice-x86_64-…" (and before "sluice-aarch64-…").
  expect(text).toBe(
    `${sha256File(bins.agent)} sluice-agent-${triple}\n${sha256File(bins.sluice)} sluice-${triple}\n`,
  );
  expect([...readChecksums(join(bins.dir, "checksums.txt")).keys()]).toEqual([
    `sluice-agent-${triple}`,
    `sluice-${triple}`,
  ]);
});

test("--verify accepts the build and runs both host binaries", () => {
  const r = verify(copyBuild());
  expect(r.out).toContain(
    `verified 2 files against checksums.txt; ran sluice-${hostTriple()}, sluice-agent-`,
  );
  expect(r.code).toBe(0);
});

test("a tampered binary fails the smoke check and --verify, naming the file and both hashes", () => {
  const dir = copyBuild();
  const name = `sluice-${hostTriple()}`;
  const expected = sha256File(bins.sluice);
  tamper(join(dir, name));
  const actual = sha256File(join(dir, name));
  expect(actual).not.toBe(expected);
  // The binary runs and reports its own bytes' hash, which is not the one checksums.txt lists.
  expect(() => smokeCheck(join(dir, name), expected)).toThrow(
    `smoke check: ${name} reports build_id sha256:${actual}, checksums.txt says sha256:${expected}`,
  );
  const r = verify(dir);
  expect(r.code).toBe(1);
  expect(r.out).toContain(`${name}: sha256 ${actual}, checksums.txt says ${expected}`);
});

test("--verify refuses a missing line, an unsorted file and a malformed line", () => {
  const agentName = `sluice-agent-${hostTriple()}`;
  const missing = verify(
    copyBuild((s) =>
      s
        .split("\n")
        .filter((l) => !l.endsWith(agentName))
        .join("\n"),
    ),
  );
  expect(missing.code).toBe(1);
  expect(missing.out).toContain(`checksums.txt has no line for ${agentName}`);
  const unsorted = verify(copyBuild((s) => `${s.trim().split("\n").reverse().join("\n")}\n`));
  expect(unsorted.code).toBe(1);
  expect(unsorted.out).toContain("out of order");
  const malformed = verify(copyBuild((s) => s.replace(" ", "  ")));
  expect(malformed.code).toBe(1);
  expect(malformed.out).toContain('not "<sha256 hex> <filename>"');
});

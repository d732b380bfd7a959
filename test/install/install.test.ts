/**
 * install.sh as users run it, under dash and bash, against a local HTTP server serving the compiled
 * binaries and checksums.txt (the shared test build) the way a release does: a clean install, a
 * re-install that changes nothing, an uninstall; a tampered binary, a missing checksums.txt line, an
 * unreachable base URL, a wrong --version and unsupported systems (uname stand-ins on PATH) each
 * refused with a clear message and nothing installed. The README's curl line is run as written.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { basename, join, resolve } from "node:path";
import { sha256File } from "../../src/core/build-info.ts";
import { type HostBinaries, hostBinaries, tamper } from "../helpers/binaries.ts";
import { run } from "../helpers/run.ts";
import { deadEndpoint } from "../helpers/sluice.ts";
import { tempDirs } from "../helpers/temp.ts";

// Compiled binaries started and hashed on a busy two-core machine take seconds, not milliseconds.
setDefaultTimeout(60_000);

const REPO = resolve(import.meta.dir, "../..");
const INSTALL_SH = join(REPO, "install.sh");
let bins: HostBinaries;
let server: ReturnType<typeof Bun.serve>;
let base: string;
const temp = tempDirs();

/**
 * Releases served under /<name>/: `good` (as built), `tampered` (one byte of sluice changed after
 * checksums.txt was written), `noline` (checksums.txt without the agent's line). install.sh at /.
 */
function releases(): Record<string, string> {
  const good = bins.dir;
  const tampered = temp("sluice-rel-tampered-");
  for (const f of readdirSync(good)) copyFileSync(join(good, f), join(tampered, f));
  tamper(bins.sluice.replace(good, tampered));
  const noline = temp("sluice-rel-noline-");
  for (const f of readdirSync(good)) copyFileSync(join(good, f), join(noline, f));
  const sums = readFileSync(join(good, "checksums.txt"), "utf8");
  writeFileSync(
    join(noline, "checksums.txt"),
    sums
      .split("\n")
      .filter((l) => !l.includes(basename(bins.agent)))
      .join("\n"),
  );
  return { good, tampered, noline };
}

beforeAll(async () => {
  bins = await hostBinaries();
  const dirs = releases();
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/install.sh") return new Response(Bun.file(INSTALL_SH));
      const [, release, file] = path.split("/");
      const dir = dirs[release ?? ""];
      if (!dir || !file || file.includes("..") || !existsSync(join(dir, file)))
        return new Response("not found\n", { status: 404 });
      return new Response(Bun.file(join(dir, file)));
    },
  });
  base = `http://127.0.0.1:${server.port}`;
}, 120_000);

afterAll(() => {
  server?.stop(true);
});

interface Run {
  code: number;
  out: string;
}

/** Run install.sh with `shell`, HOME in a temp dir, SLUICE_INSTALL_BASE = base/<release>. */
async function install(
  shell: string,
  args: string[],
  opts: { home?: string; release?: string; base?: string; path?: string } = {},
): Promise<Run & { home: string; bindir: string }> {
  const home = opts.home ?? temp("sluice-install-home-");
  const { code, stdout, stderr } = await run([shell, INSTALL_SH, ...args], {
    env: {
      HOME: home,
      PATH: opts.path ?? (process.env.PATH as string),
      SLUICE_INSTALL_BASE: opts.base ?? `${base}/${opts.release ?? "good"}`,
      SLUICE_HOME: join(home, "sluice-home"),
    },
  });
  return { code, out: stdout + stderr, home, bindir: join(home, ".local", "bin") };
}

/** What a directory holds, for "nothing was installed". */
function contents(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** A bin directory whose `uname` answers as another system would. */
function fakeUname(system: string, machine: string): string {
  const bin = temp("sluice-fake-uname-");
  writeFileSync(
    join(bin, "uname"),
    `#!/bin/sh\ncase "$1" in -s) echo ${system} ;; -m) echo ${machine} ;; *) echo ${system} ;; esac\n`,
  );
  chmodSync(join(bin, "uname"), 0o755);
  return `${bin}:${process.env.PATH}`;
}

test("install.sh is POSIX sh: shellcheck finds nothing", () => {
  const r = Bun.spawnSync(["shellcheck", "--shell=sh", "--severity=style", INSTALL_SH], {
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(`${r.stdout}${r.stderr}`).toBe("");
  expect(r.exitCode).toBe(0);
});

for (const shell of ["dash", "bash"]) {
  describe(`under ${shell}`, () => {
    test("a clean install, a re-install that changes nothing, and an uninstall", async () => {
      const first = await install(shell, []);
      expect(first.out).toContain("SHA-256 of both binaries matches checksums.txt");
      expect(first.out).toContain(`installed sluice 9.8.7-test into ${first.bindir} (sluice, sluice-agent)`);
      expect(first.out).toContain(`${first.bindir} is not on your PATH`);
      expect(first.code).toBe(0);
      expect(contents(first.bindir).sort()).toEqual(["sluice", "sluice-agent"]);
      expect(sha256File(join(first.bindir, "sluice"))).toBe(sha256File(bins.sluice));
      expect(sha256File(join(first.bindir, "sluice-agent"))).toBe(sha256File(bins.agent));
      // The installed binary runs and reports the build_id of checksums.txt.
      const v = Bun.spawnSync([join(first.bindir, "sluice"), "version"], { stdout: "pipe" });
      expect(JSON.parse(v.stdout.toString()).build_id).toBe(`sha256:${sha256File(bins.sluice)}`);

      const again = await install(shell, [], { home: first.home });
      expect(again.code).toBe(0);
      expect(again.out).toContain(
        `sluice 9.8.7-test is already installed in ${first.bindir} and matches checksums.txt`,
      );
      expect(contents(first.bindir).sort()).toEqual(["sluice", "sluice-agent"]);

      const gone = await install(shell, ["--uninstall"], { home: first.home });
      expect(gone.code).toBe(0);
      expect(gone.out).toContain(`removed ${first.bindir}/sluice`);
      expect(gone.out).toContain(`removed ${first.bindir}/sluice-agent`);
      expect(contents(first.bindir)).toEqual([]);
      const twice = await install(shell, ["--uninstall"], { home: first.home });
      expect(twice.code).toBe(0);
      expect(twice.out).toContain("sluice is not installed");
    });

    test.if(shell === "dash")(
      "--prefix P installs into P/bin; --version must match what the release holds",
      async () => {
        const prefix = join(temp("sluice-prefix-"), "opt sluice");
        const r = await install(shell, ["--prefix", prefix, "--version", "v9.8.7-test"]);
        expect(r.code).toBe(0);
        expect(contents(join(prefix, "bin")).sort()).toEqual(["sluice", "sluice-agent"]);
        expect(contents(r.bindir)).toEqual([]);
        const wrong = await install(shell, ["--version", "1.2.3"]);
        expect(wrong.code).toBe(1);
        expect(wrong.out).toContain("holds sluice 9.8.7-test, not 1.2.3; nothing was installed");
        expect(contents(wrong.bindir)).toEqual([]);
      },
    );

    test("a tampered binary is refused, naming the file and both hashes", async () => {
      const r = await install(shell, [], { release: "tampered" });
      const name = basename(bins.sluice);
      expect(r.code).toBe(1);
      expect(r.out).toContain(
        `checksum mismatch for ${name}: checksums.txt says ${sha256File(bins.sluice)}, the download is `,
      );
      expect(r.out).toMatch(/the download is [0-9a-f]{64}\. Refusing to install; nothing was installed/);
      expect(contents(r.bindir)).toEqual([]);
    });

    test("a checksums.txt without the file's line is refused", async () => {
      const r = await install(shell, [], { release: "noline" });
      expect(r.code).toBe(1);
      expect(r.out).toContain(
        `checksums.txt has no line (or more than one) for ${basename(bins.agent)}; refusing to install`,
      );
      expect(contents(r.bindir)).toEqual([]);
    });

    test("an unreachable base URL is refused", async () => {
      using dead = deadEndpoint();
      const r = await install(shell, [], { base: dead.url });
      expect(r.code).toBe(1);
      expect(r.out).toContain(`cannot download ${dead.url}/checksums.txt`);
      expect(r.out).toContain("nothing was installed");
      expect(contents(r.bindir)).toEqual([]);
      const plain = await install(shell, [], { base: "http://example.com/sluice" });
      expect(plain.code).toBe(1);
      expect(plain.out).toContain("refusing to download from http://example.com/sluice: use an https:// URL");
    });

    test("systems without a shipped binary are refused clearly", async () => {
      const cases: [string, string, string][] = [
        ["Linux", "aarch64", "no sluice binary is shipped for Linux on aarch64 (arm64)"],
        ["Linux", "armv7l", "no sluice binary for Linux on armv7l"],
        ["FreeBSD", "amd64", "no sluice binary for FreeBSD"],
        ["MINGW64_NT-10.0", "x86_64", "no sluice binary for MINGW64_NT-10.0"],
      ];
      for (const [system, machine, message] of cases) {
        const r = await install(shell, [], { path: fakeUname(system, machine) });
        expect(r.code).toBe(1);
        expect(r.out).toContain(message);
        expect(contents(r.bindir)).toEqual([]);
      }
      const unknown = await install(shell, ["--frobnicate"]);
      expect(unknown.code).toBe(1);
      expect(unknown.out).toContain("unknown option: --frobnicate");
    });
  });
}

test("the README's line: curl -fsSL <base>/install.sh | sh", async () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const line = readme.split("\n").find((l) => /^curl -fsSL \S+\/install\.sh \| sh$/.test(l));
  expect(line).toBeDefined();
  // The same line, from the local server instead of the release page.
  const local = line!.replace(/https:\/\/\S+\/install\.sh/, `${base}/install.sh`);
  const home = temp("sluice-install-home-");
  const { code, stdout, stderr } = await run(["sh", "-c", local], {
    env: { HOME: home, PATH: process.env.PATH as string, SLUICE_INSTALL_BASE: `${base}/good` },
  });
  const out = stderr + stdout;
  expect(code).toBe(0);
  expect(out).toContain("installed sluice 9.8.7-test");
  expect(contents(join(home, ".local", "bin")).sort()).toEqual(["sluice", "sluice-agent"]);
});

test("--agent runs sluice-agent install; when that cannot work the binaries stay and it says why", async () => {
  const bin = temp("sluice-fake-systemctl-");
  writeFileSync(
    join(bin, "systemctl"),
    '#!/bin/sh\necho "Failed to connect to bus: No medium found" >&2\nexit 1\n',
  );
  chmodSync(join(bin, "systemctl"), 0o755);
  mkdirSync(join(bin, "x"));
  const r = await install("dash", ["--agent"], { path: `${bin}:${process.env.PATH}` });
  expect(r.code).toBe(1);
  expect(r.out).toContain("systemctl --user cannot reach your user service manager");
  expect(r.out).toContain(`the binaries are installed, but the service is not`);
  expect(contents(r.bindir).sort()).toEqual(["sluice", "sluice-agent"]);
});

/**
 * A command line that refuses mistakes, run as users run it (`bun src/cli.ts …` as a subprocess):
 * for every command, an unknown flag and a misspelt one exit with the usage code (2; `scan` 4, since
 * its 2 means alert) and one line with a "did you mean"; an optional-value flag followed by another
 * flag does not swallow it; help is plain when piped, wrapped, each flag once, with examples; stdout
 * appended to a file keeps what was there; a port clash refuses to start.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runSluice } from "../helpers/sluice.ts";

const REPO = join(import.meta.dir, "../..");
const CLI = join(REPO, "src/cli.ts");

/** Each command with a real flag of its own and a misspelling of it. */
const COMMANDS: { cmd: string[]; flag: string; typo: string; exit: number }[] = [
  { cmd: ["serve"], flag: "--port", typo: "--prot", exit: 2 },
  { cmd: ["engine"], flag: "--log-level", typo: "--log-levl", exit: 2 },
  { cmd: ["relay"], flag: "--engine", typo: "--engin", exit: 2 },
  { cmd: ["scan"], flag: "--format", typo: "--fromat", exit: 4 },
  { cmd: ["rules", "list"], flag: "--format", typo: "--formt", exit: 2 },
  { cmd: ["rules", "validate"], flag: "--config", typo: "--confg", exit: 2 },
  { cmd: ["rules", "import"], flag: "--dry-run", typo: "--dryrun", exit: 2 },
  { cmd: ["rules", "export"], flag: "--out", typo: "--ot", exit: 2 },
  { cmd: ["logs", "export"], flag: "--out", typo: "--outt", exit: 2 },
  { cmd: ["mcp"], flag: "--upstream", typo: "--upstrem", exit: 2 },
  { cmd: ["version"], flag: "--help", typo: "--verbose", exit: 2 },
  { cmd: ["connect"], flag: "--apply", typo: "--aply", exit: 2 },
  { cmd: ["doctor"], flag: "--json", typo: "--jsn", exit: 2 },
  { cmd: ["allowlist", "list"], flag: "--json", typo: "--jsno", exit: 2 },
  { cmd: ["allowlist", "add"], flag: "--type", typo: "--tpye", exit: 2 },
  { cmd: ["allowlist", "remove"], flag: "--dashboard", typo: "--dashbord", exit: 2 },
];

const home = () => mkdtempSync(join(tmpdir(), "sluice-cli-"));

describe("every command refuses an unknown or misspelt flag", () => {
  for (const c of COMMANDS) {
    test(c.cmd.join(" "), async () => {
      const env = { SLUICE_HOME: home() };
      const bogus = await runSluice([...c.cmd, "--bogus-flag"], { env });
      expect(bogus.code).toBe(c.exit);
      expect(bogus.stderr).toBe(
        `sluice ${c.cmd.join(" ")}: unknown flag --bogus-flag; see sluice ${c.cmd.join(" ")} --help\n`,
      );
      const typo = await runSluice([...c.cmd, c.typo, "x"], { env });
      expect(typo.code).toBe(c.exit);
      if (c.cmd[0] !== "version")
        expect(typo.stderr).toContain(`unknown flag ${c.typo} (did you mean ${c.flag}?)`);
      expect(typo.stderr.trim().split("\n")).toHaveLength(1);
    });
  }
});

test("a missing argument is a usage error naming it (exit 2), before anything runs", async () => {
  for (const [args, where, name] of [
    [["connect"], "connect", "tool"],
    [["allowlist", "add"], "allowlist add", "pattern"],
    [["allowlist", "remove", "--dashboard", "http://127.0.0.1:9"], "allowlist remove", "id"],
  ] as const) {
    const r = await runSluice([...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`sluice ${where}: missing <${name}>; see sluice ${where} --help\n`);
  }
});

test("an unknown command, or subcommand, is refused with a suggestion", async () => {
  const top = await runSluice(["sevre"]);
  expect(top.code).toBe(2);
  expect(top.stderr).toContain('unknown command "sevre" (did you mean "serve"?)');
  const sub = await runSluice(["rules", "valdate"]);
  expect(sub.code).toBe(2);
  expect(sub.stderr).toContain('unknown command "valdate" (did you mean "validate"?)');
});

test("scan --dif DIR does not scan files: it is refused", async () => {
  const r = await runSluice(["scan", "--dif", REPO]);
  expect(r.code).toBe(4);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain("did you mean --diff?");
});

test("an optional-value flag followed by another flag does not swallow it (scan --diff --create-baseline)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-git-"));
  const git = (...args: string[]) =>
    Bun.spawnSync(["git", "-c", "user.email=a@b.c", "-c", "user.name=a", ...args], { cwd: dir });
  git("init", "-q");
  writeFileSync(join(dir, "a.txt"), "hello\n");
  git("add", "a.txt");
  git("commit", "-qm", "a");
  writeFileSync(join(dir, "b.txt"), "world\n");
  git("add", "b.txt");
  const r = await runSluice(["scan", "--diff", "--create-baseline", "b.json"], { cwd: dir });
  expect(r.stderr).not.toContain("not a commit or range");
  expect(r.code).toBe(0);
  expect(JSON.parse(readFileSync(join(dir, "b.json"), "utf8"))).toHaveProperty("entries");
  const missing = await runSluice(["scan", "--format"], { cwd: dir });
  expect(missing.code).toBe(4);
  expect(missing.stderr).toContain("--format needs a value");
});

describe("help, piped", () => {
  for (const c of [...COMMANDS.map((x) => x.cmd), [] as string[], ["rules"], ["allowlist"]]) {
    test(`sluice ${c.join(" ")} --help`.trim(), async () => {
      const r = await runSluice([...c, "--help"], { env: { NO_COLOR: "" } });
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain("\x1b["); // plain: not a terminal
      for (const line of r.stdout.split("\n")) expect(line.length).toBeLessThanOrEqual(100);
      const flags = [...r.stdout.matchAll(/^\s+(?:-\w, )?(--\[?(?:no-)?\]?[\w-]+)/gm)].map((m) => m[1]);
      expect(new Set(flags).size).toBe(flags.length); // each flag once
      expect(r.stdout).toContain("Examples:");
    });
  }

  test("mcp --help shows `-- <command>`", async () => {
    const r = await runSluice(["mcp", "--help"]);
    expect(r.stdout).toContain("sluice mcp [options] -- <command>");
  });
});

test("stdout appended to a file keeps what was there (a clean scan writes nothing over it)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-append-"));
  writeFileSync(join(dir, "clean.txt"), "nothing to see\n");
  const log = join(dir, "ci.log");
  const r = Bun.spawnSync(
    ["sh", "-c", `{ echo hello; "${process.execPath}" "${CLI}" scan clean.txt; } > ci.log`],
    {
      cwd: dir,
      env: { ...process.env, NO_COLOR: "1" },
    },
  );
  expect(r.exitCode).toBe(0);
  expect(readFileSync(log, "utf8")).toStartWith("hello\n");
});

test("a port clash between proxy and dashboard refuses to start, naming both keys", async () => {
  const h = home();
  writeFileSync(join(h, "config.yaml"), "port: 8081\n");
  const fromConfig = await runSluice(["serve"], { env: { SLUICE_HOME: h } });
  expect(fromConfig.code).toBe(2);
  expect(fromConfig.stderr).toContain("port and dashboard.port are both 8081");
  const fromFlags = await runSluice(["serve", "--port", "18999", "--dashboard-port", "18999"], {
    env: { SLUICE_HOME: home() },
  });
  expect(fromFlags.code).toBe(2);
  expect(fromFlags.stderr).toContain("port and dashboard.port are both 18999");
});

test("a custom_rules pattern that can backtrack catastrophically stops serve, with the rules validate message", async () => {
  const h = home();
  writeFileSync(
    join(h, "config.yaml"),
    'custom_rules:\n  - { name: slow, pattern: "(a+)+$", severity: high, action: block }\n',
  );
  const r = await runSluice(["serve", "--port", "0", "--dashboard-port", "0"], { env: { SLUICE_HOME: h } });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("custom_rules[0] (slow): pattern can backtrack catastrophically");
});

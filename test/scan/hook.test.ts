/** The git pre-commit hook (hooks/pre-commit) in a real repository, and the pre-commit manifest. */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { CLI } from "./_cli.ts";
import { GIT_ENV, git, tempRepo } from "./_git.ts";

// Subprocesses and git on a loaded machine: give each test room.
setDefaultTimeout(30_000);

const ROOT = join(import.meta.dir, "..", "..");
const HOOKS = join(ROOT, "hooks");

const PROJECT_CONFIG = `custom_rules:
  - name: t-block
    pattern: "BLOCKME-[0-9]{6}"
    action: block
  - name: t-alert
    pattern: "ALERTME-[0-9]{6}"
    action: alert
`;

function commit(dir: string, env: Record<string, string> = {}) {
  const r = Bun.spawnSync(["git", "commit", "-qm", "c"], {
    cwd: dir,
    env: { ...GIT_ENV, SLUICE_BIN: `bun ${CLI}`, SLUICE_HOME: join(dir, ".git", "sluice-home"), ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, stderr: r.stderr.toString() };
}

describe("hooks/pre-commit", () => {
  test("stops a commit with a block finding, lets clean and alert-only commits through", () => {
    using r = tempRepo();
    git(r.dir, "config", "core.hooksPath", HOOKS);
    writeFileSync(join(r.dir, ".sluice.yaml"), PROJECT_CONFIG);
    writeFileSync(join(r.dir, "a.txt"), "clean\n");
    git(r.dir, "add", ".");
    expect(commit(r.dir).code).toBe(0);

    writeFileSync(join(r.dir, "a.txt"), "clean\nBLOCKME-123456\n");
    git(r.dir, "add", "a.txt");
    const blocked = commit(r.dir);
    expect(blocked.code).not.toBe(0);
    expect(blocked.stderr).toContain("a.txt:2:1");
    expect(blocked.stderr).toContain("commit stopped");
    expect(blocked.stderr).not.toContain("BLOCKME-123456");

    writeFileSync(join(r.dir, "a.txt"), "clean\nALERTME-123456\n");
    git(r.dir, "add", "a.txt");
    expect(commit(r.dir, { SLUICE_HOOK_FAIL_ON: "alert" }).code).not.toBe(0);
    const alert = commit(r.dir);
    expect(alert.code).toBe(0);
    expect(alert.stderr).toContain("a.txt:2:1");
  });

  test("when sluice cannot run: warn and let through, or stop with SLUICE_HOOK_STRICT=1", () => {
    using r = tempRepo();
    git(r.dir, "config", "core.hooksPath", HOOKS);
    writeFileSync(join(r.dir, "a.txt"), "x\n");
    git(r.dir, "add", ".");
    const env = { SLUICE_BIN: "/nonexistent/sluice" };
    expect(commit(r.dir, { ...env, SLUICE_HOOK_STRICT: "1" }).code).not.toBe(0);
    const open = commit(r.dir, env);
    expect(open.code).toBe(0);
    expect(open.stderr).toContain("could not scan");
  });
});

describe(".pre-commit-hooks.yaml", () => {
  test("declares the hooks with entries that exist", () => {
    const hooks = parse(readFileSync(join(ROOT, ".pre-commit-hooks.yaml"), "utf8")) as {
      id: string;
      entry: string;
      language: string;
    }[];
    expect(hooks.map((h) => h.id)).toEqual(["sluice", "sluice-files"]);
    const script = hooks[0]!;
    expect(script.language).toBe("script");
    expect(readFileSync(join(ROOT, script.entry), "utf8")).toStartWith("#!/bin/sh");
  });
});

/**
 * `sluice scan` end to end: the CLI as a subprocess, the real matcher, rules from files and config.
 * Only our own test rules are in force (`--no-default-rules`), so these tests do not depend on the
 * built-in rule set.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, sluice } from "./_cli.ts";
import { git, tempDir, tempRepo } from "./_git.ts";
import { validateSarif } from "./_sarif.ts";

// Subprocesses and git on a loaded machine: give each test room.
setDefaultTimeout(30_000);

const RULES = `rules:
  - name: t-block
    pattern: "BLOCKME-[0-9]{6}"
    severity: critical
    action: block
    description: test block rule
  - name: t-alert
    pattern: "ALERTME-[0-9]{6}"
    severity: warning
    action: alert
  - name: t-log
    pattern: "LOGME-[0-9]{6}"
    severity: info
    action: log
`;

const B = "BLOCKME-123456";
const A = "ALERTME-123456";
const L = "LOGME-123456";

function workspace() {
  const t = tempDir("sluice-scan-e2e-");
  writeFileSync(join(t.dir, "rules.yaml"), RULES);
  mkdirSync(join(t.dir, "home"));
  return { ...t, home: join(t.dir, "home") };
}

const base = ["scan", "--no-default-rules", "--rules", "rules.yaml"];
const run = (dir: string, args: string[], stdin?: string) =>
  sluice([...base, ...args], { cwd: dir, home: join(dir, "home"), stdin });

describe("exit codes and text output", () => {
  test("0 clean, 1 block, 2 alert, 3 log; the strongest action wins", async () => {
    using w = workspace();
    writeFileSync(join(w.dir, "clean.txt"), "nothing to see\n");
    writeFileSync(join(w.dir, "b.txt"), `x ${B}\n`);
    writeFileSync(join(w.dir, "a.txt"), `${A}\n`);
    writeFileSync(join(w.dir, "l.txt"), `${L}\n`);
    expect((await run(w.dir, ["clean.txt"])).code).toBe(0);
    expect((await run(w.dir, ["b.txt"])).code).toBe(1);
    expect((await run(w.dir, ["a.txt"])).code).toBe(2);
    expect((await run(w.dir, ["l.txt"])).code).toBe(3);
    expect((await run(w.dir, ["l.txt", "a.txt"])).code).toBe(2);
    expect((await run(w.dir, ["l.txt", "a.txt", "b.txt", "clean.txt"])).code).toBe(1);
  });

  test("text: file:line:column, severity, rule, action, masked preview; no colour when piped", async () => {
    using w = workspace();
    writeFileSync(join(w.dir, "f.txt"), `line one\n  key = ${B}\n`);
    const r = await run(w.dir, ["f.txt"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^f\.txt:2:9 {2}critical {2}t-block {2}block \(set on the rule\) {2}\S+\n$/);
    expect(r.stdout).not.toContain(B);
    expect(r.stdout).not.toContain("\x1b[");
    expect(r.stderr).toContain("1 finding (1 critical) in 1 file");
    const nc = await run(w.dir, ["--no-color", "f.txt"]);
    expect(nc.stdout).toBe(r.stdout);
  });

  test.if(!!Bun.which("script"))("colour on a terminal unless --no-color", async () => {
    using w = workspace();
    writeFileSync(join(w.dir, "f.txt"), `${B}\n`);
    const tty = async (extra: string[]) => {
      const cmd = ["bun", CLI, ...base, ...extra, "f.txt"].map((a) => `'${a}'`).join(" ");
      const p = Bun.spawn(["script", "-qec", cmd, "/dev/null"], {
        cwd: w.dir,
        env: { ...process.env, SLUICE_HOME: w.home, NO_COLOR: "", FORCE_COLOR: "" },
        stdout: "pipe",
        stderr: "pipe",
        stdin: "ignore",
      });
      const out = await new Response(p.stdout).text();
      return { code: await p.exited, out };
    };
    const colored = await tty([]);
    expect(colored.code).toBe(1);
    expect(colored.out).toContain("\x1b[");
    expect(colored.out).toContain("f.txt:1:1");
    const plain = await tty(["--no-color"]);
    expect(plain.out).toContain("f.txt:1:1");
    expect(plain.out).not.toContain("\x1b[");
  });

  test("usage errors exit 4 with a message", async () => {
    using w = workspace();
    const missing = await run(w.dir, ["nope.txt"]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain("no such file or directory: nope.txt");
    const fmt = await run(w.dir, ["--format", "xml", "rules.yaml"]);
    expect(fmt.code).toBe(4);
    expect(fmt.stderr).toContain("--format must be text, json or sarif");
    const jobs = await run(w.dir, ["--jobs", "0", "rules.yaml"]);
    expect(jobs.code).toBe(4);
  });
});

describe("inputs", () => {
  test("directories: recursive, .gitignore honoured, binary files and .git/ skipped", async () => {
    using w = workspace();
    const d = join(w.dir, "proj");
    mkdirSync(join(d, "src", "deep"), { recursive: true });
    mkdirSync(join(d, "ignored"));
    mkdirSync(join(d, ".git"));
    writeFileSync(join(d, ".gitignore"), "ignored/\n*.log\n");
    writeFileSync(join(d, "src", ".gitignore"), "local.txt\n");
    writeFileSync(join(d, "src", "deep", "a.ts"), `const a = "${A}";\n`);
    writeFileSync(join(d, "src", "local.txt"), B);
    writeFileSync(join(d, "ignored", "x.txt"), B);
    writeFileSync(join(d, "debug.log"), B);
    writeFileSync(join(d, ".git", "config"), B);
    writeFileSync(join(d, "img.bin"), Buffer.concat([Buffer.from([0x89, 0, 1, 2]), Buffer.from(B)]));
    const r = await run(w.dir, ["proj"]);
    expect(r.stdout).toMatch(
      /^proj\/src\/deep\/a\.ts:1:12 {2}warning {3}t-alert {2}alert \(set on the rule\) {2}\S+\n$/,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("1 binary skipped");
    // A file named explicitly is scanned even if ignored.
    expect((await run(w.dir, ["proj/debug.log"])).code).toBe(1);
  });

  test("stdin with '-' and with no path", async () => {
    using w = workspace();
    const a = await run(w.dir, ["-"], `hello\n  ${B}\n`);
    expect(a.code).toBe(1);
    expect(a.stdout).toStartWith("<stdin>:2:3  critical  t-block");
    const b = await run(w.dir, [], `${L}`);
    expect(b.code).toBe(3);
    expect(b.stdout).toStartWith("<stdin>:1:1");
  });

  test("a file larger than the streaming threshold: every key found once, at the right line", async () => {
    using w = workspace();
    const filler = `${"const value = compute(1, 2, 3); // filler text here\n".repeat(20_000)}`;
    let text = "";
    for (let i = 0; i < 12; i++) text += `${filler}key ${B}\n`;
    writeFileSync(join(w.dir, "big.txt"), text);
    expect(text.length).toBeGreaterThan(8 * 1024 * 1024);
    const r = await run(w.dir, ["--format", "json", "big.txt"]);
    const j = JSON.parse(r.stdout);
    expect(j.findings.map((f: { line: number }) => f.line)).toEqual(
      Array.from({ length: 12 }, (_, i) => (i + 1) * 20_001),
    );
  });

  test("many files in parallel give the same findings as one job", async () => {
    using w = workspace();
    const d = join(w.dir, "tree");
    mkdirSync(d);
    // Over PARALLEL_MIN_BYTES (24 MiB) in total, so that the scan runs in parallel.
    const filler = "let x = 1; // some ordinary source code line\n".repeat(10_000);
    for (let i = 0; i < 40; i++)
      writeFileSync(join(d, `f${i}.ts`), `${filler}${i % 3 === 0 ? B : A}\n${filler}`);
    const par = await run(w.dir, ["--format", "json", "--jobs", "2", "tree"]);
    const one = await run(w.dir, ["--format", "json", "--jobs", "1", "tree"]);
    const pj = JSON.parse(par.stdout);
    const oj = JSON.parse(one.stdout);
    expect(pj.summary.workers).toBe(2);
    expect(oj.summary.workers).toBe(0);
    expect(pj.findings).toEqual(oj.findings);
    expect(pj.findings.length).toBe(40);
    expect(par.code).toBe(1);
  });
});

describe("formats", () => {
  test("json: the documented schema", async () => {
    using w = workspace();
    writeFileSync(join(w.dir, "f.txt"), `${B}\n${A}\n`);
    const r = await run(w.dir, ["--format", "json", "f.txt"]);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({
      schema: "sluice.scan/v1",
      mode: "files",
      action: "block",
      exit_code: 1,
      errors: [],
    });
    expect(j.summary).toMatchObject({ files_scanned: 1, findings: 2, by_action: { block: 1, alert: 1 } });
    expect(j.findings[0]).toMatchObject({
      file: "f.txt",
      line: 1,
      column: 1,
      end_line: 1,
      end_column: 15,
      rule: "t-block",
      severity: "critical",
      action: "block",
    });
    expect(r.stdout).not.toContain(B);
  });

  test("sarif: valid for GitHub code scanning, to a file with -o", async () => {
    using w = workspace();
    writeFileSync(join(w.dir, "f.txt"), `${B}\n${L}\n`);
    const r = await run(w.dir, ["--format", "sarif", "-o", "out.sarif", "f.txt"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const log = JSON.parse(readFileSync(join(w.dir, "out.sarif"), "utf8"));
    expect(validateSarif(log)).toEqual([]);
    expect(log.runs[0].results.map((x: { ruleId: string; level: string }) => [x.ruleId, x.level])).toEqual([
      ["t-block", "error"],
      ["t-log", "note"],
    ]);
  });
});

describe("baseline", () => {
  test("create, then suppress known findings that moved; new findings still fail", async () => {
    using w = workspace();
    writeFileSync(join(w.dir, "f.txt"), `a\n${B}\n`);
    const c = await run(w.dir, ["--create-baseline", "base.json", "f.txt"]);
    expect(c.code).toBe(0);
    expect(c.stderr).toContain("wrote baseline base.json");
    const raw = readFileSync(join(w.dir, "base.json"), "utf8");
    expect(raw).not.toContain(B);
    writeFileSync(join(w.dir, "f.txt"), `new\nlines\nabove\n   ${B}\n`);
    const s = await run(w.dir, ["--baseline", "base.json", "--format", "json", "f.txt"]);
    expect(s.code).toBe(0);
    expect(JSON.parse(s.stdout).summary.suppressed_by_baseline).toBe(1);
    writeFileSync(join(w.dir, "f.txt"), `${B}\n${A}\nBLOCKME-999999\n`);
    const n = await run(w.dir, ["--baseline", "base.json", "f.txt"]);
    expect(n.code).toBe(1);
    expect(
      n.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("  ")[0]),
    ).toEqual(["f.txt:2:1", "f.txt:3:1"]);
    const bad = await run(w.dir, ["--baseline", "rules.yaml", "f.txt"]);
    expect(bad.code).toBe(4);
  });
});

describe("--diff", () => {
  test("staged (default), a ref, a range; only added lines with new line numbers", async () => {
    using r = tempRepo();
    writeFileSync(join(r.dir, "rules.yaml"), RULES);
    writeFileSync(join(r.dir, "f.txt"), `old ${B}\n1\n2\n`);
    git(r.dir, "add", ".");
    git(r.dir, "commit", "-qm", "one");
    writeFileSync(join(r.dir, "f.txt"), `old ${B}\n1\nnew ${A}\n2\n`);
    git(r.dir, "add", "f.txt");
    const staged = await run(r.dir, ["--diff"]);
    expect(staged.code).toBe(2);
    expect(staged.stdout).toStartWith("f.txt:3:5  warning   t-alert");
    git(r.dir, "commit", "-qm", "two");
    writeFileSync(join(r.dir, "g.txt"), `${L}\n`);
    git(r.dir, "add", "g.txt");
    expect((await run(r.dir, ["--diff", "HEAD~1"])).code).toBe(2);
    const range = await run(r.dir, ["--diff", "HEAD~1..HEAD", "--format", "json"]);
    expect(
      JSON.parse(range.stdout).findings.map((f: { file: string; line: number }) => `${f.file}:${f.line}`),
    ).toEqual(["f.txt:3"]);
    expect(JSON.parse(range.stdout).mode).toBe("diff");
    // --diff with a path that is not a revision: staged changes under that path.
    expect((await run(r.dir, ["--diff", "g.txt"])).code).toBe(3);
  });

  test("renamed, deleted and binary files; a repository with no commits", async () => {
    using r = tempRepo();
    writeFileSync(join(r.dir, "rules.yaml"), RULES);
    writeFileSync(join(r.dir, "new.txt"), `${B}\n`);
    git(r.dir, "add", "new.txt");
    expect((await run(r.dir, ["--diff"])).code).toBe(1);
    git(r.dir, "commit", "-qm", "one");
    git(r.dir, "mv", "new.txt", "renamed.txt");
    expect((await run(r.dir, ["--diff"])).code).toBe(0);
    git(r.dir, "commit", "-qm", "rename");
    git(r.dir, "rm", "-q", "renamed.txt");
    writeFileSync(join(r.dir, "blob.bin"), Buffer.concat([Buffer.from([0, 0, 0]), Buffer.from(B)]));
    git(r.dir, "add", ".");
    const res = await run(r.dir, ["--diff"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain("1 binary skipped");
  });

  test("outside a repository: exit 4 and a clear message", async () => {
    using w = workspace();
    const r = await run(w.dir, ["--diff"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("--diff needs a git repository");
  });
});

describe("config and rules", () => {
  test("config custom_rules and allowlists.paths apply, from --config and from .sluice.yaml", async () => {
    using w = workspace();
    writeFileSync(
      join(w.dir, "cfg.yaml"),
      `custom_rules:\n  - name: acme\n    pattern: "ACME-[0-9]{4}"\n    action: alert\nallowlists:\n  paths: ["vendor/**"]\n`,
    );
    mkdirSync(join(w.dir, "vendor"));
    writeFileSync(join(w.dir, "vendor", "v.txt"), "ACME-1234");
    writeFileSync(join(w.dir, "x.txt"), "ACME-1234");
    const r = await sluice(["scan", "--no-default-rules", "--config", "cfg.yaml", "."], {
      cwd: w.dir,
      home: w.home,
    });
    expect(r.stdout.split("  ")[0]).toBe("x.txt:1:1");
    expect(r.code).toBe(2);
    writeFileSync(join(w.dir, ".sluice.yaml"), readFileSync(join(w.dir, "cfg.yaml")));
    const p = await sluice(["scan", "--no-default-rules", "x.txt"], { cwd: w.dir, home: w.home });
    expect(p.code).toBe(2);
    const badCfg = await sluice(["scan", "--config", "missing.yaml", "x.txt"], { cwd: w.dir, home: w.home });
    expect(badCfg.code).toBe(4);
  });

  test("built-in rules by default; allowlists.secrets silence a value", async () => {
    using w = workspace();
    const key = "AKIAQ2W3E4R5T6Y7U8I9";
    writeFileSync(join(w.dir, "deploy.sh"), `export AWS_ACCESS_KEY_ID=${key}\n`);
    const r = await sluice(["scan", "--format", "json", "deploy.sh"], { cwd: w.dir, home: w.home });
    const j = JSON.parse(r.stdout);
    expect(
      j.findings.map((f: { rule: string; line: number; column: number }) => [f.rule, f.line, f.column]),
    ).toContainEqual(["aws_access_key_id", 1, 26]);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain(key);
    writeFileSync(join(w.home, "config.yaml"), `allowlists:\n  secrets: ["AKIAQ2W3*"]\n`);
    const allowed = await sluice(["scan", "deploy.sh"], { cwd: w.dir, home: w.home });
    expect(allowed.stdout).not.toContain("aws_access_key_id");
  });

  test("a bad --rules file: exit 4 naming the file and line", async () => {
    using w = workspace();
    writeFileSync(
      join(w.dir, "bad.yaml"),
      `rules:\n  - name: ok\n    pattern: "a+"\n  - name: broken\n    pattern: "(x"\n`,
    );
    writeFileSync(join(w.dir, "f.txt"), "x");
    const r = await sluice(["scan", "--rules", "bad.yaml", "f.txt"], { cwd: w.dir, home: w.home });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('bad.yaml:4: rule "broken": pattern does not compile');
  });

  test("several --rules files", async () => {
    using w = workspace();
    writeFileSync(join(w.dir, "more.yaml"), `- name: extra\n  pattern: "EXTRA-[0-9]{3}"\n  action: log\n`);
    writeFileSync(join(w.dir, "f.txt"), "EXTRA-123");
    const r = await sluice([...base, "--rules", "more.yaml", "f.txt"], { cwd: w.dir, home: w.home });
    expect(r.code).toBe(3);
  });
});

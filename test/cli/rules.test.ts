import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { sluice } from "../scan/_cli.ts";
import { tempDir } from "../scan/_git.ts";

// Subprocesses and git on a loaded machine: give each test room.
setDefaultTimeout(30_000);

const CONFIG = `custom_rules:
  - name: acme-token
    pattern: "ACME-[0-9]{8}"
    severity: high
    action: block
    description: Acme internal token
    tags: [acme]
  - name: build-id
    pattern: "BLD[0-9]{6}"
    severity: info
    description: Build identifiers
`;

const GOOD = `rules:
  - name: test-aws
    pattern: "AKIA[0-9A-Z]{16}"
    detector: secrets
    severity: critical
    action: block
    tags: [cloud, aws]
    description: AWS access key id
    examples: ["key AKIAIOSFODNN7EXAMPLQ"]
    negative_examples: ["AKIA-not-a-key"]
  - name: case-insensitive
    pattern: "(?i)internal-only"
    examples: ["INTERNAL-ONLY"]
`;

const BAD = `rules:
  - name: ok-rule
    pattern: "OK[0-9]+"
    examples: ["OK123"]
  - name: broken
    pattern: "([a-z]+"
  - name: wrong-example
    pattern: "X[0-9]{3}"
    examples: ["X12"]
    negative_examples: ["X999"]
  - name: Bad Name
    pattern: "y"
    severity: extreme
  - name: slow
    pattern: "(a+)+$"
  - name: empty-match
    pattern: "z*"
`;

function setup() {
  const t = tempDir("sluice-rules-");
  const home = join(t.dir, "home");
  mkdirSync(home);
  writeFileSync(join(home, "config.yaml"), CONFIG);
  writeFileSync(join(t.dir, "good.yaml"), GOOD);
  writeFileSync(join(t.dir, "bad.yaml"), BAD);
  return { ...t, home };
}

describe("sluice rules validate", () => {
  test("a good file: exit 0", async () => {
    using t = setup();
    const r = await sluice(["rules", "validate", "good.yaml"], { cwd: t.dir, home: t.home });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("ok: 2 rules in 1 file");
  });

  test("a bad file: every problem with file and line, exit 1", async () => {
    using t = setup();
    const r = await sluice(["rules", "validate", "bad.yaml"], { cwd: t.dir, home: t.home });
    expect(r.code).toBe(1);
    const lines = r.stderr.split("\n");
    expect(lines).toContain(
      'bad.yaml:5: rule "broken": pattern does not compile: Invalid regular expression: missing )',
    );
    expect(lines).toContain('bad.yaml:7: rule "wrong-example": example does not match: "X12"');
    expect(lines).toContain('bad.yaml:7: rule "wrong-example": negative example matches: "X999"');
    expect(r.stderr).toMatch(/bad\.yaml:11: rule "Bad Name": name: /);
    expect(r.stderr).toMatch(/bad\.yaml:13: rule "Bad Name": severity: /);
    expect(r.stderr).toContain('bad.yaml:14: rule "slow": pattern can backtrack catastrophically');
    expect(r.stderr).toContain('bad.yaml:16: rule "empty-match": pattern matches empty text');
    expect(r.stderr).not.toContain("ok-rule");
  });

  test("JSON rule files work too, and invalid YAML names its line", async () => {
    using t = setup();
    writeFileSync(
      join(t.dir, "r.json"),
      JSON.stringify([{ name: "j", pattern: "J[0-9]", examples: ["J1"] }]),
    );
    writeFileSync(join(t.dir, "broken.yaml"), "rules:\n  - name: x\n    pattern: [unclosed\n");
    const ok = await sluice(["rules", "validate", "r.json"], { cwd: t.dir, home: t.home });
    expect(ok.code).toBe(0);
    const bad = await sluice(["rules", "validate", "broken.yaml"], { cwd: t.dir, home: t.home });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^broken\.yaml:\d+: invalid YAML\/JSON/m);
  });

  test("no file: validates the rules in force (built-in and config)", async () => {
    using t = setup();
    const r = await sluice(["rules", "validate"], { cwd: t.dir, home: t.home });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok: \d+ rules/);
    // A config rule that the matcher would refuse is reported at its line in the config file.
    writeFileSync(join(t.home, "config.yaml"), `${CONFIG}  - name: slow\n    pattern: "(a+)+$"\n`);
    const bad = await sluice(["rules", "validate"], { cwd: t.dir, home: t.home });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      `${join(t.home, "config.yaml")}:12: rule "slow": pattern can backtrack catastrophically`,
    );
  });

  test("keywords, entropy and validators apply to examples as in the scanner", async () => {
    using t = setup();
    writeFileSync(
      join(t.dir, "kw.yaml"),
      `- name: kw-token\n  pattern: "[a-z0-9]{12}"\n  keywords: [secret]\n  examples: ["secret = abcdef123456"]\n  negative_examples: ["plain abcdef123456"]\n- name: card\n  pattern: "\\\\b\\\\d{16}\\\\b"\n  validator: luhn\n  examples: ["4539578763621486"]\n  negative_examples: ["4539578763621487"]\n`,
    );
    const r = await sluice(["rules", "validate", "kw.yaml"], { cwd: t.dir, home: t.home });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});

describe("sluice rules list / export / import", () => {
  test("before the first serve: built-in and config rules, with the API's filters", async () => {
    using t = setup();
    const all = await sluice(["rules", "list", "--format", "json"], { cwd: t.dir, home: t.home });
    expect(all.code).toBe(0);
    const names = JSON.parse(all.stdout).rules.map((r: { name: string }) => r.name);
    expect(names).toContain("acme-token");
    expect(names).toContain("build-id");
    const f = async (...args: string[]) =>
      JSON.parse(
        (await sluice(["rules", "list", "-f", "json", ...args], { cwd: t.dir, home: t.home })).stdout,
      ).rules.map((r: { name: string }) => r.name);
    expect(await f("--search", "acme")).toEqual(["acme-token"]);
    expect(await f("--q", "nomatch,identifiers")).toEqual(["build-id"]);
    expect(await f("--severity", "info", "--source", "config")).toEqual(["build-id"]);
    expect(await f("--tag", "acme")).toEqual(["acme-token"]);
    expect(
      await f("--tier", "custom", "--detector", "custom", "--enabled", "true", "--source", "config"),
    ).toEqual(["acme-token", "build-id"]);
    expect(await f("--enabled", "false", "--source", "config")).toEqual([]);
    const text = await sluice(["rules", "list", "--search", "acme"], { cwd: t.dir, home: t.home });
    expect(text.stdout).toMatch(
      /^NAME\s+DETECTOR\s+SEVERITY\s+ACTION\s+ENABLED\s+TIER\s+SOURCE\nacme-token\s+custom\s+high\s+block\s+yes\s+custom\s+config\n$/,
    );
    const bad = await sluice(["rules", "list", "--enabled", "maybe"], { cwd: t.dir, home: t.home });
    expect(bad.code).toBe(1);
  });

  test("import validates first and imports nothing from a bad file", async () => {
    using t = setup();
    const r = await sluice(["rules", "import", "bad.yaml"], { cwd: t.dir, home: t.home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("nothing imported");
    expect(r.stderr).toContain("bad.yaml:5:");
    expect(existsSync(join(t.home, "sluice.db"))).toBe(false);
  });

  test("import into the store, skip or replace existing, then list and export from the store", async () => {
    using t = setup();
    const dry = await sluice(["rules", "import", "good.yaml", "--dry-run"], { cwd: t.dir, home: t.home });
    expect(dry.code).toBe(0);
    expect(existsSync(join(t.home, "sluice.db"))).toBe(false);
    const r = await sluice(["rules", "import", "good.yaml"], { cwd: t.dir, home: t.home });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("imported 2 rules");
    const again = await sluice(["rules", "import", "good.yaml"], { cwd: t.dir, home: t.home });
    expect(again.stdout).toContain("skipped 2 existing");
    writeFileSync(join(t.dir, "good.yaml"), GOOD.replace("severity: critical", "severity: warning"));
    const rep = await sluice(["rules", "import", "good.yaml", "--replace"], { cwd: t.dir, home: t.home });
    expect(rep.stdout).toContain("updated 2");
    const list = JSON.parse(
      (await sluice(["rules", "list", "-f", "json", "--source", "import"], { cwd: t.dir, home: t.home }))
        .stdout,
    );
    expect(list.origin).toBe("store");
    expect(list.rules.find((x: { name: string }) => x.name === "test-aws")).toMatchObject({
      severity: "warning",
      tags: ["cloud", "aws"],
    });

    // Export YAML then JSON; both validate and re-import cleanly.
    const y = await sluice(["rules", "export", "--out", "out.yaml", "--tag", "aws"], {
      cwd: t.dir,
      home: t.home,
    });
    expect(y.code).toBe(0);
    const exported = parse(readFileSync(join(t.dir, "out.yaml"), "utf8"));
    expect(exported.rules.map((x: { name: string }) => x.name)).toEqual(["test-aws"]);
    expect(exported.rules[0].examples).toEqual(["key AKIAIOSFODNN7EXAMPLQ"]);
    const j = await sluice(["rules", "export", "--out", "out.json"], { cwd: t.dir, home: t.home });
    expect(j.code).toBe(0);
    expect(JSON.parse(readFileSync(join(t.dir, "out.json"), "utf8")).rules.length).toBe(2);
    const v = await sluice(["rules", "validate", "out.yaml", "out.json"], { cwd: t.dir, home: t.home });
    expect(v.code).toBe(0);
    const stdoutExport = await sluice(["rules", "export", "-f", "json", "--search", "insensitive"], {
      cwd: t.dir,
      home: t.home,
    });
    expect(JSON.parse(stdoutExport.stdout).rules.map((x: { name: string }) => x.name)).toEqual([
      "case-insensitive",
    ]);
  });
});

/**
 * The release workflows: each parses as a GitHub Actions workflow (GitHub's own parser), runs on what
 * it should, and computes what it publishes with .github/scripts/release-plan.ts, which this test
 * runs as the workflows do, in a git repository where v1.2.3 is tagged on main: the tag set of each
 * workflow for v1.2.3 and for a main build, and the refusals (a tag off main, a tag that does not
 * name package.json's version). The Dockerfile runs as a non-root user.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";
import { tempDirs } from "../helpers/temp.ts";

const REPO = resolve(import.meta.dir, "../..");
const PLAN = join(REPO, ".github/scripts/release-plan.ts");
const WORKFLOWS = ["release-package", "release-image", "release-binaries"] as const;
const temp = tempDirs();

async function parse(content: string, name: string) {
  const r = parseWorkflow({ name, content }, new NoOperationTraceWriter());
  const errors = r.context.errors.getErrors().map((e) => e.message);
  if (!r.value) return { errors, template: null };
  const template = await convertWorkflowTemplate(r.context, r.value);
  return { errors: [...errors, ...(template.errors ?? []).map((e) => e.Message)], template };
}

test("each release workflow is a valid workflow, triggered as a release should be, and independent", async () => {
  for (const name of [...WORKFLOWS, "ci"]) {
    const text = readFileSync(join(REPO, ".github/workflows", `${name}.yml`), "utf8");
    const { errors, template } = await parse(text, `${name}.yml`);
    expect({ name, errors }).toEqual({ name, errors: [] });
    const events = template!.events as { push?: { tags?: string[]; branches?: string[] } };
    if (name === "ci") continue;
    expect(events.push?.tags).toEqual(["v*"]);
    expect(events.push?.branches ?? []).toEqual(name === "release-image" ? ["main"] : []);
    expect(Object.keys(template!.events)).toEqual(["push"]);
    // Each computes its plan with the shared script, for its own kind of release.
    expect(text).toContain(
      `bun .github/scripts/release-plan.ts ${name.slice("release-".length)} --ref "$GITHUB_REF"`,
    );
    // Independent: none waits for another workflow.
    expect(text).not.toContain("workflow_run");
  }
  // The parser is strict: a job without runs-on and an unknown key are errors.
  const broken = await parse(
    "on: push\njobs:\n  a:\n    steps:\n      - run: true\n    frobnicate: 1\n",
    "broken.yml",
  );
  expect(broken.errors.length).toBeGreaterThan(0);
});

/** A repository with package.json at 1.2.3 on main, tagged v1.2.3, and a commit on a side branch. */
function repo(version = "1.2.3"): { dir: string; main: string; side: string } {
  const dir = temp("sluice-release-repo-");
  const git = (...args: string[]) => {
    const r = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], {
      cwd: dir,
      stdout: "pipe",
      stderr: "pipe",
    });
    if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
    return r.stdout.toString().trim();
  };
  git("init", "-q", "-b", "main");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "sluice", version }));
  git("add", ".");
  git("commit", "-qm", "release");
  git("tag", `v${version}`);
  const main = git("rev-parse", "HEAD");
  git("checkout", "-qb", "side");
  writeFileSync(join(dir, "x"), "x");
  git("add", ".");
  git("commit", "-qm", "side");
  const side = git("rev-parse", "HEAD");
  git("checkout", "-q", "main");
  return { dir, main, side };
}

/** Run the plan script as a workflow step does, with GITHUB_OUTPUT. */
function plan(dir: string, workflow: string, ref: string, sha: string) {
  const out = join(dir, "github-output");
  writeFileSync(out, "");
  const r = Bun.spawnSync(
    [
      process.execPath,
      PLAN,
      workflow,
      "--ref",
      ref,
      "--sha",
      sha,
      "--main-ref",
      "main",
      "--image",
      "ghcr.io/Acme/Sluice",
    ],
    { cwd: dir, env: { ...process.env, GITHUB_OUTPUT: out }, stdout: "pipe", stderr: "pipe" },
  );
  return {
    code: r.exitCode,
    plan: r.exitCode === 0 ? JSON.parse(r.stdout.toString()) : null,
    stderr: r.stderr.toString(),
    outputs: readFileSync(out, "utf8"),
  };
}

test("v1.2.3 on main: the package, the image tags and the release files", () => {
  const { dir, main } = repo();
  const ref = "refs/tags/v1.2.3";
  expect(plan(dir, "package", ref, main).plan).toEqual({
    publish: true,
    version: "1.2.3",
    dist_tag: "latest",
  });
  const image = plan(dir, "image", ref, main);
  expect(image.plan.tags).toEqual([
    "ghcr.io/acme/sluice:latest",
    "ghcr.io/acme/sluice:1.2.3",
    "ghcr.io/acme/sluice:1.2",
    "ghcr.io/acme/sluice:1",
    `ghcr.io/acme/sluice:${main}`,
  ]);
  // What the workflow reads: one tag per line.
  expect(image.outputs).toContain(`publish=true\nversion=1.2.3\ntags<<EOF\nghcr.io/acme/sluice:latest\n`);
  const bins = plan(dir, "binaries", ref, main);
  expect(bins.plan.release).toEqual({
    tag: "v1.2.3",
    name: "sluice 1.2.3",
    prerelease: false,
    files: [
      "sluice-aarch64-apple-darwin",
      "sluice-agent-aarch64-apple-darwin",
      "sluice-agent-x86_64-apple-darwin",
      "sluice-agent-x86_64-unknown-linux-gnu",
      "sluice-x86_64-apple-darwin",
      "sluice-x86_64-unknown-linux-gnu",
      "checksums.txt",
      "install.sh",
    ],
  });
  expect(bins.outputs).toContain("release_tag=v1.2.3\nrelease_name=sluice 1.2.3\nprerelease=false\n");
});

test("a main build: the image tagged main and the commit; no package, no release", () => {
  const { dir, main } = repo();
  expect(plan(dir, "image", "refs/heads/main", main).plan.tags).toEqual([
    "ghcr.io/acme/sluice:main",
    `ghcr.io/acme/sluice:${main}`,
  ]);
  for (const w of ["package", "binaries"]) {
    const p = plan(dir, w, "refs/heads/main", main);
    expect(p.plan.publish).toBe(false);
    expect(p.outputs).toBe("publish=false\n");
  }
});

test("pre-releases and 0.x: no latest or X.Y tags for an rc; the npm tag is next; 0.x is an alpha", () => {
  const rc = repo("2.0.0-rc.1");
  expect(plan(rc.dir, "image", "refs/tags/v2.0.0-rc.1", rc.main).plan.tags).toEqual([
    "ghcr.io/acme/sluice:2.0.0-rc.1",
    `ghcr.io/acme/sluice:${rc.main}`,
  ]);
  expect(plan(rc.dir, "package", "refs/tags/v2.0.0-rc.1", rc.main).plan.dist_tag).toBe("next");
  expect(plan(rc.dir, "binaries", "refs/tags/v2.0.0-rc.1", rc.main).plan.release.prerelease).toBe(true);
  const alpha = repo("0.4.0");
  expect(plan(alpha.dir, "binaries", "refs/tags/v0.4.0", alpha.main).plan.release.name).toBe(
    "sluice 0.4.0 (alpha)",
  );
});

test("a tag off main, or one that does not name package.json's version, releases nothing", () => {
  const { dir, side, main } = repo();
  for (const w of WORKFLOWS) {
    const off = plan(dir, w.slice("release-".length), "refs/tags/v1.2.3", side);
    expect(off.code).toBe(1);
    expect(off.stderr).toContain("v1.2.3 is not on main: releases are made from main only");
    const wrong = plan(dir, w.slice("release-".length), "refs/tags/v1.2.4", main);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("tag v1.2.4 does not name package.json's version 1.2.3");
  }
});

test("the Dockerfile's image runs as a non-root user", () => {
  const text = readFileSync(join(REPO, "Dockerfile"), "utf8");
  const stages = text.split(/^FROM /m);
  const last = stages.at(-1)!;
  const user = [...last.matchAll(/^USER (\S+)/gm)].at(-1)?.[1];
  expect(user).toBeDefined();
  expect(user!.split(":")[0]).not.toMatch(/^(root|0)$/);
  expect(last).toMatch(/^ENTRYPOINT \["\/usr\/local\/bin\/sluice"\]/m);
});

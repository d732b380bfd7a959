#!/usr/bin/env bun
/**
 * What one release workflow publishes for a push, computed in one place so that a test runs the
 * same code as the workflows:
 *
 *   bun .github/scripts/release-plan.ts <package|image|binaries> --ref <GITHUB_REF> --sha <GITHUB_SHA>
 *       [--image ghcr.io/owner/sluice] [--main-ref origin/main] [--package-json package.json]
 *
 * A `v*` tag releases only when its commit is on main, and the version always comes from
 * package.json at that commit (the tag must name the same version; nothing else is read from it).
 * A push to main builds only the container image, tagged with the branch name and the commit.
 * Prints the plan as JSON; with $GITHUB_OUTPUT set, also writes it there as step outputs.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { PROGRAMS, TARGETS } from "../../build.ts";

export type Workflow = "package" | "image" | "binaries";

export interface PlanInput {
  workflow: Workflow;
  ref: string;
  sha: string;
  /** package.json's version at the commit. */
  version: string;
  /** Whether the commit is on main (asked of git for tags). */
  onMain: boolean;
  /** The image name without a tag (lower-cased: registries require it). */
  image?: string;
}

export interface Plan {
  publish: boolean;
  /** Why nothing is published, when so. */
  reason?: string;
  version?: string;
  /** npm dist-tag: `latest`, or `next` for a pre-release. */
  dist_tag?: string;
  /** Image references to push. */
  tags?: string[];
  /** GitHub release. */
  release?: { tag: string; name: string; prerelease: boolean; files: string[] };
}

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

export class PlanError extends Error {
  override name = "PlanError";
}

/** The files a binaries release holds: every program for every shipped triple, the checksums, the installer. */
export function releaseFiles(): string[] {
  const bins = PROGRAMS.flatMap((p) => Object.keys(TARGETS).map((t) => `${p}-${t}`));
  return [...bins.sort(), "checksums.txt", "install.sh"];
}

export function plan(input: PlanInput): Plan {
  const { workflow, ref, sha } = input;
  if (!/^[0-9a-f]{40}$/.test(sha))
    throw new PlanError(`--sha ${JSON.stringify(sha)} is not a full commit SHA`);
  const image = input.image?.toLowerCase();
  const tag = ref.startsWith("refs/tags/") ? ref.slice("refs/tags/".length) : null;
  const branch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : null;

  if (branch === "main") {
    if (workflow !== "image")
      return { publish: false, reason: "main builds publish only the container image" };
    if (!image) throw new PlanError("--image is required for the image workflow");
    return { publish: true, tags: [`${image}:main`, `${image}:${sha}`] };
  }
  if (!tag?.startsWith("v")) return { publish: false, reason: `${ref} is neither a v* tag nor main` };
  if (!input.onMain) throw new PlanError(`${tag} is not on main: releases are made from main only`);
  const m = SEMVER.exec(input.version);
  if (!m) throw new PlanError(`package.json version ${JSON.stringify(input.version)} is not X.Y.Z`);
  if (tag !== `v${input.version}`)
    throw new PlanError(
      `tag ${tag} does not name package.json's version ${input.version} (expected v${input.version})`,
    );
  const [, major, minor, patch, pre] = m;
  const version = input.version;
  const prerelease = pre !== undefined;

  if (workflow === "package") return { publish: true, version, dist_tag: prerelease ? "next" : "latest" };
  if (workflow === "image") {
    if (!image) throw new PlanError("--image is required for the image workflow");
    const names = prerelease
      ? [version, sha]
      : ["latest", `${major}.${minor}.${patch}`, `${major}.${minor}`, `${major}`, sha];
    return { publish: true, version, tags: names.map((n) => `${image}:${n}`) };
  }
  return {
    publish: true,
    version,
    release: {
      tag,
      // Before 1.0 a release is an alpha.
      name: `sluice ${version}${major === "0" ? " (alpha)" : ""}`,
      prerelease,
      files: releaseFiles(),
    },
  };
}

/** Whether `sha` is an ancestor of (or is) `mainRef`, asked of git. */
export function isOnMain(sha: string, mainRef: string, cwd = process.cwd()): boolean {
  const r = Bun.spawnSync(["git", "merge-base", "--is-ancestor", sha, mainRef], { cwd, stderr: "pipe" });
  if (r.exitCode === 0) return true;
  if (r.exitCode === 1) return false;
  throw new PlanError(`git merge-base ${sha} ${mainRef} failed: ${r.stderr.toString().trim()}`);
}

/** The plan as GitHub Actions step outputs (lists one item per line). */
export function outputs(p: Plan): string {
  const lines = [`publish=${p.publish}`];
  if (p.version) lines.push(`version=${p.version}`);
  if (p.dist_tag) lines.push(`dist_tag=${p.dist_tag}`);
  if (p.tags) lines.push(`tags<<EOF\n${p.tags.join("\n")}\nEOF`);
  if (p.release)
    lines.push(
      `release_tag=${p.release.tag}`,
      `release_name=${p.release.name}`,
      `prerelease=${p.release.prerelease}`,
    );
  return `${lines.join("\n")}\n`;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Bun.argv.slice(2),
    allowPositionals: true,
    options: {
      ref: { type: "string" },
      sha: { type: "string" },
      image: { type: "string" },
      "main-ref": { type: "string", default: "origin/main" },
      "package-json": { type: "string", default: "package.json" },
    },
  });
  try {
    const workflow = positionals[0] as Workflow;
    if (!["package", "image", "binaries"].includes(workflow))
      throw new PlanError(
        "usage: release-plan.ts <package|image|binaries> --ref REF --sha SHA [--image NAME]",
      );
    if (!values.ref || !values.sha) throw new PlanError("--ref and --sha are required");
    const version = (JSON.parse(readFileSync(values["package-json"]!, "utf8")) as { version: string })
      .version;
    const onMain = values.ref.startsWith("refs/tags/") ? isOnMain(values.sha, values["main-ref"]!) : false;
    const p = plan({ workflow, ref: values.ref, sha: values.sha, version, onMain, image: values.image });
    console.log(JSON.stringify(p, null, 2));
    if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, outputs(p));
  } catch (e) {
    console.error(`release-plan: ${(e as Error).message}`);
    process.exit(1);
  }
}

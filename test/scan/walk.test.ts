import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { walk } from "../../src/scan/walk.ts";
import { tempDir, tempRepo } from "./_git.ts";

function tree(dir: string, files: Record<string, string>) {
  for (const [p, body] of Object.entries(files)) {
    mkdirSync(join(dir, p, ".."), { recursive: true });
    writeFileSync(join(dir, p), body);
  }
}
const names = (dir: string, paths: string[], skipGlobs?: string[]) =>
  walk(paths, { cwd: dir, skipGlobs }).files.map((f) => f.display);

describe("walk", () => {
  test("recursive, sorted, .git skipped, nested .gitignore files applied", () => {
    using t = tempDir();
    tree(t.dir, {
      ".gitignore": "dist/\n*.tmp\n",
      "b.ts": "",
      "a/z.ts": "",
      "a/.gitignore": "secret.txt\n!keep.tmp\n",
      "a/secret.txt": "",
      "a/keep.tmp": "",
      "a/drop.tmp": "",
      "dist/out.js": "",
      ".git/config": "",
    });
    expect(names(t.dir, ["."])).toEqual([".gitignore", "a/.gitignore", "a/keep.tmp", "a/z.ts", "b.ts"]);
  });

  test("a subdirectory of a repository honours .gitignore files above it and .git/info/exclude", () => {
    using r = tempRepo();
    tree(r.dir, {
      ".gitignore": "*.log\n/sub/gen/\n",
      "sub/a.ts": "",
      "sub/x.log": "",
      "sub/gen/g.ts": "",
      "sub/local.env": "",
    });
    writeFileSync(join(r.dir, ".git", "info", "exclude"), "*.env\n");
    expect(names(join(r.dir, "sub"), ["."])).toEqual(["a.ts"]);
    expect(names(r.dir, ["sub"])).toEqual(["sub/a.ts"]);
  });

  test("symbolic links are not followed; named files are always included; missing paths reported", () => {
    using t = tempDir();
    tree(t.dir, { "real/a.ts": "", ".gitignore": "ignored.txt\n", "ignored.txt": "" });
    symlinkSync(join(t.dir, "real"), join(t.dir, "link"));
    symlinkSync(join(t.dir, "real", "a.ts"), join(t.dir, "file-link.ts"));
    expect(names(t.dir, ["."])).toEqual([".gitignore", "real/a.ts"]);
    expect(names(t.dir, ["ignored.txt"])).toEqual(["ignored.txt"]);
    const w = walk(["nope", "real"], { cwd: t.dir });
    expect(w.missing).toEqual(["nope"]);
    expect(w.files.map((f) => f.display)).toEqual(["real/a.ts"]);
  });

  test("allowlists.paths globs skip files; a file reached twice is listed once", () => {
    using t = tempDir();
    tree(t.dir, { "vendor/lib.js": "", "src/a.ts": "", "src/a.test.ts": "" });
    expect(names(t.dir, ["."], ["vendor/**", "**/*.test.ts"])).toEqual(["src/a.ts"]);
    expect(names(t.dir, ["src", "src/a.ts", "."])).toEqual(["src/a.test.ts", "src/a.ts", "vendor/lib.js"]);
  });
});

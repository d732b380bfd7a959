import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { addedLines, GitError, parseUnifiedDiff, scanAdded } from "../../src/scan/diff.ts";
import { git, tempDir, tempRepo } from "./_git.ts";
import { AWS, regexScanner } from "./_scanner.ts";

// Subprocesses and git on a loaded machine: give each test room.
setDefaultTimeout(30_000);

const KEY = "AKIAIOSFODNN7EXAMPLQ";
const KEY2 = "AKIAJ7QWERTYUIOPASDF";

async function scanDiff(cwd: string, ref?: string) {
  const { top, files } = await addedLines({ ref, cwd });
  return scanAdded(files, top, cwd, regexScanner([AWS]));
}
const where = (res: Awaited<ReturnType<typeof scanDiff>>) =>
  res.flatMap((f) => f.findings.map((x) => `${x.file}:${x.line}:${x.column}`));

describe("parseUnifiedDiff", () => {
  test("added lines carry new-file line numbers; removed and context lines do not count", () => {
    const diff = [
      "diff --git a/x.txt b/x.txt",
      "index 1..2 100644",
      "--- a/x.txt",
      "+++ b/x.txt",
      "@@ -2,0 +3,2 @@ fn",
      "+three",
      "+four",
      "@@ -9 +10,0 @@",
      "-gone",
      "@@ -20,1 +20,2 @@",
      "-old",
      "+new",
      "++++ plus",
      "\\ No newline at end of file",
      'diff --git "a/sp ace\\303\\251.txt" "b/sp ace\\303\\251.txt"',
      "new file mode 100644",
      "--- /dev/null",
      '+++ "b/sp ace\\303\\251.txt"',
      "@@ -0,0 +1 @@",
      "+x",
      "diff --git a/gone.txt b/gone.txt",
      "deleted file mode 100644",
      "--- a/gone.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-bye",
      "diff --git a/img.png b/img.png",
      "new file mode 100644",
      "Binary files /dev/null and b/img.png differ",
    ].join("\n");
    const files = parseUnifiedDiff(diff);
    expect(files.map((f) => [f.path, f.lines, f.lineNumbers, f.binary])).toEqual([
      ["x.txt", ["three", "four", "new", "+++ plus"], [3, 4, 20, 21], false],
      ["sp aceé.txt", ["x"], [1], false],
      ["img.png", [], [], true],
    ]);
  });
});

describe("git diff scanning", () => {
  test("staged changes in a repository with no commits yet", async () => {
    using r = tempRepo();
    writeFileSync(join(r.dir, "a.txt"), `one\ntwo\nkey=${KEY}\n`);
    git(r.dir, "add", "a.txt");
    expect(where(await scanDiff(r.dir))).toEqual(["a.txt:3:5"]);
  });

  test("staged: only added lines, with new line numbers; unstaged changes are not included", async () => {
    using r = tempRepo();
    writeFileSync(join(r.dir, "a.txt"), `old ${KEY}\n1\n2\n3\n`);
    git(r.dir, "add", ".");
    git(r.dir, "commit", "-qm", "one");
    writeFileSync(join(r.dir, "a.txt"), `old ${KEY}\n1\nnew ${KEY2}\n2\n3\n`);
    git(r.dir, "add", ".");
    writeFileSync(join(r.dir, "a.txt"), `old ${KEY}\n1\nnew ${KEY2}\n2\n3\nunstaged ${KEY}\n`);
    expect(where(await scanDiff(r.dir))).toEqual(["a.txt:3:5"]);
    // --diff HEAD compares with the working tree, so the unstaged line counts too.
    expect(where(await scanDiff(r.dir, "HEAD"))).toEqual(["a.txt:3:5", "a.txt:6:10"]);
  });

  test("a range a..b and a...b", async () => {
    using r = tempRepo();
    writeFileSync(join(r.dir, "a.txt"), "x\n");
    git(r.dir, "add", ".");
    git(r.dir, "commit", "-qm", "one");
    writeFileSync(join(r.dir, "b.txt"), `y\n${KEY}\n`);
    git(r.dir, "add", ".");
    git(r.dir, "commit", "-qm", "two");
    writeFileSync(join(r.dir, "c.txt"), `${KEY2}\n`);
    git(r.dir, "add", ".");
    git(r.dir, "commit", "-qm", "three");
    expect(where(await scanDiff(r.dir, "HEAD~2..HEAD~1"))).toEqual(["b.txt:2:1"]);
    expect(where(await scanDiff(r.dir, "HEAD~2...HEAD"))).toEqual(["b.txt:2:1", "c.txt:1:1"]);
    expect(where(await scanDiff(r.dir, "HEAD~1"))).toEqual(["c.txt:1:1"]);
  });

  test("renamed file: reported under the new name; a pure rename adds nothing", async () => {
    using r = tempRepo();
    const body = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n");
    writeFileSync(join(r.dir, "old.txt"), `${body}\n`);
    writeFileSync(join(r.dir, "keep.txt"), `${KEY}\n`);
    git(r.dir, "add", ".");
    git(r.dir, "commit", "-qm", "one");
    git(r.dir, "mv", "keep.txt", "moved.txt");
    git(r.dir, "mv", "old.txt", "new.txt");
    writeFileSync(join(r.dir, "new.txt"), `${body}\nadded ${KEY2}\n`);
    git(r.dir, "add", ".");
    const res = await scanDiff(r.dir);
    expect(where(res)).toEqual(["new.txt:21:7"]);
  });

  test("deleted file adds nothing", async () => {
    using r = tempRepo();
    writeFileSync(join(r.dir, "a.txt"), `${KEY}\n`);
    git(r.dir, "add", ".");
    git(r.dir, "commit", "-qm", "one");
    git(r.dir, "rm", "-q", "a.txt");
    expect(await scanDiff(r.dir)).toEqual([]);
  });

  test("binary file is skipped", async () => {
    using r = tempRepo();
    writeFileSync(join(r.dir, "blob.bin"), Buffer.concat([Buffer.from([0, 1, 2, 0]), Buffer.from(KEY)]));
    git(r.dir, "add", ".");
    const res = await scanDiff(r.dir);
    expect(res.map((f) => [f.file, f.skipped, f.findings.length])).toEqual([["blob.bin", "binary", 0]]);
  });

  test("paths are reported relative to the working directory", async () => {
    using r = tempRepo();
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(r.dir, "sub"));
    writeFileSync(join(r.dir, "sub", "a.txt"), `${KEY}\n`);
    git(r.dir, "add", ".");
    expect(where(await scanDiff(join(r.dir, "sub")))).toEqual(["a.txt:1:1"]);
    expect(where(await scanDiff(r.dir))).toEqual(["sub/a.txt:1:1"]);
  });

  test("outside a repository: a clear error", async () => {
    using t = tempDir();
    const err = await addedLines({ cwd: t.dir }).catch((e) => e);
    expect(err).toBeInstanceOf(GitError);
    expect(err.message).toContain("not inside");
  });

  test("an unknown ref: a clear error", async () => {
    using r = tempRepo();
    const err = await addedLines({ cwd: r.dir, ref: "no-such-branch" }).catch((e) => e);
    expect(err).toBeInstanceOf(GitError);
    expect(err.message).toContain("not a commit or range");
  });
});

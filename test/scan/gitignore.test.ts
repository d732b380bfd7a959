import { describe, expect, test } from "bun:test";
import { Ignore } from "../../src/scan/gitignore.ts";

function ig(text: string) {
  const i = new Ignore();
  i.add(text, "");
  return i;
}

describe("gitignore", () => {
  const cases: [string, string, boolean, boolean][] = [
    // pattern, path, isDir, ignored
    ["*.log", "a.log", false, true],
    ["*.log", "deep/dir/a.log", false, true],
    ["*.log", "a.log.txt", false, false],
    ["/build", "build", true, true],
    ["/build", "src/build", true, false],
    ["build/", "src/build", true, true],
    ["build/", "build", false, false],
    ["doc/*.txt", "doc/a.txt", false, true],
    ["doc/*.txt", "doc/sub/a.txt", false, false],
    ["doc/*.txt", "x/doc/a.txt", false, false],
    ["**/foo", "a/b/foo", false, true],
    ["**/foo", "foo", false, true],
    ["a/**/b", "a/b", false, true],
    ["a/**/b", "a/x/y/b", false, true],
    ["abc/**", "abc/x/y", false, true],
    ["abc/**", "abc", true, false],
    ["f?o", "fao", false, true],
    ["f[a-c]o", "fbo", false, true],
    ["f[!a-c]o", "fbo", false, false],
    ["\\#notacomment", "#notacomment", false, true],
    ["# comment", "# comment", false, false],
    ["trailing   ", "trailing", false, true],
  ];
  for (const [pattern, path, isDir, ignored] of cases) {
    test(`${JSON.stringify(pattern)} ${ignored ? "ignores" : "keeps"} ${path}${isDir ? "/" : ""}`, () => {
      expect(ig(pattern).ignores(path, isDir)).toBe(ignored);
    });
  }

  test("negation: last match wins", () => {
    const i = ig("*.log\n!keep.log");
    expect(i.ignores("a.log", false)).toBe(true);
    expect(i.ignores("keep.log", false)).toBe(false);
    expect(ig("!keep.log\n*.log").ignores("keep.log", false)).toBe(true);
  });

  test("nested .gitignore is relative to its directory and overrides its parent", () => {
    const i = new Ignore();
    i.add("*.env", "");
    i.add("/local.txt\n!ok.env", "sub");
    expect(i.ignores("sub/local.txt", false)).toBe(true);
    expect(i.ignores("local.txt", false)).toBe(false);
    expect(i.ignores("sub/ok.env", false)).toBe(false);
    expect(i.ignores("other/ok.env", false)).toBe(true);
  });

  test("ancestor .gitignore applies through the root's prefix", () => {
    const i = new Ignore();
    i.addAncestor("/pkg/gen/\nsecret.txt", "pkg");
    expect(i.ignores("gen", true)).toBe(true);
    expect(i.ignores("src/secret.txt", false)).toBe(true);
    expect(i.ignores("src/main.ts", false)).toBe(false);
  });
});

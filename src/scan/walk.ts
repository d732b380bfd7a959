/**
 * Which files `sluice scan <paths...>` reads: named files as they are, directories recursively,
 * honouring `.gitignore` (including those of parent directories up to the repository root and
 * `.git/info/exclude`), never entering `.git/`, never following symbolic links.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { Ignore } from "./gitignore.ts";

export interface FileEntry {
  /** Absolute path. */
  abs: string;
  /** How the file is reported: relative to the working directory, "/"-separated. */
  display: string;
  size: number;
}

export interface WalkOptions {
  cwd?: string;
  /** Globs (config `allowlists.paths`) whose files are not scanned. */
  skipGlobs?: string[];
}

export interface WalkResult {
  files: FileEntry[];
  /** Paths that do not exist or cannot be read. */
  missing: string[];
  /** Files left out because of `.gitignore` or `allowlists.paths` (counted, not listed). */
  ignored: number;
}

export function toDisplay(abs: string, cwd: string): string {
  // Under cwd (the usual case) the shown path is the rest of it; path.relative costs ~5 us a file.
  const rel =
    abs.length > cwd.length + 1 && abs.startsWith(cwd) && abs[cwd.length] === sep
      ? abs.slice(cwd.length + 1)
      : relative(cwd, abs) || ".";
  return sep === "/" ? rel : rel.split(sep).join("/");
}

/** The directory holding `.git` at or above `dir`, if any. */
export function findRepoRoot(dir: string): string | null {
  let cur = resolve(dir);
  for (;;) {
    if (existsSync(join(cur, ".git"))) return cur;
    const up = dirname(cur);
    if (up === cur) return null;
    cur = up;
  }
}

function readIfExists(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** Whether globs (config `allowlists.paths`) leave a file out: one matches its shown or absolute path. */
export function pathSkipper(globs: string[]): (file: { display: string; abs: string }) => boolean {
  const skip = globs.map((g) => new Bun.Glob(g));
  return (f) => skip.some((g) => g.match(f.display) || g.match(f.abs));
}

export function walk(paths: string[], opts: WalkOptions = {}): WalkResult {
  const cwd = opts.cwd ?? process.cwd();
  const isSkipped = pathSkipper(opts.skipGlobs ?? []);
  const skipped = (display: string, abs: string) => isSkipped({ display, abs });
  const out: FileEntry[] = [];
  const missing: string[] = [];
  const seen = new Set<string>();
  let ignored = 0;

  const addFile = (abs: string, size: number) => {
    if (seen.has(abs)) return;
    seen.add(abs);
    const display = toDisplay(abs, cwd);
    if (skipped(display, abs)) {
      ignored++;
      return;
    }
    out.push({ abs, display, size });
  };

  for (const p of paths) {
    const abs = resolve(cwd, p);
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(abs);
    } catch {
      missing.push(p);
      continue;
    }
    if (st.isFile()) {
      addFile(abs, st.size);
      continue;
    }
    if (!st.isDirectory()) continue;
    const root = abs;
    const ig = ancestorIgnores(root);
    const walkDir = (dir: string, rel: string) => {
      const text = readIfExists(join(dir, ".gitignore"));
      if (text) ig.add(text, rel);
      let entries: import("node:fs").Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        missing.push(toDisplay(dir, cwd));
        return;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of entries) {
        if (e.name === ".git") continue;
        const childRel = rel ? `${rel}/${e.name}` : e.name;
        const childAbs = join(dir, e.name);
        if (e.isSymbolicLink()) continue;
        if (e.isDirectory()) {
          if (ig.ignores(childRel, true)) {
            ignored++;
            continue;
          }
          walkDir(childAbs, childRel);
        } else if (e.isFile()) {
          if (ig.ignores(childRel, false)) {
            ignored++;
            continue;
          }
          let size = 0;
          try {
            size = lstatSync(childAbs).size;
          } catch {
            continue;
          }
          addFile(childAbs, size);
        }
      }
    };
    walkDir(root, "");
  }
  return { files: out, missing, ignored };
}

/**
 * The ignore rules that apply to a scanned directory from above it: the repository's
 * `.git/info/exclude` and the `.gitignore` files between the repository's root and the directory.
 */
function ancestorIgnores(root: string): Ignore {
  const ig = new Ignore();
  const repo = findRepoRoot(root);
  if (!repo) return ig;
  const addAt = (text: string, d: string) => {
    const prefix = relBase(root, d);
    if (prefix) ig.addAncestor(text, prefix);
    else ig.add(text, "");
  };
  const exclude = readIfExists(join(repo, ".git", "info", "exclude"));
  if (exclude) addAt(exclude, repo);
  const chain: string[] = [];
  for (let d = root; ; d = dirname(d)) {
    chain.unshift(d);
    if (d === repo || dirname(d) === d) break;
  }
  for (const d of chain.slice(0, -1)) {
    const text = readIfExists(join(d, ".gitignore"));
    if (text) addAt(text, d);
  }
  return ig;
}

/** The scan root's path relative to an ancestor directory, "/"-separated ("" when the same). */
function relBase(root: string, ancestor: string): string {
  return relative(ancestor, root).split(sep).join("/");
}

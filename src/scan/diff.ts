/**
 * `sluice scan --diff`: the lines a change adds, with their file and line number in the new version.
 * Staged changes by default (`git diff --cached`, which also works before the first commit),
 * `--diff <ref>` (ref against the working tree) or `--diff <a>..<b>` / `<a>...<b>`.
 * Deleted files, pure renames and binary files add no lines and are skipped.
 */
import { join } from "node:path";
import type { Finding } from "../core/types.ts";
import type { FileResult } from "./types.ts";
import { toDisplay } from "./walk.ts";
import { type TextScanner, WindowScanner } from "./window.ts";

export class GitError extends Error {
  override name = "GitError";
}

/** One file's added lines: their text joined by "\n" and the new-file line number of each. */
export interface AddedFile {
  /** Path in the repository (new side). */
  path: string;
  lines: string[];
  lineNumbers: number[];
  binary: boolean;
}

/** Undo git's C-style quoting of a path (`"a\tb"`). */
function unquote(p: string): string {
  if (!p.startsWith('"')) return p;
  const body = p.slice(1, -1);
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      bytes.push(...enc.encode(c));
      continue;
    }
    const n = body[++i]!;
    if (/[0-7]/.test(n)) {
      bytes.push(Number.parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else {
      const map: Record<string, string> = {
        t: "\t",
        n: "\n",
        r: "\r",
        '"': '"',
        "\\": "\\",
        a: "\x07",
        b: "\b",
      };
      bytes.push(...enc.encode(map[n] ?? n));
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

function stripPrefix(p: string, prefix: string): string {
  const u = unquote(p);
  return u.startsWith(prefix) ? u.slice(prefix.length) : u;
}

/** Parse `git diff -U0` output into added lines per file. */
export function parseUnifiedDiff(text: string): AddedFile[] {
  const files: AddedFile[] = [];
  let cur: AddedFile | null = null;
  let newLine = 0;
  let inHunk = false;
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) {
    if (line.startsWith("diff --git ")) {
      cur = { path: "", lines: [], lineNumbers: [], binary: false };
      files.push(cur);
      inHunk = false;
      // Fallback path from the header (used for binary files and pure renames).
      const m = /^diff --git (?:"?a\/.*?"?) ("?b\/.*"?)$/.exec(line);
      if (m) cur.path = stripPrefix(m[1]!, "b/");
      continue;
    }
    if (!cur) continue;
    if (!inHunk) {
      if (line.startsWith("+++ ")) {
        const p = line.slice(4);
        cur.path = p === "/dev/null" ? "" : stripPrefix(p, "b/");
      } else if (line.startsWith("rename to ")) {
        cur.path = unquote(line.slice("rename to ".length));
      } else if (line.startsWith("deleted file mode")) {
        cur.path = "";
      } else if (line.startsWith("Binary files ") || line === "GIT binary patch") {
        cur.binary = true;
      }
    }
    if (line.startsWith("@@")) {
      const m = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
      if (m) {
        newLine = Number(m[1]);
        inHunk = true;
      }
      continue;
    }
    if (!inHunk) continue;
    if (line.startsWith("+")) {
      cur.lines.push(line.slice(1));
      cur.lineNumbers.push(newLine++);
    } else if (line.startsWith(" ")) {
      newLine++;
    }
    // "-" lines and "\ No newline at end of file" do not move the new-side counter.
  }
  return files.filter((f) => f.path !== "" && (f.lines.length > 0 || f.binary));
}

async function git(args: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(["git", ...args], { cwd, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  } catch (e) {
    throw new GitError(`cannot run git: ${(e as Error).message}`);
  }
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout as ReadableStream).text(),
    new Response(proc.stderr as ReadableStream).text(),
    proc.exited,
  ]);
  return { code, out, err };
}

export interface DiffOptions {
  /** "" (or undefined) for staged changes, a ref, or a range `a..b` / `a...b`. */
  ref?: string;
  cwd?: string;
  /** Restrict the diff to these paths (git pathspecs). */
  paths?: string[];
}

/** The repository's top level, or a GitError that says the directory is not in a repository. */
export async function repoTopLevel(cwd: string): Promise<string> {
  const r = await git(["rev-parse", "--show-toplevel"], cwd);
  if (r.code !== 0) {
    throw new GitError(
      `--diff needs a git repository, and ${cwd} is not inside one (git: ${r.err.trim().split("\n")[0] || "rev-parse failed"})`,
    );
  }
  return r.out.trim();
}

/** Whether `ref` names a revision or a range of this repository. */
export async function isRevision(ref: string, cwd: string): Promise<boolean> {
  const parts = ref.includes("...") ? ref.split("...") : ref.includes("..") ? ref.split("..") : [ref];
  for (const p of parts) {
    if (p === "") continue;
    const r = await git(["rev-parse", "--verify", "--quiet", `${p}^{commit}`], cwd);
    if (r.code !== 0) return false;
  }
  return true;
}

export async function addedLines(opts: DiffOptions = {}): Promise<{ top: string; files: AddedFile[] }> {
  const cwd = opts.cwd ?? process.cwd();
  const top = await repoTopLevel(cwd);
  const args = [
    "-c",
    "core.quotePath=false",
    "diff",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--unified=0",
    "--find-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
  ];
  if (!opts.ref) args.push("--cached");
  else {
    if (!(await isRevision(opts.ref, cwd)))
      throw new GitError(`--diff ${opts.ref}: not a commit or range in this repository`);
    args.push(opts.ref);
  }
  args.push("--", ...(opts.paths?.length ? opts.paths : []));
  const r = await git(args, cwd);
  if (r.code !== 0) throw new GitError(`git diff failed: ${r.err.trim().split("\n")[0]}`);
  return { top, files: parseUnifiedDiff(r.out) };
}

/**
 * Scan the added lines of each file. All of a file's added lines are scanned as one text (a key spread
 * over several lines is found, even across hunks); positions are mapped back to new-file line numbers.
 */
export function scanAdded(files: AddedFile[], top: string, cwd: string, scan: TextScanner): FileResult[] {
  return files.map((f) => {
    const display = toDisplay(join(top, f.path), cwd);
    if (f.binary) return { file: display, bytes: 0, skipped: "binary", findings: [] };
    const text = f.lines.join("\n");
    // Scan as if the added lines were a file of their own, then renumber the lines.
    const ws = new WindowScanner((t, p) => scan(t, p) as Finding[], display);
    ws.push(text);
    const findings = ws.finish().map((x) => ({
      ...x,
      line: f.lineNumbers[x.line - 1] ?? x.line,
      end_line: f.lineNumbers[x.end_line - 1] ?? x.end_line,
    }));
    return { file: display, bytes: Buffer.byteLength(text), skipped: null, findings };
  });
}

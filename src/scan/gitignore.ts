/**
 * `.gitignore` matching, enough of git's rules for `sluice scan <dir>`: comments, negation, escapes,
 * directory-only patterns (`build/`), anchored patterns (`/dist`, `a/b`), `*`, `?`, `[...]` and `**`.
 * The last matching pattern wins; deeper files come after their ancestors.
 *
 * @example
 * const ig = new Ignore();
 * ig.add("node_modules/\n*.log\n!keep.log", "");
 * ig.ignores("src/node_modules", true); // true
 * ig.ignores("keep.log", false); // false
 */

interface IgnoreRule {
  /** Directory of the .gitignore, relative to the scan root with "/" separators ("" for the root). */
  base: string;
  /** For a .gitignore above the scan root: the root's path relative to that file's directory. */
  prefix: string | null;
  re: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

export class Ignore {
  readonly #rules: IgnoreRule[] = [];

  /** Add the patterns of one `.gitignore` whose directory is `base` (relative, "/"-separated). */
  add(text: string, base: string): void {
    for (const raw of text.split(/\r?\n/)) {
      const rule = parseLine(raw, base, null);
      if (rule) this.#rules.push(rule);
    }
  }

  /** Add a `.gitignore` of a directory above the scan root; `prefix` is the root relative to it. */
  addAncestor(text: string, prefix: string): void {
    for (const raw of text.split(/\r?\n/)) {
      const rule = parseLine(raw, "", prefix);
      if (rule) this.#rules.push(rule);
    }
  }

  get size(): number {
    return this.#rules.length;
  }

  /** Whether `rel` (relative to the scan root, "/"-separated) is ignored. */
  ignores(rel: string, isDir: boolean): boolean {
    let ignored = false;
    for (const r of this.#rules) {
      if (r.dirOnly && !isDir) continue;
      let sub: string;
      if (r.prefix) sub = `${r.prefix}/${rel}`;
      else if (r.base === "") sub = rel;
      else if (rel.startsWith(`${r.base}/`)) sub = rel.slice(r.base.length + 1);
      else continue;
      if (r.re.test(sub)) ignored = !r.negate;
    }
    return ignored;
  }
}

function parseLine(raw: string, base: string, prefix: string | null): IgnoreRule | null {
  let line = raw;
  if (line === "" || line.startsWith("#")) return null;
  // Trailing spaces are dropped unless escaped with a backslash.
  line = line.replace(/(?<!\\)\s+$/, "");
  if (line === "") return null;
  let negate = false;
  if (line.startsWith("!")) {
    negate = true;
    line = line.slice(1);
  } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
    line = line.slice(1);
  }
  let dirOnly = false;
  if (line.endsWith("/")) {
    dirOnly = true;
    line = line.slice(0, -1);
  }
  if (line === "") return null;
  const anchored = line.includes("/");
  if (line.startsWith("/")) line = line.slice(1);
  const body = globToRegex(line);
  const re = new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`);
  return { base, prefix, re, negate, dirOnly };
}

/** Translate one gitignore glob into a regular expression body. */
export function globToRegex(glob: string): string {
  let out = "";
  let i = 0;
  while (i < glob.length) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const atStart = i === 0 || glob[i - 1] === "/";
        const atEnd = i + 2 === glob.length || glob[i + 2] === "/";
        if (atStart && atEnd) {
          if (i + 2 === glob.length) {
            out += ".*"; // trailing "/**": everything inside
            i += 2;
          } else {
            out += "(?:.*/)?"; // "**/": zero or more directories
            i += 3;
          }
          continue;
        }
        out += "[^/]*";
        i += 2;
        continue;
      }
      out += "[^/]*";
      i++;
    } else if (c === "?") {
      out += "[^/]";
      i++;
    } else if (c === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) {
        out += "\\[";
        i++;
        continue;
      }
      let cls = glob.slice(i + 1, close);
      if (cls.startsWith("!")) cls = `^${cls.slice(1)}`;
      out += `[${cls.replace(/\\/g, "\\\\")}]`;
      i = close + 1;
    } else if (c === "\\" && i + 1 < glob.length) {
      out += escapeRe(glob[i + 1]!);
      i += 2;
    } else {
      out += escapeRe(c);
      i++;
    }
  }
  return out;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

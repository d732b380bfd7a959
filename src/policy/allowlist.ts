/**
 * Allowlists: `secrets` and `pii` entries match a finding's value, `paths`
 * entries match where it was found (a JSON path such as `messages[0].content`, or the file path given
 * to `scan`). An entry is an exact string or a glob: `*` any run of characters, `?` one character,
 * `**` the same as `*`. Applied before policy, so an allowlisted value never blocks.
 */
import type { DetectorName } from "../core/types.ts";

export interface Allowlists {
  secrets: string[];
  pii: string[];
  paths: string[];
}

const cache = new Map<string, RegExp | string>();

function compile(pattern: string): RegExp | string {
  let c = cache.get(pattern);
  if (c !== undefined) return c;
  if (!/[*?]/.test(pattern)) c = pattern;
  else {
    const src = pattern
      .split(/(\*\*|\*|\?)/)
      .map((part) =>
        part === "**" || part === "*"
          ? "[\\s\\S]*"
          : part === "?"
            ? "[\\s\\S]"
            : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
      )
      .join("");
    c = new RegExp(`^${src}$`);
  }
  if (cache.size > 5000) cache.clear();
  cache.set(pattern, c);
  return c;
}

/**
 * Whether `value` matches an allowlist entry (exact or glob).
 * @example globMatch("AKIA*EXAMPLE", "AKIAIOSFODNN7EXAMPLE") // true
 */
export function globMatch(pattern: string, value: string): boolean {
  const c = compile(pattern);
  return typeof c === "string" ? c === value : c.test(value);
}

/** True when a finding (detector, matched value, where) is allowlisted. */
export function isAllowlisted(
  lists: Allowlists,
  detector: DetectorName,
  value: string,
  paths: string[],
): boolean {
  const values = detector === "pii" ? lists.pii : lists.secrets;
  for (const p of values) if (globMatch(p, value)) return true;
  for (const p of lists.paths) {
    for (const where of paths) if (globMatch(p, where)) return true;
    if (detector === "proprietary" && globMatch(p, value)) return true;
  }
  return false;
}

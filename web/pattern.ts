/**
 * Live pattern testing in the browser, with the engine's conventions: a leading `(?i)` means
 * case-insensitive, and when the pattern has a capture group, group 1 is the match.
 */
export interface PatternMatch {
  start: number;
  end: number;
  text: string;
}

export type PatternResult = { ok: true; matches: PatternMatch[] } | { ok: false; error: string };

export function compilePattern(pattern: string): RegExp {
  let src = pattern;
  let flags = "gd";
  const m = /^\(\?([a-z]+)\)/.exec(src);
  if (m) {
    src = src.slice(m[0].length);
    if (m[1]!.includes("i")) flags += "i";
    if (m[1]!.includes("s")) flags += "s";
    if (m[1]!.includes("m")) flags += "m";
  }
  return new RegExp(src, flags);
}

export function testPattern(pattern: string, sample: string, max = 200): PatternResult {
  if (!pattern) return { ok: true, matches: [] };
  let re: RegExp;
  try {
    re = compilePattern(pattern);
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
  const matches: PatternMatch[] = [];
  for (const m of sample.matchAll(re)) {
    const idx = (m as RegExpMatchArray & { indices?: Array<[number, number] | undefined> }).indices;
    const span = m.length > 1 && idx?.[1] ? idx[1] : idx?.[0];
    if (!span) continue;
    if (span[1] > span[0])
      matches.push({ start: span[0], end: span[1], text: sample.slice(span[0], span[1]) });
    if (matches.length >= max) break;
  }
  return { ok: true, matches };
}

/** Mask a matched value the way findings do: keep 4 characters at each end. */
export function maskValue(v: string): string {
  if (v.length <= 8) return `${v.slice(0, 2)}****`;
  return `${v.slice(0, 4)}****${v.slice(-4)}`;
}

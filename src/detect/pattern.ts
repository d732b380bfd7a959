/**
 * Rule patterns are JavaScript regular expressions, optionally led by `(?i)` (case-insensitive) as
 * in other scanners' rule files. This file turns one into a RegExp and checks that a user's pattern
 * cannot stall a request (catastrophic backtracking).
 */
import { nestedQuantifier, parseRegex } from "./regex-ast.ts";

export interface PatternParts {
  source: string;
  flags: string;
}

/** Split a leading `(?i)` / `(?s)` / `(?is)` into flags. */
export function patternParts(pattern: string): PatternParts {
  const m = /^\(\?([is]+)\)/.exec(pattern);
  if (!m) return { source: pattern, flags: "" };
  return { source: pattern.slice(m[0].length), flags: [...new Set(m[1]!)].join("") };
}

/** The compiled regex of a pattern with extra flags (e.g. "gd"). Throws SyntaxError. */
export function compilePattern(pattern: string, extraFlags = ""): RegExp {
  const { source, flags } = patternParts(pattern);
  return new RegExp(source, [...new Set(flags + extraFlags)].join(""));
}

export type PatternCheck = { ok: true } | { ok: false; error: string };

/** Longest time a trial match may take before the pattern counts as catastrophic. */
const TRIAL_BUDGET_MS = 10;
const MAX_PATTERN_LENGTH = 4096;

/**
 * Accept a user's pattern only if it compiles, does not match empty text, and cannot backtrack
 * catastrophically: nested unbounded quantifiers are found statically, then the pattern is timed on
 * adversarial inputs of growing length (exponential blow-up shows within ~30 characters, quadratic
 * blow-up on a few thousand). Used by the rule API, `sluice rules validate` and the scanner itself.
 * @example checkUserPattern("(a+)+$") // { ok: false, error: "..." }
 */
export function checkUserPattern(pattern: string): PatternCheck {
  if (typeof pattern !== "string" || pattern.length === 0) return { ok: false, error: "pattern is empty" };
  if (pattern.length > MAX_PATTERN_LENGTH)
    return { ok: false, error: `pattern is longer than ${MAX_PATTERN_LENGTH} characters` };
  let re: RegExp;
  try {
    re = compilePattern(pattern);
  } catch (err) {
    return { ok: false, error: `pattern does not compile: ${(err as Error).message}` };
  }
  if (re.test("")) return { ok: false, error: "pattern matches empty text; it would flag every request" };
  const { source } = patternParts(pattern);
  let nested: string | null = null;
  let reps: string[] = [];
  try {
    const ast = parseRegex(source);
    nested = nestedQuantifier(ast, source);
  } catch {
    /* our parser is stricter than the RegExp matcher; the timed trial still runs */
  }
  reps = trialAlphabet(source);
  const slow = timedTrial(re, reps);
  if (slow) {
    const why = nested ? `it has ${nested} and ` : "";
    return {
      ok: false,
      error: `pattern can backtrack catastrophically: ${why}took ${slow.ms.toFixed(0)} ms on ${slow.length} characters of ${JSON.stringify(slow.sample)}; bound repetitions (e.g. {1,64} instead of + or *) and avoid nested quantifiers`,
    };
  }
  if (nested?.startsWith("a repeated quantifier")) {
    return {
      ok: false,
      error: `pattern can backtrack catastrophically: it has ${nested}; rewrite it without a quantifier inside a repeated group`,
    };
  }
  return { ok: true };
}

/** Characters and pairs an adversarial input repeats: one of each class and literal in the pattern. */
function trialAlphabet(source: string): string[] {
  const set = new Set<string>(["a", "A", "0", " ", "-", ".", "_", "aa", "a ", "a0", "a-", "0.", "ab"]);
  for (const m of source.matchAll(/\[([^\]\\]|\\.)/g)) set.add(m[1]!.replace(/^\\/, ""));
  for (const ch of source.replace(/\\[dDwWsSbB]/g, ""))
    if (/[\x21-\x7e]/.test(ch) && !"()[]{}|*+?^$\\".includes(ch)) set.add(ch);
  const singles = [...set].filter((s) => s.length === 1 && /[\x21-\x7e ]/.test(s));
  for (const a of singles.slice(0, 12)) for (const b of singles.slice(0, 6)) set.add(a + b);
  return [...set].slice(0, 80);
}

function timedTrial(re: RegExp, units: string[]): { ms: number; length: number; sample: string } | null {
  const tails = ["!", "\u0000", "\n"];
  // CPU time of this thread's process, not wall time: a busy machine must not fail a good pattern.
  const cpu = typeof process !== "undefined" && typeof process.cpuUsage === "function";
  const once = (input: string) => {
    if (!cpu) {
      const t0 = performance.now(); // the browser (web/pattern.ts) has no CPU clock
      re.lastIndex = 0;
      re.test(input);
      return performance.now() - t0;
    }
    const t0 = process.cpuUsage();
    re.lastIndex = 0;
    re.test(input);
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / 1000;
  };
  // A slow run on a busy machine (GC, scheduling) is retried: only a consistently slow input counts.
  const run = (input: string) => {
    let best = once(input);
    for (let k = 0; k < 2 && best > TRIAL_BUDGET_MS && best < TRIAL_BUDGET_MS * 5; k++)
      best = Math.min(best, once(input));
    return best;
  };
  // Exponential: grow slowly so that a blow-up is caught before it costs much.
  for (const u of units) {
    for (const tail of tails) {
      for (let reps = 8; reps <= 30; reps += 2) {
        const input = u.repeat(Math.ceil(reps / u.length)) + tail;
        const ms = run(input);
        if (ms > TRIAL_BUDGET_MS) return { ms, length: input.length, sample: u };
      }
    }
  }
  // Polynomial: a long run of one unit without the terminator the pattern wants.
  let total = 0;
  for (const u of units) {
    for (const tail of tails.slice(0, 2)) {
      for (let size = 64; size <= 8192; size *= 2) {
        const input = u.repeat(Math.ceil(size / u.length)) + tail;
        const ms = run(input);
        total += ms;
        if (ms > TRIAL_BUDGET_MS) return { ms, length: input.length, sample: u };
      }
      if (total > 250) return null;
    }
  }
  return null;
}

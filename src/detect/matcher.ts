/**
 * The matcher: what a compiled matcher is, and `scanText`, its one entry for scanning.
 *
 * Rules do not each scan the whole text, which would cost one regex pass per rule. Compilation
 * (compile.ts) finds in each rule's pattern a literal every match must contain (a prefix such as
 * `ghp_` or `AKIA`, a required literal such as `@` or `.pem`, or the rule's keywords) and builds one
 * table of those literals' hashed trigrams. One character loop over the text (loop.ts, run by the
 * WebAssembly kernel in kernel.ts where it can) finds where a literal occurs, and the rule's regex
 * runs only there: sticky, or on a small window around it (windows.ts). Rules whose matches start
 * with a digit share one digit-cluster prefilter (clusters.ts); the few rules left run over the whole
 * text (user rules in bounded chunks). The same loop notes base64/hex runs, which decode.ts decodes
 * and this file scans again, up to the configured depth. snapshot.ts stores a compiled matcher as
 * data, so the built-in rules are compiled when the binary is built.
 *
 * Pure: no I/O.
 */
import { noFTL } from "bun:jsc";
import type { RuleDef } from "../core/types.ts";
import type { PatternAnalysis } from "./analysis.ts";
import { findEncoded, MIN_RUN, runPairs } from "./decode.ts";
import { followOk, litAt, mainLoop, scanAll, scanPlain } from "./loop.ts";
import { accept, record, runAt, runBefore, runWindow } from "./windows.ts";

export { MAX_MATCHES_PER_RULE } from "./windows.ts";

export interface EncodingOptions {
  base64: boolean;
  hex: boolean;
  url: boolean;
  unicode: boolean;
  max_depth: number;
  min_decoded_length: number;
  max_decoded_length: number;
}

export interface CompiledRule {
  def: RuleDef;
  re: RegExp;
  /** The same pattern, sticky: tried exactly at a prefix anchor's position. */
  sticky: RegExp;
  trigger: "anchor" | "digits" | "class" | "full";
  anchor: Anchor | null;
  keywords: string[] | null;
  /** Builtin rules are trusted to be linear; others run over bounded chunks. */
  trusted: boolean;
  /** For digit-triggered rules: the fewest of each COUNTED character a match needs. */
  needs: Int32Array | null;
  /** For digit-triggered rules: whether a match can contain letters (an IPv6 address can). */
  letters: boolean;
}

export interface AnchorUse {
  rule: number;
  back: number;
  forward: number;
  /** Characters allowed right before the literal (1 = allowed), or null for any. */
  prev: Uint8Array | null;
  /**
   * Every character the match can hold before the literal, or null. With it, the match's start is
   * found by walking back over such characters, and the rule is tried sticky at each candidate start
   * instead of scanning a window that reaches far past the literal.
   */
  before: Uint8Array | null;
  /**
   * For a prefix literal: what must follow it (regex-ast.ts followAfter) as one table, 1 for a
   * character that may come first (at most `followMax` of them), 2 for one the next required item
   * starts with. Most keyword hits in code (`tokenizer.next(`) fail here without running the regex.
   */
  follow: Uint8Array | null;
  followMax: number;
}

export interface AnchorLit {
  lit: string;
  /** Lower-cased literal when case-insensitive, else null. */
  lower: string | null;
  /**
   * Where in the literal its hook trigram starts (its rarest in code): the hot loop finds the hook,
   * then the whole literal is checked `lead` characters before it, so uses see the literal's start.
   */
  lead: number;
  uses: AnchorUse[];
}

/**
 * A rule without a literal whose first three characters come from small classes (an IBAN starts
 * with two capital letters and a digit): its trigrams go into the same table as the literals', and
 * the rule runs sticky where the three characters fit, instead of over the whole text.
 */
export interface ClassAnchor {
  rule: number;
  c0: Uint8Array;
  c1: Uint8Array;
  c2: Uint8Array;
}

export interface CompileProblem {
  rule: string;
  message: string;
}

export interface Matcher {
  rules: CompiledRule[];
  /** bigram (c0 & 255) << 8 | (c1 & 255) → index into `lits` + 1, 0 for none. */
  bigram: Uint16Array;
  /** slot << 8 | third character → 1 when some literal of the slot allows that third character. */
  third: Uint8Array;
  /**
   * Each hashed trigram (18 bits) that hooks something: TRI_LITERAL for a literal's, TRI_SPOT for a
   * class anchor's or an IPv6 spot's. The only table the hot loop reads for every character.
   */
  tri: Uint8Array;
  /** Every literal and class anchor is ASCII (and no literal too long): the kernel can run (kernel.ts). */
  byteHooks: boolean;
  bigramLits: AnchorLit[][];
  /** Anchors of one character (e.g. "@"): char → uses. */
  single: Map<string, AnchorUse[]>;
  digitRules: number[];
  /** Whether a digit rule's matches can hold letters (IPv6). */
  letterDigitRules: boolean;
  classAnchors: ClassAnchor[];
  fullRules: number[];
  problems: CompileProblem[];
}

/** A match inside the matcher: it still holds the raw value, which never leaves the scanner. */
export interface RawMatch {
  rule: RuleDef;
  start: number;
  end: number;
  value: string;
  /** Decoding chain when found in decoded content ("base64", "base64>url"), else null. */
  decoded: string | null;
}

export interface ScanTextOptions {
  /** Decoding settings, or null to scan only the text as it is. */
  encoding: EncodingOptions | null;
  /**
   * When `text` joins several segments: their [start, end) pairs, ascending. Windows, keyword
   * proximity and anchored matches stay inside one segment, so findings do not depend on how
   * segments were batched.
   */
  bounds?: number[];
}

/** A rule's anchor as compiled: its analysis, or its keywords when the pattern has no good literal. */
export type Anchor = NonNullable<PatternAnalysis["anchor"]>;

/**
 * Scan a text: rules over the text itself, then (when `encoding` is set) over base64, hex, URL and
 * unicode-escaped spans decoded up to `max_depth` levels. A match in decoded content reports the
 * encoded span's offsets in `text` and the decoding chain in `decoded`.
 */
export function scanText(matcher: Matcher, text: string, opts: ScanTextOptions): RawMatch[] {
  return scanDepth(matcher, text, opts.encoding, 0, opts.bounds ?? null);
}

function scanDepth(
  matcher: Matcher,
  text: string,
  enc: EncodingOptions | null,
  depth: number,
  bounds: number[] | null,
): RawMatch[] {
  const wantDecode =
    enc !== null && depth < enc.max_depth && (enc.base64 || enc.hex || enc.url || enc.unicode);
  const runMin =
    wantDecode && (enc!.base64 || enc!.hex)
      ? Math.max(MIN_RUN, Math.ceil((enc!.min_decoded_length * 4) / 3))
      : 0;
  const starts: number[] = [];
  const matches = scanPlain(matcher, text, bounds, runMin, starts);
  if (!wantDecode) return matches;
  const runs = runPairs(text, starts, runMin);
  const decodedSpans = findEncoded(text, runs, enc!);
  if (decodedSpans.length === 0) return matches;
  const out = matches.slice();
  for (const d of decodedSpans) {
    for (const m of scanDepth(matcher, d.text, enc, depth + 1, null)) {
      out.push({
        rule: m.rule,
        start: d.start,
        end: d.end,
        value: m.value,
        decoded: m.decoded ? `${d.kind}>${m.decoded}` : d.kind,
      });
    }
  }
  out.sort((a, b) => a.start - b.start || a.end - b.end);
  return out;
}

/**
 * For short-lived processes (`sluice scan` and its workers): keep the matcher's large hot functions
 * out of JavaScriptCore's top JIT tier (FTL). Compiling them there costs more CPU per thread than a
 * scan of a few tens of megabytes earns back, and the DFG tier runs them nearly as fast (the numbers
 * are in docs/benchmarks.md). The JavaScript character loop (charPass, for matchers the kernel cannot
 * serve) and the small digit-cluster helpers stay eligible: they are cheap to compile, and the loop
 * gains the most. The long-running proxy does not call this.
 */
export function skipTopJitTier(): void {
  for (const f of [
    mainLoop,
    scanPlain,
    scanAll,
    scanDepth,
    runAt,
    runWindow,
    runBefore,
    record,
    accept,
    litAt,
    followOk,
    findEncoded,
  ])
    noFTL(f as (...args: unknown[]) => unknown);
}

/**
 * Matches per segment: from the session's memory when a segment was scanned before in the same
 * scope (coding tools resend the whole conversation every turn), else from one batched scan of
 * the new segments. Counts what it scanned and what memory answered.
 */

import type { RuleDef } from "../core/types.ts";
import { MAX_MATCHES_PER_RULE, type RawMatch, scanText } from "../detect/matcher.ts";
import { type Normalized, normalizeForMatching } from "../detect/normalize.ts";
import type { CompiledRules } from "./compile.ts";
import { type CachedMatch, type Conversation, type DedupLimits, fingerprint, SegmentCache } from "./dedup.ts";
import { copyString } from "./mask.ts";

/** Segments shorter than this are scanned every time rather than remembered. */
const MIN_CACHED = 16;
/** The result of a segment without findings: most segments share this one frozen list. */
const NO_MATCHES: CachedMatch[] = Object.freeze([]) as unknown as CachedMatch[];
/** Segments at least this long are scanned by themselves, not copied into the batch. */
const SCAN_ALONE = 2048;
/** Joins segments for one batched scan; no rule matches across it. */
const SEP = "\n\u0000\n";

export interface MatchStats {
  segments_scanned: number;
  segments_cached: number;
  chars_scanned: number;
  sessions: number;
  fingerprints: number;
}

/** A scope's segment memory at one moment (`memoryMark`). */
export interface MemoryMark {
  readonly conv: object;
  readonly evicted: number;
}

/** Whether two marks are of the same memory, which forgot nothing between them. */
export const sameMemory = (a: MemoryMark, b: MemoryMark): boolean =>
  a.conv === b.conv && a.evicted === b.evicted;

export interface SegmentMatches {
  /** The matches of `texts[i]` (then of the texts `more` added), offsets into it. */
  per: CachedMatch[][];
  /**
   * Some segment's scan hit the matcher's per-rule match cap: its list is incomplete (and it was
   * not remembered).
   */
  capped: boolean;
  /** The last text answered from session memory (-1: none): those after it are new in the session. */
  lastCached: number;
}

/**
 * Whether a scan stopped early for some rule: the matcher keeps at most MAX_MATCHES_PER_RULE matches
 * of a rule per call, so later ones were not reported.
 */
function hitCap(matches: RawMatch[]): boolean {
  if (matches.length < MAX_MATCHES_PER_RULE) return false;
  const counts = new Map<RuleDef, number>();
  for (const m of matches) {
    const n = (counts.get(m.rule) ?? 0) + 1;
    if (n >= MAX_MATCHES_PER_RULE) return true;
    counts.set(m.rule, n);
  }
  return false;
}

/** Index of the batched segment that holds offset `at` (`bounds` holds start, end pairs in order). */
function segmentAt(bounds: number[], count: number, at: number): number {
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (bounds[mid * 2]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export class SegmentMatcher {
  readonly #cache = new SegmentCache();
  readonly #counters = { segments_scanned: 0, segments_cached: 0, chars_scanned: 0 };

  stats(): MatchStats {
    return { ...this.#counters, ...this.#cache.stats() };
  }

  /**
   * The last of `texts` the scope's memory holds (-1: none), as `match` of all of them would report
   * it, without scanning or remembering anything; and that memory.
   */
  lastCached(
    texts: string[],
    rules: CompiledRules,
    scope: string,
    limits: DedupLimits,
  ): { lastCached: number; session: Conversation } {
    this.#cache.setEpoch(rules.epoch);
    const session = this.#cache.session(scope, limits);
    for (let i = texts.length - 1; i >= 0; i--) {
      const t = texts[i]!;
      if (t.length >= MIN_CACHED && session.segments.has(fingerprint(t))) return { lastCached: i, session };
    }
    return { lastCached: -1, session };
  }

  /**
   * Which memory the scope has now: the same mark later means the same memory, which has forgotten
   * nothing since (not expired, not dropped for another session, no fingerprint dropped for the
   * limit, no change of rules). A memory that forgot something answers `lastCached` otherwise than
   * one that was told every text again would (unchanged.ts).
   */
  memoryMark(rules: CompiledRules, scope: string, limits: DedupLimits): MemoryMark {
    this.#cache.setEpoch(rules.epoch);
    const conv = this.#cache.session(scope, limits);
    return { conv, evicted: conv.evicted };
  }

  /** Drop the scope's memory. */
  forget(scope: string): void {
    this.#cache.forget(scope);
  }

  /** Texts whose matches were known without looking (unchanged.ts), counted as answered from memory. */
  reused(count: number): void {
    this.#counters.segments_cached += count;
  }

  /**
   * The matches of every text. `scope` names the memory to use (a session on one transport), or
   * null to scan every text afresh and remember nothing. `more`, given which of `texts` was the
   * last answered from memory and the session's memory (null without a scope), adds texts made
   * from them (the junctions of neighbouring texts, and of the session's previous payload): they
   * are scanned in the same batch, and their matches follow those of `texts` in `per`.
   */
  match(
    own: string[],
    rules: CompiledRules,
    scope: string | null,
    limits: DedupLimits,
    more?: (lastCached: number, session: Conversation | null) => string[],
  ): SegmentMatches {
    let texts = own;
    const capped = new Set<number>();
    let conv: Conversation | null = null;
    if (scope) {
      this.#cache.setEpoch(rules.epoch);
      conv = this.#cache.session(scope, limits);
    }
    const per: CachedMatch[][] = [];
    const fps: (bigint | number | null)[] = [];
    const todo: number[] = [];
    let lastCached = -1;
    const lookUp = (from: number) => {
      for (let i = from; i < texts.length; i++) {
        const t = texts[i]!;
        fps.push(null);
        per.push(NO_MATCHES);
        if (conv && t.length >= MIN_CACHED) {
          const fp = fingerprint(t);
          const hit = conv.segments.get(fp);
          if (hit) {
            per[i] = hit;
            if (from === 0) lastCached = i;
            this.#counters.segments_cached++;
            continue;
          }
          fps[i] = fp;
        }
        todo.push(i);
      }
    };
    lookUp(0);
    if (more) {
      const extra = more(lastCached, conv);
      if (extra.length > 0) {
        texts = own.concat(extra);
        lookUp(own.length);
      }
    }
    for (const i of todo) {
      this.#counters.segments_scanned++;
      this.#counters.chars_scanned += texts[i]!.length;
    }
    // Matches kept in memory outlive this request: their values are copied so that they do not keep
    // the scanned text alive (a slice references all of it). Matches used once need no copy.
    const keep = conv !== null;
    const scanAlone = (i: number) => {
      const found = scanText(rules.matcher, texts[i]!, { encoding: rules.encoding });
      for (const m of found) {
        if (per[i] === NO_MATCHES) per[i] = [];
        per[i]!.push(keep ? { ...m, value: copyString(m.value) } : m);
      }
      if (hitCap(found)) capped.add(i);
    };
    // Large segments are scanned in place; joining them would copy every byte into a new string
    // (after an idle collection that is fresh memory). Small ones are batched: one scan of a few
    // thousand tiny segments costs less than a call for each.
    const batched: number[] = [];
    for (const i of todo) {
      const norm = normalizeForMatching(texts[i]!);
      if (norm) this.#scanNormalized(texts[i]!, norm, rules, per, i, keep, capped);
      else if (texts[i]!.length >= SCAN_ALONE) scanAlone(i);
      else batched.push(i);
    }
    if (batched.length === 1) scanAlone(batched[0]!);
    else if (batched.length > 1) this.#scanBatch(texts, batched, rules, per, keep, scanAlone);
    if (conv)
      for (const i of todo)
        if (fps[i] !== null && !capped.has(i)) this.#cache.remember(conv, fps[i]!, per[i]!, limits);
    return { per, capped: capped.size > 0, lastCached };
  }

  /**
   * A segment holding characters no tool sends on purpose (zero-width, fullwidth, homoglyphs) is
   * scanned as normalized, and each match reported at the original's offsets: a redaction covers
   * the whole disguised value. The value is the normalized one, so it hashes like the plain value.
   */
  #scanNormalized(
    original: string,
    norm: Normalized,
    rules: CompiledRules,
    per: CachedMatch[][],
    i: number,
    keep: boolean,
    capped: Set<number>,
  ): void {
    const found = scanText(rules.matcher, norm.text, { encoding: rules.encoding });
    for (const m of found) {
      if (per[i] === NO_MATCHES) per[i] = [];
      const start = norm.from[m.start]!;
      const end = m.end >= norm.text.length ? original.length : norm.from[m.end]!;
      per[i]!.push({ ...m, start, end, value: keep ? copyString(m.value) : m.value });
    }
    if (hitCap(found)) capped.add(i);
  }

  #scanBatch(
    texts: string[],
    batched: number[],
    rules: CompiledRules,
    per: CachedMatch[][],
    keep: boolean,
    scanAlone: (i: number) => void,
  ): void {
    const parts: string[] = [];
    const bounds: number[] = [];
    let at = 0;
    for (const i of batched) {
      const t = texts[i]!;
      bounds.push(at, at + t.length);
      parts.push(t);
      at += t.length + SEP.length;
    }
    const found = scanText(rules.matcher, parts.join(SEP), { encoding: rules.encoding, bounds });
    if (hitCap(found)) {
      // The cap counts matches of the whole batch: scan each segment by itself so that findings
      // do not depend on batching (and no segment is remembered as clean for want of room).
      for (const i of batched) scanAlone(i);
      return;
    }
    for (const m of found) {
      const k = segmentAt(bounds, batched.length, m.start);
      const base = bounds[k * 2]!;
      if (m.end > bounds[k * 2 + 1]!) continue;
      const i = batched[k]!;
      if (per[i] === NO_MATCHES) per[i] = [];
      const value = keep ? copyString(m.value) : m.value;
      per[i]!.push({ ...m, value, start: m.start - base, end: m.end - base });
    }
  }
}

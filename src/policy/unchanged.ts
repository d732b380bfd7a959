/**
 * The clean payloads a session sent last, so that the next one, which resends one of them, is
 * scanned only where it differs. A coding tool resends its whole conversation every turn: the texts
 * of a turn are the previous turn's, in the same order, with new ones in between (new messages
 * before the resent system prompt and tools). When the previous payload of the same scope was
 * scanned with the same compiled rules and the same configuration, and nothing in it matched (no
 * segment, no junction, no capped scan), then in the next payload:
 *
 * - a text equal to one of the previous payload's matches nothing (matches depend only on the text
 *   and the rules), so only the texts between the common start and the common end are matched;
 * - two neighbouring texts that were neighbours in the previous payload form the same junction,
 *   which matched nothing, so only the junctions with a new text on either side, or across the
 *   place where texts were removed, are scanned; the junction with the previous payload's end is
 *   scanned as always.
 *
 * The junction with the previous payload's end joins the first text the scope's segment memory
 * does not hold (junctions.ts): scanned in full, a payload tells that memory every text again, and
 * here only the new ones. The two memories are the same as long as the one the previous payload
 * left has forgotten nothing since it was first filled (expiry, another session taking its place,
 * a fingerprint dropped for the limit), so a payload is kept only when its scan made the memory
 * forget nothing, and used only with that same memory.
 *
 * Two clean payloads are kept per scope: the last, and the newest of the others still of use (one a
 * payload was scanned from is replaced by it; one scanned in full pushes out the older). A side
 * request in a session (Claude Code asks for the session's title before the turn of each prompt,
 * under the same session) then leaves the conversation's last payload to scan the next turn from.
 * The reasoning holds for either, as each is used only with the memory it left (the side request's
 * scan in between told that memory its own texts and forgot nothing), and the next payload is
 * scanned from the one it shares the most texts with.
 *
 * Anything else (another scope, a rule or setting changed, a match in the previous payload, a
 * memory that forgot) is scanned in full. The texts are kept in memory only, for a bounded number
 * of scopes.
 */
import type { Config } from "../config/schema.ts";
import type { CompiledRules } from "./compile.ts";
import { type MemoryMark, sameMemory } from "./match.ts";
import { RecentMap } from "./recent.ts";

/** Scopes whose last clean payloads are kept; the least recently used is dropped first. */
const MAX_SCOPES = 32;
/** Clean payloads kept per scope: the last, and the newest other one still of use. */
const PER_SCOPE = 2;
/** Characters of kept texts in all. */
const MAX_TOTAL_CHARS = 32 * 1024 * 1024;

/**
 * The texts `[from, to)` of a payload are new; the others are those of `basis`, a clean payload of
 * the scope, in order.
 */
export interface Changed {
  from: number;
  to: number;
  /** The kept payload the others are from (given back to `record`). */
  basis: object;
  /** Characters of the payload's texts. */
  chars: number;
}

interface Kept {
  texts: string[];
  rules: CompiledRules;
  cfg: Config;
  /** The scope's segment memory after the payload's scan. */
  memory: MemoryMark;
  chars: number;
}

export class CleanPayloads {
  /** Per scope, the last clean payload first. */
  readonly #kept = new RecentMap<string, Kept[]>();
  #chars = 0;

  /**
   * Where `texts` differ from the one of the scope's kept payloads they share the most texts with
   * (at least half of them), of those that were clean under these rules and left the scope's
   * segment memory as it is now (`memory`).
   */
  changed(
    scope: string,
    texts: string[],
    rules: CompiledRules,
    cfg: Config,
    memory: MemoryMark,
  ): Changed | null {
    let best: Changed | null = null;
    for (const prev of this.#kept.get(scope) ?? []) {
      if (prev.rules !== rules || prev.cfg !== cfg || !sameMemory(prev.memory, memory)) continue;
      const old = prev.texts;
      const max = Math.min(old.length, texts.length);
      let from = 0;
      while (from < max && texts[from] === old[from]) from++;
      let same = 0;
      while (same < max - from && texts[texts.length - 1 - same] === old[old.length - 1 - same]) same++;
      // A payload that shares less than half of its texts is another one (a side request), not
      // the next of this one: scanned in full, it leaves this one kept.
      if ((from + same) * 2 < texts.length) continue;
      const to = texts.length - same;
      if (best && to - from >= best.to - best.from) continue;
      const chars = prev.chars - charsOf(old, from, old.length - same) + charsOf(texts, from, to);
      best = { from, to, basis: prev, chars };
    }
    return best;
  }

  /**
   * The payload just scanned in `scope` (`from` what `changed` gave, if anything): kept first when
   * nothing in it matched and its scan made the segment memory forget nothing (`before` and
   * `after` the scan), else the scope is forgotten.
   */
  record(
    scope: string,
    texts: string[],
    rules: CompiledRules,
    cfg: Config,
    clean: boolean,
    before: MemoryMark,
    after: MemoryMark,
    from: Changed | null,
  ): void {
    const basis = from?.basis;
    // The others stay of use only under the same rules and settings, and with the memory they left.
    const others = (this.#kept.get(scope) ?? []).filter(
      (k) => k !== basis && k.rules === rules && k.cfg === cfg && sameMemory(k.memory, before),
    );
    this.forget(scope);
    if (!clean || !sameMemory(before, after)) return;
    // Counted again only when scanned in full: a turn's texts are mostly the previous turn's.
    const chars = from ? from.chars : charsOf(texts, 0, texts.length);
    if (chars > MAX_TOTAL_CHARS) return;
    const list = [{ texts, rules, cfg, memory: after, chars }, ...others].slice(0, PER_SCOPE);
    // Within the bound, the scope's older payload goes before another scope's last one.
    while (list.length > 1 && this.#chars + list.reduce((n, k) => n + k.chars, 0) > MAX_TOTAL_CHARS)
      list.pop();
    this.#kept.set(scope, list);
    for (const k of list) this.#chars += k.chars;
    while (this.#kept.size > MAX_SCOPES || this.#chars > MAX_TOTAL_CHARS) {
      const oldest = this.#kept.oldestKey();
      if (oldest === undefined) break;
      this.forget(oldest);
    }
  }

  forget(scope: string): void {
    const list = this.#kept.get(scope);
    if (!list) return;
    this.#kept.delete(scope);
    for (const k of list) this.#chars -= k.chars;
  }
}

/** Characters of `texts[from, to)`. */
function charsOf(texts: string[], from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n += texts[i]!.length;
  return n;
}

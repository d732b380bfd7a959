/**
 * Per-session content fingerprints, the first layer of scanning. Coding tools resend the whole conversation
 * every turn; each segment's text is hashed and, when this session already scanned that exact text
 * with the same rules, its cached matches are reused instead of scanning again. Cached matches are
 * still returned, so a secret in turn 1 reaches policy in every later turn.
 *
 * Bounded by the `dedup.*` settings: at most `max_conversations` sessions (least recently used
 * evicted), `max_hashes_per_conversation` fingerprints per session (oldest evicted), and a session
 * untouched for `conversation_ttl_minutes` starts over. Everything is in memory only.
 */
import type { RawMatch } from "../detect/matcher.ts";
import { RecentMap } from "./recent.ts";

export interface DedupLimits {
  conversation_ttl_minutes: number;
  max_conversations: number;
  max_hashes_per_conversation: number;
}

/** A cached match: the raw match plus the hashes computed once for it. */
export interface CachedMatch extends RawMatch {
  hashes?: { content: string; value: string | null; preview: string };
}

/** What is remembered of one session. */
export interface Conversation {
  lastUsed: number;
  segments: Map<bigint | number, CachedMatch[]>;
  /** The last text of the session's previous payload (junctions.ts), a copy, or null. */
  tail: string | null;
  /** Fingerprints dropped for the limit so far: the memory no longer holds all it was told. */
  evicted: number;
}

/** A fingerprint of a segment's text (64-bit wyhash, seeded with the length). */
export function fingerprint(text: string): bigint | number {
  return Bun.hash(text, text.length);
}

export class SegmentCache {
  #sessions = new RecentMap<string, Conversation>();
  #epoch = "";

  /** Forget everything when the rules or scanning settings change (`epoch` differs). */
  setEpoch(epoch: string): void {
    if (epoch !== this.#epoch) {
      this.#epoch = epoch;
      this.#sessions.clear();
    }
  }

  /** The conversation of a session (created, refreshed and bounded here). */
  session(id: string, limits: DedupLimits, now = Date.now()): Conversation {
    let conv = this.#sessions.get(id);
    const ttl = limits.conversation_ttl_minutes * 60_000;
    if (conv && now - conv.lastUsed > ttl) conv = undefined;
    conv ??= { lastUsed: now, segments: new Map(), tail: null, evicted: 0 };
    conv.lastUsed = now;
    this.#sessions.set(id, conv); // now the most recently used
    // Expire from the old end, then enforce the count.
    for (let key = this.#sessions.oldestKey(); key !== undefined; key = this.#sessions.oldestKey()) {
      if (now - this.#sessions.get(key)!.lastUsed <= ttl) break;
      this.#sessions.deleteOldest();
    }
    while (this.#sessions.size > limits.max_conversations) this.#sessions.deleteOldest();
    return conv;
  }

  /** Drop a session's conversation. */
  forget(id: string): void {
    this.#sessions.delete(id);
  }

  /** Remember a segment's matches, evicting the oldest fingerprints beyond the limit. */
  remember(conv: Conversation, fp: bigint | number, matches: CachedMatch[], limits: DedupLimits): void {
    conv.segments.set(fp, matches);
    const max = limits.max_hashes_per_conversation;
    if (conv.segments.size > max) {
      const it = conv.segments.keys();
      while (conv.segments.size > max) {
        conv.segments.delete(it.next().value as bigint | number);
        conv.evicted++;
      }
    }
  }

  stats(): { sessions: number; fingerprints: number } {
    let fingerprints = 0;
    for (const c of this.#sessions.values()) fingerprints += c.segments.size;
    return { sessions: this.#sessions.size, fingerprints };
  }
}

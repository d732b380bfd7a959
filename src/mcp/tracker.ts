/**
 * Confused-deputy protection: every request the client sends to the
 * server is remembered until its response arrives, so a response the client never asked for is seen.
 * Eviction is FIFO at `capacity` (10,000) entries; a response for an evicted id counts as unsolicited.
 */
import { idKey, type JsonRpcId } from "./jsonrpc.ts";

export const TRACKER_CAPACITY = 10_000;

export interface Outstanding {
  method: string;
  /** `params.name` of a tools/call. */
  tool?: string;
  /** `params.cursor` of a tools/list page. */
  cursor?: string;
  /** `params.uri` of a resources/read. */
  uri?: string;
  sentAt: number;
}

export class RequestTracker {
  readonly capacity: number;
  /** Map keeps insertion order, which is the FIFO order. */
  #pending = new Map<string, Outstanding>();
  evicted = 0;

  constructor(capacity = TRACKER_CAPACITY) {
    this.capacity = capacity;
  }

  track(id: JsonRpcId, entry: Outstanding): void {
    const key = idKey(id);
    this.#pending.delete(key);
    this.#pending.set(key, entry);
    while (this.#pending.size > this.capacity) {
      const oldest = this.#pending.keys().next().value as string;
      this.#pending.delete(oldest);
      this.evicted++;
    }
  }

  /** The outstanding request answered by `id`, removed; undefined when sluice never saw it (unsolicited). */
  settle(id: JsonRpcId | null): Outstanding | undefined {
    if (id === null) return undefined;
    const key = idKey(id);
    const entry = this.#pending.get(key);
    if (entry) this.#pending.delete(key);
    return entry;
  }

  has(id: JsonRpcId): boolean {
    return this.#pending.has(idKey(id));
  }

  get size(): number {
    return this.#pending.size;
  }
}

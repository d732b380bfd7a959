/**
 * A map that knows which of its keys was set longest ago, for the pipeline's per-session memories
 * (segment fingerprints, a session's last text), which forget their oldest session first.
 *
 * A Map keeps insertion order, and deleting a key and setting it again makes it the newest, but
 * finding the oldest with `keys().next()` after many deletions walks over every deleted entry still
 * at the front of JavaScriptCore's table: a memory of thousands of sessions that forgets one per
 * request paid for that on every request. Here the order is a queue of (key, version) beside the
 * map: setting a key appends it, an entry whose version is not the key's current one is stale and
 * skipped, and the queue is compacted when stale entries make up most of it.
 */
export class RecentMap<K, V> {
  readonly #map = new Map<K, { value: V; version: number }>();
  #keys: K[] = [];
  #versions: number[] = [];
  #head = 0;
  #version = 0;

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key)?.value;
  }

  /** Set `key` to `value` and make it the newest. */
  set(key: K, value: V): void {
    const version = ++this.#version;
    const entry = this.#map.get(key);
    if (entry) {
      entry.value = value;
      entry.version = version;
    } else this.#map.set(key, { value, version });
    this.#keys.push(key);
    this.#versions.push(version);
    if (this.#keys.length - this.#head > 2 * this.#map.size + 64) this.#compact();
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
    this.#keys = [];
    this.#versions = [];
    this.#head = 0;
  }

  /** The key set longest ago, or undefined when empty. */
  oldestKey(): K | undefined {
    while (this.#head < this.#keys.length) {
      const key = this.#keys[this.#head]!;
      if (this.#map.get(key)?.version === this.#versions[this.#head]) return key;
      this.#head++;
    }
    return undefined;
  }

  /** Forget the key set longest ago. */
  deleteOldest(): void {
    const key = this.oldestKey();
    if (key === undefined) return;
    this.#map.delete(key);
    this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#keys.length) this.#compact();
  }

  values(): IterableIterator<V> {
    return [...this.#map.values()].map((e) => e.value).values();
  }

  /** Drop the stale entries of the queue, keeping the live ones in order. */
  #compact(): void {
    const keys: K[] = [];
    const versions: number[] = [];
    for (let k = this.#head; k < this.#keys.length; k++) {
      const key = this.#keys[k]!;
      if (this.#map.get(key)?.version === this.#versions[k]) {
        keys.push(key);
        versions.push(this.#versions[k]!);
      }
    }
    this.#keys = keys;
    this.#versions = versions;
    this.#head = 0;
  }
}

import { describe, expect, test } from "bun:test";
import { RecentMap } from "../../src/policy/recent.ts";
import { lcg } from "../corpus/gen.ts";

describe("RecentMap", () => {
  test("forgets the key set longest ago; setting a key again makes it the newest", () => {
    const m = new RecentMap<string, number>();
    m.set("a", 1);
    m.set("b", 2);
    m.set("c", 3);
    m.set("a", 4);
    expect(m.oldestKey()).toBe("b");
    m.deleteOldest();
    expect(m.get("b")).toBeUndefined();
    expect(m.oldestKey()).toBe("c");
    m.delete("c");
    expect(m.oldestKey()).toBe("a");
    expect(m.get("a")).toBe(4);
    expect(m.size).toBe(1);
    expect([...m.values()]).toEqual([4]);
    m.clear();
    expect(m.size).toBe(0);
    expect(m.oldestKey()).toBeUndefined();
    m.deleteOldest();
    expect(m.size).toBe(0);
  });

  test("property: the same order as a Map that is deleted from and set again", () => {
    const rnd = lcg(7);
    const m = new RecentMap<string, number>();
    const ref = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const key = `k${rnd(300)}`;
      const op = rnd(10);
      if (op < 6) {
        m.set(key, i);
        ref.delete(key);
        ref.set(key, i);
      } else if (op < 8) {
        m.delete(key);
        ref.delete(key);
      } else {
        m.deleteOldest();
        const oldest = ref.keys().next();
        if (!oldest.done) ref.delete(oldest.value);
      }
      if (ref.size > 100) {
        m.deleteOldest();
        ref.delete(ref.keys().next().value!);
      }
      expect(m.size).toBe(ref.size);
      expect(m.oldestKey()).toBe(ref.keys().next().value);
      expect(m.get(key)).toBe(ref.get(key));
    }
  });
});

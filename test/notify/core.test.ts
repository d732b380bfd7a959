import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateNotifyKey, NOTIFY_KEY_FILE, secretBox } from "../../src/notify/secret-box.ts";
import { throttle } from "../../src/notify/throttle.ts";
import { signWebhook, verifyWebhook } from "../../src/notify/webhook-sign.ts";

describe("secret box", () => {
  test("key file is 0600 beside the other keys, stable across loads", () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-notify-"));
    const key = loadOrCreateNotifyKey(dir);
    expect(statSync(join(dir, NOTIFY_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(loadOrCreateNotifyKey(dir)).toEqual(key);
  });

  test("sealed text does not hold the secret and opens only for its channel", () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-notify-"));
    const box = secretBox(loadOrCreateNotifyKey(dir));
    const secret = ["xoxb", "1234567890", "abcdefSECRET"].join("-");
    const sealed = box.seal(secret, "sec-slack");
    expect(sealed).not.toContain(secret);
    expect(sealed).not.toContain("SECRET");
    expect(box.open(sealed, "sec-slack")).toBe(secret);
    expect(() => box.open(sealed, "other")).toThrow();
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith("A") ? "B" : "A"}A`;
    expect(() => box.open(tampered, "sec-slack")).toThrow();
    expect(readFileSync(join(dir, NOTIFY_KEY_FILE)).length).toBe(32);
  });
});

describe("throttle", () => {
  test("1,000 findings in 10 s become one message, then one summary carrying the count", () => {
    let now = 0;
    const t = throttle<number>(300_000, { now: () => now });
    const sent: { event: number; suppressed: number }[] = [];
    for (let i = 0; i < 1000; i++) {
      now = i * 10; // 1,000 events over 10 s
      const r = t.offer("finding:aws_key:s1", i);
      if (r) sent.push(r);
      sent.push(...t.flush());
    }
    expect(sent).toEqual([{ event: 0, suppressed: 0 }]);
    now = 300_000;
    expect(t.flush()).toEqual([{ event: 999, suppressed: 998 }]);
    // The summary opened a new cooldown: nothing more until it ends, then the key is forgotten.
    expect(t.offer("finding:aws_key:s1", 1000)).toBeNull();
    now = 600_000;
    expect(t.flush()).toEqual([{ event: 1000, suppressed: 0 }]);
    now = 900_000;
    expect(t.flush()).toEqual([]);
    expect(t.offer("finding:aws_key:s1", 1001)).toEqual({ event: 1001, suppressed: 0 });
  });

  test("keys are independent", () => {
    const now = 0;
    const t = throttle<string>(1000, { now: () => now });
    expect(t.offer("a", "x")).not.toBeNull();
    expect(t.offer("b", "y")).not.toBeNull();
    expect(t.offer("a", "z")).toBeNull();
  });
});

describe("webhook signature", () => {
  test("a receiver verifies body and timestamp; replays and edits fail", () => {
    const secret = ["whsec", "k3y"].join("_");
    const body = JSON.stringify({ event: "finding" });
    const h = signWebhook(secret, body, 1_700_000_000);
    const headers = {
      signature: h["x-sluice-signature"] ?? null,
      timestamp: h["x-sluice-timestamp"] ?? null,
    };
    expect(verifyWebhook(secret, body, headers, 1_700_000_010)).toBe(true);
    expect(verifyWebhook(secret, `${body} `, headers, 1_700_000_010)).toBe(false);
    expect(verifyWebhook(secret, body, headers, 1_700_000_000 + 3600)).toBe(false);
    expect(verifyWebhook("other", body, headers, 1_700_000_010)).toBe(false);
  });
});

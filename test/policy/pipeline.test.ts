/**
 * The payload pipeline: policy (rule → detector → default action, strongest wins), allowlists,
 * masked previews and hashes, redaction through the hook, per-session dedup (a secret in turn 1 still
 * blocks in turn 5; only new segments are scanned; memory bounded), config-provided rules, limits,
 * and the property that any split of a conversation into turns gives the same findings.
 */

import { heapStats } from "bun:jsc";
import { describe, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { type Config, defaultConfig } from "../../src/config/schema.ts";
import type { ScanRequest, Verdict } from "../../src/core/hook.ts";
import type { RuleDef, SessionContext } from "../../src/core/types.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { maskValue } from "../../src/policy/mask.ts";
import { createPipeline, textPayload } from "../../src/policy/pipeline.ts";
import { rule } from "../helpers/records.ts";

const AWS_ID = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");
const GH = ["ghp", "_", "EXAMPLE0fake1Key2For3Tests4Only5sluz"].join("");
const KEY = new Uint8Array(32).fill(7);

function setup(mutate: (c: Config) => void = () => {}, rules: RuleDef[] = loadBuiltinRules()) {
  const cfg = defaultConfig();
  mutate(cfg);
  let version = 1;
  let current = rules;
  const pipeline = createPipeline({
    config: () => cfg,
    rules: () => current,
    rulesVersion: () => version,
    hmacKey: KEY,
  });
  return {
    cfg,
    pipeline,
    /** The findings of a text as `sluice scan` gives it to the pipeline. */
    file: (text: string, path = "text") => pipeline.inspect(textPayload(text, path)).findings,
    setRules(r: RuleDef[]) {
      current = r;
      version++;
    },
    scan(body: unknown, session = "s1", provider: ScanRequest["provider"] = "anthropic"): Verdict {
      const bytes =
        typeof body === "string"
          ? new TextEncoder().encode(body)
          : new TextEncoder().encode(JSON.stringify(body));
      return pipeline.hook({
        provider,
        method: "POST",
        path: "/v1/messages",
        headers: new Headers(),
        body: bytes,
        session: { session_id: session } as SessionContext,
        transport: "http",
      }) as Verdict;
    },
  };
}
const msgs = (...texts: string[]) => ({
  model: "m",
  messages: texts.map((t, i) => ({ role: i % 2 ? "assistant" : "user", content: t })),
});

describe("policy", () => {
  test("a rule's action wins, else the detector's, else pipeline.default_action; the request takes the strongest", () => {
    const s = setup();
    const v = s.scan(msgs(`key ${AWS_ID}`, "mail jane.doe@acme-corp.io"));
    expect(v.action).toBe("block");
    expect(v.findings.map((f) => [f.rule, f.action, f.path])).toEqual([
      ["aws_access_key_id", "block", "messages[0].content"],
      ["email_address", "log", "messages[1].content"],
    ]);
    const rules = loadBuiltinRules().map((r) => ({ ...r, action: "" as const }));
    const d = setup((c) => {
      c.detectors.pii.action = "alert";
      c.pipeline.default_action = "log";
    }, rules);
    expect(d.scan(msgs(`key ${AWS_ID}`, "mail jane.doe@acme-corp.io")).findings.map((f) => f.action)).toEqual(
      ["log", "alert"],
    );
    expect(d.scan(msgs("nothing here")).action).toBe("pass");
  });

  test("a disabled detector or stage finds nothing; max_body_size skips scanning", () => {
    expect(setup((c) => (c.detectors.secrets.enabled = false)).scan(msgs(`key ${AWS_ID}`)).findings).toEqual(
      [],
    );
    const off = setup((c) => (c.pipeline.stages.outbound_dlp.enabled = false)).scan(msgs(`key ${AWS_ID}`));
    expect(off).toMatchObject({ action: "pass", findings: [], scanned_bytes: 0 });
    const big = setup((c) => (c.proxy.max_body_size = 1024)).scan(msgs(`key ${AWS_ID}`, "x".repeat(2000)));
    expect(big.action).toBe("pass");
    expect(big.skipped).toMatch(/max_body_size/);
  });

  test("findings carry a masked preview and hashes, never the raw value", () => {
    const s = setup();
    const v = s.scan(msgs(`key ${AWS_ID}`));
    const f = v.findings[0]!;
    expect(f.preview).toBe("AKIA************MPLQ");
    // Keyed: HMAC over the plain digest (a guessed value cannot be checked against it without the key).
    const plain = createHash("sha256").update(AWS_ID).digest("hex");
    expect(f.content_hash).toBe(createHmac("sha256", KEY).update(plain).digest("hex"));
    expect(f.value_hash).toBe(createHmac("sha256", KEY).update(AWS_ID).digest("hex"));
    expect(f.start).toBe(4);
    expect(f.end).toBe(24);
    expect(JSON.stringify(v)).not.toContain(AWS_ID);
    expect(
      setup((c) => (c.analytics.hash_secrets = false)).scan(msgs(`key ${AWS_ID}`)).findings[0]!.value_hash,
    ).toBeNull();
  });

  test("maskValue", () => {
    expect(maskValue("AKIAIOSFODNN7EXAMPLQ")).toBe("AKIA************MPLQ");
    expect(maskValue("abcdefghij")).toBe("ab******ij");
    expect(maskValue("abcde")).toBe("a****");
    expect(maskValue("abc")).toBe("***");
    expect(maskValue("x".repeat(500))).toBe(`xxxx${"*".repeat(32)}xxxx`);
  });

  test("large segments (scanned by themselves) and small ones (batched) give the same findings", () => {
    const filler = "const x = compute(1, 2); // code\n";
    const small = `key ${AWS_ID} at start, mail jane.doe@acme-corp.io`;
    const large = `${AWS_ID} ${filler.repeat(100)} jane.doe@acme-corp.io ${btoa(`token ${GH}`)} ${GH}`;
    expect(large.length).toBeGreaterThan(2048);
    const s = setup();
    const v = s.scan(msgs(small, large, small));
    const alone = (t: string, path: string) =>
      s.file(t, path).map((f) => [f.rule, f.path, f.start, f.end, f.decoded]);
    expect(v.findings.map((f) => [f.rule, f.path, f.start, f.end, f.decoded])).toEqual([
      ...alone(small, "messages[0].content"),
      ...alone(large, "messages[1].content"),
      ...alone(small, "messages[2].content"),
    ]);
    expect(v.findings.filter((f) => f.path === "messages[1].content").map((f) => f.rule)).toEqual([
      "aws_access_key_id",
      "email_address",
      "github_pat",
      "github_pat",
    ]);
  });

  test("findings and the session cache hold copies: the scanned text is not kept alive", () => {
    // A preview or cached value that is a slice of the scanned text keeps all of it reachable
    // (JavaScriptCore substrings reference their base string): four texts of 36 MB each were kept
    // (87 MB of heap growth) before previews and cached values were copied; now ~9 MB, the matcher's
    // and the collector's own bookkeeping. Less than one text's size proves none is retained.
    const s = setup();
    const kept: unknown[] = [];
    s.file(`warm up ${AWS_ID}`); // compile the matcher before measuring
    s.scan(msgs(`warm up ${GH}`), "warm");
    Bun.gc(true);
    const base = heapStats().heapSize;
    for (let round = 0; round < 2; round++) {
      const filler = `let v${round} = compute(${round}, 2, 3); // some code here\n`.repeat(400_000);
      const big = `${filler} key ${AWS_ID} and ${GH}\n${filler}`;
      kept.push(s.file(big, "big.ts"));
      kept.push(s.scan(msgs(big), `retain-${round}`));
    }
    Bun.gc(true);
    const growth = heapStats().heapSize - base;
    expect((kept[0] as { preview: string }[]).map((f) => f.preview)).toContain("AKIA************MPLQ");
    expect(growth).toBeLessThan(20 * 1024 * 1024);
  }, 30_000); // four scans of 36 MB texts and full collections: 7 s on a busy 2-core machine

  test("redact: the hook returns the body with typed placeholders, JSON valid, nothing else changed", () => {
    const rules = loadBuiltinRules().map((r) =>
      r.name === "github_pat" ? { ...r, action: "redact" as const } : r,
    );
    const s = setup(() => {}, rules);
    const raw = JSON.stringify(
      { model: "m", messages: [{ role: "user", content: `use ${GH} please` }] },
      null,
      2,
    );
    const v = s.scan(raw);
    expect(v.action).toBe("redact");
    const out = new TextDecoder().decode(v.body!);
    expect(out).toBe(raw.replace(GH, "[REDACTED:github_pat]"));
    expect(s.scan(out, "other").findings).toEqual([]);
  });

  test("redact never forwards a value beyond the matcher's per-rule match cap", () => {
    const rules = loadBuiltinRules().map((r) =>
      r.name === "email_address" ? { ...r, action: "redact" as const } : r,
    );
    const s = setup(() => {}, rules);
    const text = Array.from({ length: 1100 }, (_, i) => `user${i}@acme-corp.io`).join(" ");
    const v = s.scan(msgs(text));
    const forwarded = v.action === "block" ? "" : new TextDecoder().decode(v.body!);
    expect(forwarded.split("@acme-corp.io").length - 1).toBe(0);
  });

  test("redact replaces the whole encoded blob of a secret found in base64", () => {
    const rules = loadBuiltinRules().map((r) =>
      r.name === "aws_access_key_id" ? { ...r, action: "redact" as const } : r,
    );
    const s = setup(() => {}, rules);
    const blob = Buffer.from(`aws_access_key_id = ${AWS_ID}`).toString("base64");
    const raw = JSON.stringify({ messages: [{ role: "user", content: `config ${blob} end` }] });
    const v = s.scan(raw);
    expect(v.action).toBe("redact");
    expect(v.findings[0]).toMatchObject({ rule: "aws_access_key_id", decoded: "base64" });
    expect(new TextDecoder().decode(v.body!)).toBe(raw.replace(blob, "[REDACTED:aws_access_key_id]"));
  });

  test("garbage never throws: binary, invalid UTF-8, deep nesting, huge strings of one character", () => {
    const s = setup();
    const bodies: (string | Uint8Array)[] = [
      crypto.getRandomValues(new Uint8Array(50_000)),
      new Uint8Array([0xff, 0xfe, 0x7b, 0x22, 0xc3, 0x28]),
      `${"[".repeat(5000)}"x"${"]".repeat(5000)}`,
      JSON.stringify({
        a: "a".repeat(300_000),
        b: "0".repeat(300_000),
        c: "=".repeat(100_000),
        d: "%41".repeat(30_000),
      }),
      "{not json at all",
    ];
    for (const b of bodies) {
      const bytes = typeof b === "string" ? new TextEncoder().encode(b) : b;
      const v = s.pipeline.hook({
        provider: "unknown",
        method: "POST",
        path: "/x",
        headers: new Headers(),
        body: bytes,
        session: { session_id: "g" } as SessionContext,
        transport: "http",
      }) as Verdict;
      expect(["pass", "log"]).toContain(v.action);
    }
  });

  test("strings nested deeper than the extractor walks are still scanned, and never forwarded unredacted", () => {
    const deep = (depth: number, leaf: unknown): unknown =>
      depth === 0 ? leaf : { d: deep(depth - 1, leaf) };
    const body = {
      model: "m",
      messages: [{ role: "user", content: [deep(300, { text: `key ${AWS_ID}` })] }],
    };
    expect(setup().scan(body).action).toBe("block");
    const rules = loadBuiltinRules().map((r) =>
      r.name === "aws_access_key_id" ? { ...r, action: "redact" as const } : r,
    );
    const v = setup(() => {}, rules).scan(body);
    const forwarded = v.action === "block" ? "" : new TextDecoder().decode(v.body!);
    expect(forwarded).not.toContain(AWS_ID);
  });

  test("a secret used as an object key is masked in the paths of findings under it", () => {
    const body = {
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      metadata: { [AWS_ID]: "mail jane.doe@acme-corp.io", [`x ${GH}`]: { v: "and ops@acme-corp.io" } },
    };
    const s = setup();
    const v = s.scan(body);
    // A text given with a path built from keys (as MCP arguments once were) masks the same way.
    expect(s.file("mail jane.doe@acme-corp.io", `arguments.env.${AWS_ID}`)[0]!.path).toBe(
      `arguments.env.${maskValue(AWS_ID)}`,
    );
    const emails = v.findings.filter((f) => f.rule === "email_address");
    expect(emails.map((f) => f.path)).toEqual([
      `metadata.${maskValue(AWS_ID)}`,
      `metadata["x ${maskValue(GH)}"].v`,
    ]);
  });

  test("object keys of 16+ characters are scanned too, reported at their object's path", () => {
    const s = setup();
    const v = s.scan({ model: "m", metadata: { [AWS_ID]: 1 } });
    expect(v.action).toBe("block");
    expect(v.findings.map((f) => [f.rule, f.path])).toEqual([["aws_access_key_id", "metadata"]]);
    expect(s.scan({ [AWS_ID]: true }).findings.map((f) => f.path)).toEqual(["$"]);
  });

  test("a body that is not JSON is scanned as text at path `body`", () => {
    const v = setup().scan(`plain ${AWS_ID} text`);
    expect(v.findings.map((f) => [f.rule, f.path])).toEqual([["aws_access_key_id", "body"]]);
  });
});

describe("allowlists", () => {
  test("secrets (exact and glob), pii and paths entries drop findings before policy", () => {
    expect(setup((c) => (c.allowlists.secrets = [AWS_ID])).scan(msgs(`key ${AWS_ID}`)).action).toBe("pass");
    expect(setup((c) => (c.allowlists.secrets = ["AKIA*EXAMPLQ"])).scan(msgs(`key ${AWS_ID}`)).action).toBe(
      "pass",
    );
    expect(setup((c) => (c.allowlists.secrets = ["AKIA*OTHER"])).scan(msgs(`key ${AWS_ID}`)).action).toBe(
      "block",
    );
    expect(
      setup((c) => (c.allowlists.pii = ["*@acme-corp.io"])).scan(msgs("mail jane.doe@acme-corp.io")).findings,
    ).toEqual([]);
    expect(setup((c) => (c.allowlists.pii = [AWS_ID])).scan(msgs(`key ${AWS_ID}`)).action).toBe("block");
    expect(setup((c) => (c.allowlists.paths = ["messages[0].*"])).scan(msgs(`key ${AWS_ID}`)).action).toBe(
      "pass",
    );
    expect(
      setup((c) => (c.allowlists.paths = ["*/fixtures/*"])).file(`k ${AWS_ID}`, "test/fixtures/a.txt"),
    ).toEqual([]);
  });
});

describe("session dedup", () => {
  test("a secret in turn 1 is still blocked in turn 5, while only new segments are scanned", () => {
    const s = setup();
    const history = [`here is my key ${AWS_ID}`];
    const first = s.scan(msgs(...history), "conv");
    expect(first.action).toBe("block");
    for (let turn = 2; turn <= 5; turn++) {
      history.push(
        `turn ${turn} reply with enough words to be remembered`,
        `turn ${turn} question, again long enough`,
      );
      const before = s.pipeline.stats();
      const v = s.scan(msgs(...history), "conv");
      const after = s.pipeline.stats();
      expect(v.action).toBe("block");
      expect(v.findings.filter((f) => f.rule === "aws_access_key_id").map((f) => f.path)).toEqual([
        "messages[0].content",
      ]);
      // Only the two new turns are scanned (plus role names and the model, too short to remember),
      // and the junctions that join them to their neighbours (policy/junctions.ts: a split and a
      // context text each, at most both neighbours long).
      const newChars = history.slice(-2).join("").length;
      const junctions = 2 * (history.at(-3)!.length + newChars + history.at(-2)!.length + 1);
      expect(after.chars_scanned - before.chars_scanned).toBeLessThan(
        newChars + junctions + 25 * (history.length + 1) + 3 * 20,
      );
      // Every old message is answered from memory (and so are the old junctions).
      expect(after.segments_cached - before.segments_cached).toBeGreaterThanOrEqual(history.length - 2);
    }
  });

  test("a segment past the matcher's per-rule match cap is not remembered as clean", () => {
    const rules = loadBuiltinRules().map((r) =>
      r.name === "email_address" ? { ...r, action: "block" as const } : r,
    );
    const s = setup(() => {}, rules);
    const texts = Array.from({ length: 1100 }, (_, i) => `mail user${i}@acme-corp.io now`);
    expect(s.scan(msgs(...texts), "capped").action).toBe("block");
    // The client resends only the tail of the conversation (compaction): still blocked.
    expect(s.scan(msgs(texts[1099]!), "capped").action).toBe("block");
  });

  test("the cache is per session and bounded by dedup.*", () => {
    const s = setup((c) => {
      c.dedup.max_conversations = 2;
      c.dedup.max_hashes_per_conversation = 3;
    });
    for (const id of ["a", "b", "c"])
      s.scan(msgs(...Array.from({ length: 6 }, (_, i) => `session ${id} message number ${i} is long`)), id);
    const st = s.pipeline.stats();
    expect(st.sessions).toBe(2);
    expect(st.fingerprints).toBeLessThanOrEqual(6);
  });

  test("changing rules starts over and applies at once", () => {
    const s = setup();
    expect(s.scan(msgs(`key ${AWS_ID}`), "r").action).toBe("block");
    s.setRules(loadBuiltinRules().filter((r) => r.name !== "aws_access_key_id"));
    expect(s.scan(msgs(`key ${AWS_ID}`), "r").action).toBe("pass");
  });

  test("property: any split of a conversation into turns, repeated or not, gives the same findings", () => {
    const pieces = [
      "intro text with nothing",
      `a key ${AWS_ID} in prose`,
      "email jane.doe@acme-corp.io here",
      `nested ${Buffer.from(`token=${GH}`).toString("base64")} blob`,
      "aws_secret_access_key is in the next line",
      "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "CONFIDENTIAL roadmap",
      "card 4539 1488 0343 6467",
    ];
    const key = (v: Verdict) =>
      v.findings.map((f) => `${f.rule}|${f.path}|${f.start}|${f.end}|${f.content_hash}|${f.decoded}`).sort();
    const expected = key(setup().scan(msgs(...pieces), "fresh"));
    expect(expected.length).toBeGreaterThanOrEqual(5);
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 20; trial++) {
      const s = setup();
      const sid = `p${trial}`;
      let n = 0;
      while (n < pieces.length) {
        n = Math.min(pieces.length, n + 1 + Math.floor(rnd() * 3));
        s.scan(msgs(...pieces.slice(0, n)), sid);
        if (rnd() < 0.3) s.scan(msgs(...pieces.slice(0, n)), sid); // a retried request
      }
      expect(key(s.scan(msgs(...pieces), sid))).toEqual(expected);
    }
  });
});

describe("rules from configuration", () => {
  test("proprietary.keywords, proprietary.file_patterns and custom_rules apply without the store", () => {
    const s = setup((c) => {
      c.proprietary.keywords = ["Project Falcon"];
      c.proprietary.file_patterns = ["*.sqlite", "prod-secrets.*"];
      c.custom_rules = [
        {
          name: "ticket",
          pattern: "TKT-([0-9]{5})",
          severity: "high",
          action: "block",
          detector: "custom",
          description: "",
          tags: [],
        },
      ];
    });
    const v = s.scan(
      msgs("the project  falcon launch", "open db/users.sqlite and prod-secrets.json", "see TKT-12345"),
    );
    expect(v.findings.map((f) => f.rule).sort()).toEqual([
      "proprietary_file_pattern",
      "proprietary_file_pattern",
      "proprietary_keyword",
      "ticket",
    ]);
    expect(v.action).toBe("block");
    expect(v.findings.find((f) => f.rule === "ticket")!.preview).toBe("1****");
  });

  test("a user rule that can backtrack catastrophically is skipped and cannot stall a request", () => {
    const slow = rule({
      name: "slow",
      pattern: "([a-z]+)+@x",
      detector: "custom",
      severity: "high",
      action: "block",
      tier: "custom",
      source: "dashboard",
      description: "",
      tags: [],
    });
    const s = setup(() => {}, [...loadBuiltinRules(), slow]);
    const t0 = performance.now();
    const v = s.scan(msgs("a".repeat(200_000)));
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(v.findings).toEqual([]);
  });
});

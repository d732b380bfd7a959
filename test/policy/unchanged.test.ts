/**
 * Scanning only what differs from one of a session's last clean payloads (src/policy/unchanged.ts)
 * gives the verdict of a full scan. Two pipelines with the shipped rules, one scanning every payload
 * in full, are fed the same turns of a conversation: messages added, removed, rewritten in the kept
 * history, tokens whole, cut across two messages or with their keyword in the next one, side
 * requests of the session (a title) between turns, and the rules or the configuration changed
 * between turns. Their actions and findings must be the same every turn.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { type Config, defaultConfig } from "../../src/config/schema.ts";
import type { ScanRequest, Verdict } from "../../src/core/hook.ts";
import { blankSession } from "../../src/core/types.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import type { CompiledRules } from "../../src/policy/compile.ts";
import { createPipeline } from "../../src/policy/pipeline.ts";
import { CleanPayloads } from "../../src/policy/unchanged.ts";

const GH = ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"].join("");
const AWS_ID = ["AKIA", "QYLPMN5HFIQR7XOB"].join("");
const AWS_SECRET = ["AC9C79z5dcoqdc/F5caD4cq0", "zDDTK+7lCVKr7jf3"].join("");
const enc = new TextEncoder();
const rules = loadBuiltinRules();

function pipelines(config: () => Config, version: () => number) {
  const make = (reuseClean: boolean) =>
    createPipeline({
      config,
      rules: () => rules,
      rulesVersion: version,
      hmacKey: new Uint8Array(32),
      reuseClean,
    });
  return { reusing: make(true), full: make(false) };
}

const SYSTEM = "You are a coding assistant. Keep answers short.";
/** A system prompt whose first characters continue a token that a last message may begin. */
const CONTINUING = `${GH.slice(14)} -- ${SYSTEM}`;

function request(messages: unknown[], session = "s", system = SYSTEM): ScanRequest {
  const body = {
    model: "claude-sonnet-4-5",
    messages,
    system: [{ type: "text", text: system }],
    tools: [
      { name: "Bash", description: "Runs a shell command in the project.", input_schema: { type: "object" } },
    ],
  };
  return {
    provider: "anthropic",
    method: "POST",
    path: "/v1/messages",
    headers: new Headers({ "content-type": "application/json" }),
    body: enc.encode(JSON.stringify(body)),
    session: blankSession({ session_id: session, client: "claude-code", client_name: "Claude Code" }),
    transport: "http",
  };
}

/** A side request of the session: Claude Code's title request, on another model, about `said`. */
function title(said: string, session = "s"): ScanRequest {
  const body = {
    model: "claude-haiku-4-5",
    system: [{ type: "text", text: "Name this coding session in two to five words." }],
    messages: [{ role: "user", content: `<session>\n${said}\n</session>` }],
  };
  return { ...request([], session), body: enc.encode(JSON.stringify(body)) };
}

/** What must be the same: the action and each finding's rule, place and action. */
const outcome = (v: Verdict) => ({
  action: v.action,
  findings: v.findings.map((f) => `${f.rule} ${f.path} ${f.action}`).sort(),
  body: v.body ? new TextDecoder().decode(v.body) : null,
});

/** Texts a turn may say: clean prose, short words, a token whole or in pieces, a keyword and its value. */
const SAY = [
  "Fix the failing test in src/clock.ts.",
  "ok",
  "Run the tests again and show me the output of the last one.",
  `the token is ${GH}`,
  `remember this: ${GH.slice(0, 14)}`,
  `${GH.slice(14)} is the rest of it`,
  `aws_access_key_id = ${AWS_ID}`,
  `aws_secret_access_key = ${AWS_SECRET}`,
  AWS_SECRET.slice(0, 20),
  AWS_SECRET.slice(20),
  "The expiry test now uses the injected clock.",
];

const step = fc.oneof(
  // Mostly a new message, as in a conversation.
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("add" as const),
      say: fc.nat({ max: SAY.length - 1 }),
      blocks: fc.boolean(),
    }),
  },
  fc.record({ op: fc.constant("edit" as const), at: fc.nat(), say: fc.nat({ max: SAY.length - 1 }) }),
  fc.record({ op: fc.constant("remove" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("config" as const) }),
  fc.record({ op: fc.constant("same" as const) }),
  // A side request of the same session between two turns (a title request), saying one of SAY.
  fc.record({ op: fc.constant("side" as const), say: fc.nat({ max: SAY.length - 1 }) }),
  // A rules change recompiles the matcher (slow): now and then.
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant("rules" as const), rare: fc.integer({ min: 0, max: 9 }) }),
  },
);

test("property: every turn's verdict is the full scan's", () => {
  // One pair of pipelines (compiling the rules is the slow part); each run is a session of its own.
  const base = defaultConfig();
  const redacting: Config = {
    ...base,
    detectors: { ...base.detectors, secrets: { ...base.detectors.secrets, action: "redact" } },
  };
  let cfg: Config = base;
  let version = 1;
  const { reusing, full } = pipelines(
    () => cfg,
    () => version,
  );
  let run = 0;
  fc.assert(
    fc.property(fc.array(step, { minLength: 2, maxLength: 12 }), fc.boolean(), (steps, redact) => {
      const session = `run-${++run}`;
      cfg = redact ? redacting : base;
      const messages: { role: string; content: unknown }[] = [{ role: "user", content: SAY[0]! }];
      for (const s of steps) {
        const role = messages.length % 2 ? "assistant" : "user";
        if (s.op === "add")
          messages.push({ role, content: s.blocks ? [{ type: "text", text: SAY[s.say]! }] : SAY[s.say]! });
        else if (s.op === "edit") messages[s.at % messages.length] = { role, content: SAY[s.say]! };
        else if (s.op === "remove" && messages.length > 1) messages.splice(s.at % messages.length, 1);
        else if (s.op === "rules" && s.rare === 0) version++;
        else if (s.op === "config") cfg = { ...cfg };
        else if (s.op === "side") {
          const side = title(SAY[s.say]!, session);
          expect(outcome(reusing.hook(side) as Verdict)).toEqual(outcome(full.hook(side) as Verdict));
        }
        const req = request(structuredClone(messages), session, CONTINUING);
        const a = reusing.hook(req) as Verdict;
        const b = full.hook(req) as Verdict;
        expect(outcome(a)).toEqual(outcome(b));
      }
    }),
    { numRuns: 200 },
  );
  // The clean turns were scanned from the previous one.
  expect(reusing.stats().segments_scanned).toBeLessThan(full.stats().segments_scanned);
}, 60_000);

test("a clean turn scans only its new texts; a token in the kept history is still found", () => {
  const { reusing, full } = pipelines(defaultConfig, () => 1);
  const history = [
    { role: "user", content: SAY[0]! },
    { role: "assistant", content: SAY[10]! },
  ];
  const both = (messages: unknown[]) => {
    const req = request(messages);
    return [reusing.hook(req) as Verdict, full.hook(req) as Verdict];
  };
  expect(both(history).map((v) => v.action)).toEqual(["pass", "pass"]);
  expect(both([...history, { role: "user", content: SAY[2]! }]).map((v) => v.action)).toEqual([
    "pass",
    "pass",
  ]);
  const edited = [
    { role: "user", content: `${SAY[0]} ${GH}` },
    history[1]!,
    { role: "user", content: SAY[2]! },
  ];
  const [v] = both(edited);
  expect(v!.action).toBe("block");
  expect(v!.findings.map((f) => f.path)).toContain("messages[0].content");
});

test("a token cut across the last kept message and a new one is found at their junction", () => {
  const { reusing } = pipelines(defaultConfig, () => 1);
  const kept = [{ role: "user", content: SAY[4]! }];
  expect((reusing.hook(request(kept)) as Verdict).action).toBe("pass");
  const v = reusing.hook(request([...kept, { role: "user", content: SAY[5]! }])) as Verdict;
  expect(v.action).toBe("block");
  expect(v.findings.map((f) => f.path)).toContain("messages[0].content + messages[1].content");
});

test("another session's clean payload is not used", () => {
  const { reusing } = pipelines(defaultConfig, () => 1);
  reusing.hook(request([{ role: "user", content: SAY[0]! }], "one"));
  const before = reusing.stats().segments_scanned;
  reusing.hook(request([{ role: "user", content: SAY[0]! }], "two"));
  expect(reusing.stats().segments_scanned - before).toBeGreaterThan(2);
});

test("after a side request (a title) between two clean turns, the next is scanned from the turn before it", () => {
  const cfg = defaultConfig();
  const { reusing, full } = pipelines(
    () => cfg,
    () => 1,
  );
  const both = (req: ScanRequest) => [reusing.hook(req) as Verdict, full.hook(req) as Verdict];
  const history = [
    { role: "user", content: SAY[0]! },
    { role: "assistant", content: SAY[10]! },
  ];
  expect(both(request(history)).map((v) => v.action)).toEqual(["pass", "pass"]);
  expect(both(title(SAY[0]!)).map((v) => v.action)).toEqual(["pass", "pass"]);
  const next = [...history, { role: "user", content: SAY[2]! }];
  const before = reusing.stats().segments_scanned;
  expect(both(request(next)).map((v) => v.action)).toEqual(["pass", "pass"]);
  // The new message and the structure around it, not the system prompt, the tools or the history.
  expect(reusing.stats().segments_scanned - before).toBeLessThanOrEqual(2);
  // The next title request is scanned from the previous one in turn, and a token in the kept
  // history after one is still found.
  expect(both(title(SAY[2]!)).map((v) => v.action)).toEqual(["pass", "pass"]);
  const edited = [
    { role: "user", content: `${SAY[0]} ${GH}` },
    ...next.slice(1),
    { role: "user", content: "ok" },
  ];
  const [v, w] = both(request(edited));
  expect(v!.action).toBe("block");
  expect(outcome(v!)).toEqual(outcome(w!));
  expect(v!.findings.map((f) => f.path)).toContain("messages[0].content");
});

/**
 * A segment memory that forgets: the memory is what the junction with the previous payload's end
 * goes by, and a payload scanned in full tells it every text again, one scanned from the previous
 * one only the new texts. Small limits (a session takes another's place, fingerprints dropped for
 * the limit) and conversations whose turns each send one message after the same system prompt, with
 * a token cut across two turns.
 */
test("property: with a segment memory that forgets, every turn's verdict is the full scan's", () => {
  const base = defaultConfig();
  let cfg: Config = base;
  const { reusing, full } = pipelines(
    () => cfg,
    () => 1,
  );
  const SYSTEM = "You are a coding assistant working in the user's repository. Keep answers short.";
  const alone = (content: string, session: string): ScanRequest => ({
    ...request([], session),
    provider: "openai",
    path: "/v1/chat/completions",
    body: enc.encode(
      JSON.stringify({
        model: "gpt-4o",
        messages: [
          { role: "system", content: SYSTEM },
          { role: "user", content },
        ],
      }),
    ),
  });
  const turn = fc.record({
    say: fc.nat({ max: SAY.length - 1 }),
    session: fc.nat({ max: 2 }),
    side: fc.boolean(),
  });
  let run = 0;
  fc.assert(
    fc.property(
      fc.array(turn, { minLength: 2, maxLength: 12 }),
      fc.constantFrom(1, 2),
      fc.constantFrom(1, 4, 50_000),
      (turns, conversations, hashes) => {
        cfg = {
          ...base,
          dedup: { ...base.dedup, max_conversations: conversations, max_hashes_per_conversation: hashes },
        };
        run++;
        for (const t of turns) {
          const session = `forget-${run}-${t.session}`;
          const req = t.side ? title(SAY[t.say]!, session) : alone(SAY[t.say]!, session);
          expect(outcome(reusing.hook(req) as Verdict)).toEqual(outcome(full.hook(req) as Verdict));
        }
      },
    ),
    { numRuns: 300 },
  );
}, 60_000);

test("what is kept beside the last payload: not one of a memory since replaced, and within the bound, the scope's older one goes first", () => {
  const c = new CleanPayloads();
  const rules = {} as CompiledRules;
  const cfg = defaultConfig();
  const mark = (conv: object) => ({ conv, evicted: 0 });
  const [old, now] = [mark({}), mark({})];
  const A = ["system", "a1", "a2", "a3"];
  c.record("s", A, rules, cfg, true, old, old, null);
  // The session's memory was replaced (expired, or taken by another session): A is of no use again.
  const prev = ["system", "b1", "b2", "b3"];
  expect(c.changed("s", prev, rules, cfg, now)).toBeNull();
  c.record("s", prev, rules, cfg, true, now, now, null);
  const next = [...prev, "b4"];
  c.record("s", next, rules, cfg, true, now, now, c.changed("s", next, rules, cfg, now));
  expect(c.changed("s", A, rules, cfg, old)).toBeNull();
  // Two payloads of one scope over the bound in all: the older goes, the last and other scopes stay.
  c.record("other", ["x".repeat(10)], rules, cfg, true, now, now, null);
  const big = (ch: string) => [ch.repeat(17 * 1024 * 1024), `and ${ch}`];
  c.record("s", big("a"), rules, cfg, true, now, now, null);
  const B = big("b");
  c.record("s", B, rules, cfg, true, now, now, null);
  // (Compared as booleans: a failure would print 17 million characters.)
  expect(c.changed("s", B, rules, cfg, now) !== null).toBe(true);
  expect(c.changed("s", big("a"), rules, cfg, now) === null).toBe(true);
  expect(c.changed("other", ["x".repeat(10)], rules, cfg, now) !== null).toBe(true);
});

test("a payload scanned from a kept one is counted with its new texts: over the bound, it is not kept", () => {
  const c = new CleanPayloads();
  const rules = {} as CompiledRules;
  const cfg = defaultConfig();
  const now = { conv: {}, evicted: 0 };
  const kept = ["system", "a1", "a2"];
  c.record("s", kept, rules, cfg, true, now, now, null);
  const huge = 33 * 1024 * 1024;
  const next = ["system", "a1", "x".repeat(huge), "a2"];
  const from = c.changed("s", next, rules, cfg, now)!;
  expect([from.from, from.to, from.chars]).toEqual([2, 3, 6 + 2 + 2 + huge]);
  c.record("s", next, rules, cfg, true, now, now, from);
  // (Compared as a boolean: a failure would print 33 million characters.)
  expect(c.changed("s", next, rules, cfg, now) === null).toBe(true);
  const small = ["system", "a1", "a2", "b1"];
  c.record("s", small, rules, cfg, true, now, now, c.changed("s", small, rules, cfg, now));
  const after = c.changed("s", [...small, "b2"], rules, cfg, now)!;
  expect({ from: after.from, to: after.to, chars: after.chars }).toEqual({ from: 4, to: 5, chars: 14 });
});

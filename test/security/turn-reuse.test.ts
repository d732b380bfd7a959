/**
 * Attack: the shortcut of parsing a turn from the previous one (src/proxy/turns.ts). A tool's next
 * turn is mostly the previous body byte for byte, so sluice parses only what changed and keeps the
 * rest of the parsed value. Each attack sends a first turn that passes, then a second that reuses
 * it: a token written into a message of the kept history, a token cut across the last kept message
 * and the first new one, a key twice in a new message, a new part that closes the array and adds a
 * second `messages` key, rules changed between the turns, the same body again (a retry, taken with no
 * parse) after a rule added through the dashboard or a switch from passthrough, another session with
 * the same history, and redaction of a token the history keeps. The stand-in upstream must never see
 * the token, and the verdict is the one a whole parse gives. A property test sends random
 * conversations (tokens whole or cut in two, messages added, dropped, rewritten, sent again), each
 * body also under a session of its own: the conversation blocks whatever that blocks, and what it
 * forwards is the same bytes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { blockingAndRedacting, type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

const GH = ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"].join("");
const TICKET = "SLT-123456-ABCD";

let up: Upstream;
let s: InProcessSluice;
let redacting: InProcessSluice;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg" }));
  [s, redacting] = await blockingAndRedacting(up.url);
});
afterAll(async () => {
  await s?.stop();
  await redacting?.stop();
  await up?.stop();
});

const reached = (needle: string) =>
  up.requests.some((r) => new TextDecoder().decode(r.body).includes(needle));

type Message = { role: string; content: unknown };
/** A Claude Code-like body: the conversation, then a system prompt and tools that every turn resends. */
function body(messages: Message[]): Record<string, unknown> {
  return {
    model: "claude-sonnet-4-5",
    messages,
    system: [{ type: "text", text: "You are Claude Code, a coding assistant. ".repeat(50) }],
    tools: [{ name: "Bash", description: "Run a command. ".repeat(40), input_schema: { type: "object" } }],
    max_tokens: 64,
    stream: false,
  };
}
const text = (role: string, t: string): Message => ({ role, content: [{ type: "text", text: t }] });
const history = [
  text("user", "Fix the failing test in src/clock.ts"),
  text("assistant", "The expiry test uses the wall clock; I will inject one."),
];

async function send(via: InProcessSluice, session: string, payload: string): Promise<Response> {
  return fetch(`${via.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k", "x-claude-code-session-id": session },
    body: payload,
  });
}

/** Send two turns of one session; the second must have been parsed from the first. */
async function twoTurns(via: InProcessSluice, session: string, first: string, second: string) {
  const before = via.runtime.proxy.turnStats().reparsed;
  const a = await send(via, session, first);
  expect(a.status).toBe(200);
  await a.arrayBuffer();
  const b = await send(via, session, second);
  return { res: b, reparsed: via.runtime.proxy.turnStats().reparsed - before };
}

describe("a second turn parsed from the first", () => {
  test("a clean turn is parsed from the previous one and passes", async () => {
    const first = JSON.stringify(body(history));
    const second = JSON.stringify(body([...history, text("user", "Now run the tests.")]));
    const { res, reparsed } = await twoTurns(s, "clean", first, second);
    expect(res.status).toBe(200);
    expect(reparsed).toBe(1);
  });

  test("a token written into a kept message of the history is found", async () => {
    const first = JSON.stringify(body(history));
    const edited = [text("user", `Fix the failing test in src/clock.ts with ${GH}`), history[1]!];
    const second = JSON.stringify(body([...edited, text("user", "Now run the tests.")]));
    const { res, reparsed } = await twoTurns(s, "edited-history", first, second);
    expect(reparsed).toBe(1);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("messages[0].content[0].text");
    expect(reached(GH)).toBe(false);
  });

  test("a token cut across the last kept message and the first new one is found", async () => {
    const [a, b] = [GH.slice(0, 12), GH.slice(12)];
    const kept = [...history, text("user", `remember this: ${a}`)];
    const first = JSON.stringify(body(kept));
    const second = JSON.stringify(body([...kept, text("user", `${b} is the rest`)]));
    const { res, reparsed } = await twoTurns(s, "split", first, second);
    expect(reparsed).toBe(1);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(
      "github_pat at messages[2].content[0].text + messages[3].content[0].text",
    );
    expect(reached(b)).toBe(false);
  });

  test("a key twice in a new message is ambiguous, as in a body parsed whole", async () => {
    const first = JSON.stringify(body(history));
    const second = JSON.stringify(body([...history, text("user", "hello")])).replace(
      '"text":"hello"',
      `"text":"${GH}","text":"hello"`,
    );
    const { res } = await twoTurns(s, "dup-new", first, second);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("twice");
    expect(reached(GH)).toBe(false);
  });

  test("a new part that closes the array and adds a second messages key is ambiguous", async () => {
    const first = JSON.stringify(body(history));
    const whole = JSON.stringify(body([...history, text("user", "hello")]));
    const close = whole.indexOf('],"system"');
    const second = `${whole.slice(0, close)}],"messages":[{"role":"user","content":"${GH}"}${whole.slice(close)}`;
    expect(() => JSON.parse(second)).not.toThrow();
    const { res, reparsed } = await twoTurns(s, "dup-root", first, second);
    expect(reparsed).toBe(0);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("twice");
    expect(reached(GH)).toBe(false);
  });

  test("rules changed between two turns apply to the kept history", async () => {
    await using fresh = await startSluice({ upstream: up.url, dashboard: false });
    const kept = [...history, text("user", `see ticket ${TICKET} please`)];
    const first = await send(fresh, "rules", JSON.stringify(body(kept)));
    expect(first.status).toBe(200);
    const reload = await fresh.runtime.reload(
      {
        custom_rules: [
          { name: "test-ticket", pattern: "SLT-[0-9]{6}-[A-Z]{4}", severity: "high", action: "block" },
        ],
      },
      "api",
    );
    expect(reload.ok).toBe(true);
    const before = fresh.runtime.proxy.turnStats().reparsed;
    const second = await send(fresh, "rules", JSON.stringify(body([...kept, text("user", "and then?")])));
    expect(fresh.runtime.proxy.turnStats().reparsed - before).toBe(1);
    expect(second.status).toBe(400);
    expect(await second.text()).toContain("test-ticket");
  });

  test("the same body again after a rule added through the dashboard API is scanned with that rule", async () => {
    await using fresh = await startSluice({ upstream: up.url });
    const b = JSON.stringify(body([...history, text("user", `see ticket ${TICKET} please`)]));
    expect((await send(fresh, "retry-rule", b)).status).toBe(200);
    const { csrf_token } = (await (await fetch(`${fresh.dashboardUrl}/api/v1/auth/session`)).json()) as {
      csrf_token: string;
    };
    const added = await fetch(`${fresh.dashboardUrl}/api/v1/rules`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrf_token },
      body: JSON.stringify({ name: "test-ticket", pattern: "SLT-[0-9]{6}-[A-Z]{4}", action: "block" }),
    });
    expect(added.status).toBe(201);
    // The retry is the previous turn's value and strings, with no parse: the new rule reads them.
    const before = fresh.runtime.proxy.turnStats().reparsed;
    const again = await send(fresh, "retry-rule", b);
    expect(fresh.runtime.proxy.turnStats().reparsed - before).toBe(1);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("test-ticket");
  });

  test("the same body again after a switch from passthrough to active is scanned", async () => {
    await using fresh = await startSluice({ upstream: up.url, dashboard: false });
    const token = GH.replace("R2x0", "UGFz");
    const b = JSON.stringify(body([...history, text("user", `deploy with ${token}`)]));
    fresh.runtime.setMode("passthrough", "test");
    expect((await send(fresh, "retry-mode", b)).status).toBe(200);
    fresh.runtime.setMode("active", "test");
    const sent = up.requests.length;
    for (let i = 0; i < 2; i++) {
      const res = await send(fresh, "retry-mode", b);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("messages[2].content[0].text");
    }
    // Both were parsed from the turn passthrough forwarded (the second as a retry), neither forwarded.
    expect(fresh.runtime.proxy.turnStats().reparsed).toBe(2);
    expect(up.requests.length).toBe(sent);
  });

  test("another session with the same history gets its own verdict", async () => {
    const first = JSON.stringify(body(history));
    await send(s, "one", first).then((r) => r.arrayBuffer());
    const other = JSON.stringify(body([text("user", `Fix it with ${GH}`), history[1]!]));
    const res = await send(s, "two", other);
    expect(res.status).toBe(400);
    expect(reached(GH)).toBe(false);
  });

  test("after a side request under the same session (a title), the next turn is parsed from the one before it, and a token written into its history is found", async () => {
    const title = (n: number) =>
      JSON.stringify({
        model: "claude-haiku-4-5",
        system: [{ type: "text", text: "Name this coding session in two to five words." }],
        messages: [{ role: "user", content: `<session>\nFix the failing test, prompt ${n}\n</session>` }],
        max_tokens: 32,
        stream: false,
      });
    const before = s.runtime.proxy.turnStats().reparsed;
    expect((await send(s, "titled", JSON.stringify(body(history)))).status).toBe(200);
    expect((await send(s, "titled", title(1))).status).toBe(200);
    const clean = [...history, text("user", "Now run the tests.")];
    expect((await send(s, "titled", JSON.stringify(body(clean)))).status).toBe(200);
    expect(s.runtime.proxy.turnStats().reparsed - before).toBe(1);
    expect((await send(s, "titled", title(2))).status).toBe(200);
    expect(s.runtime.proxy.turnStats().reparsed - before).toBe(2);
    const edited = [text("user", `Fix the failing test with ${GH}`), ...clean.slice(1), text("user", "and?")];
    const res = await send(s, "titled", JSON.stringify(body(edited)));
    expect(s.runtime.proxy.turnStats().reparsed - before).toBe(3);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("messages[0].content[0].text");
    expect(reached(GH)).toBe(false);
  });

  test("a token the history keeps is redacted again in every turn", async () => {
    const kept = [text("user", `deploy with ${GH}`), history[1]!];
    const first = JSON.stringify(body(kept));
    const second = JSON.stringify(body([...kept, text("user", "did it work?")]));
    const { res, reparsed } = await twoTurns(redacting, "redact", first, second);
    expect(reparsed).toBe(1);
    expect(res.status).toBe(200);
    expect(reached(GH)).toBe(false);
    const last = new TextDecoder().decode(up.requests.at(-1)!.body);
    expect(JSON.parse(last).messages).toHaveLength(3);
    expect(last).toContain("did it work?");
  });
});

describe("a Codex WebSocket frame parsed from the socket's previous one", () => {
  test("a token written into a kept item of the input is found; the socket stays open", async () => {
    await using wsUp = await startUpstream();
    const seen: string[] = [];
    wsUp.ws("/v1/responses", {
      message(ws, msg) {
        seen.push(String(msg));
        ws.send(JSON.stringify({ type: "response.completed" }));
      },
    });
    await using via = await startSluice({ upstream: wsUp.url, dashboard: false });
    const ws = new WebSocket(`${via.proxyUrl.replace("http", "ws")}/v1/responses`, {
      headers: { authorization: "Bearer sk-test", originator: "codex_cli_rs" },
    } as unknown as string[]);
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error("websocket failed to open"));
    });
    const next = () =>
      new Promise<string>((r) => ws.addEventListener("message", (e) => r(String(e.data)), { once: true }));
    const item = (role: string, text: string) => ({
      type: "message",
      role,
      content: [{ type: role === "user" ? "input_text" : "output_text", text }],
    });
    const frame = (input: unknown[]) =>
      JSON.stringify({
        type: "response.create",
        model: "gpt-5",
        instructions: "Be brief. ".repeat(40),
        input,
      });
    const kept = [
      item("user", "Fix the failing test in src/clock.ts"),
      item("assistant", "Done, the clock is injected."),
    ];
    const before = via.runtime.proxy.turnStats().reparsed;
    ws.send(frame(kept));
    expect(await next()).toContain("response.completed");
    ws.send(frame([...kept, item("user", "Now run the tests.")]));
    expect(await next()).toContain("response.completed");
    expect(via.runtime.proxy.turnStats().reparsed - before).toBe(1);
    const edited = [
      item("user", `Fix it with ${GH}`),
      kept[1]!,
      item("user", "Now run the tests."),
      item("user", "and?"),
    ];
    ws.send(frame(edited));
    const answer = await next();
    expect(answer).toContain("blocked_by_sluice");
    expect(via.runtime.proxy.turnStats().reparsed - before).toBe(2);
    expect(seen.some((f) => f.includes(GH))).toBe(false);
    ws.close();
  });
});

describe("property: a conversation parsed turn by turn, against each body as a conversation of its own", () => {
  const token = GH.replace("R2x0", "UHJv");
  const said = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom("hello", "run the tests", "Grüße “x” ☃", 'a\\b"c', "\u2028") },
    { weight: 1, arbitrary: fc.constantFrom(`use ${token} now`, token.slice(0, 14), token.slice(14)) },
  );
  // The next turn: messages added, the last taken out, one rewritten (in the kept history too), or
  // the same body again.
  const step = fc.oneof(
    fc.record({ op: fc.constant("add"), said: fc.array(said, { minLength: 1, maxLength: 2 }) }),
    fc.record({ op: fc.constantFrom("drop", "again") }),
    fc.record({ op: fc.constant("rewrite"), at: fc.nat(), said }),
  );
  type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;
  const next = (messages: string[], st: Step): string[] => {
    if (st.op === "add") return messages.concat(st.said);
    if (st.op === "drop") return messages.slice(0, Math.max(1, messages.length - 1));
    if (st.op === "rewrite") return messages.map((m, i) => (i === st.at % messages.length ? st.said : m));
    return messages;
  };
  let run = 0;

  for (const [name, via] of [
    ["blocking", () => s],
    ["redacting", () => redacting],
  ] as const)
    test(`${name}: the same verdict, the same forwarded body, never the token`, async () => {
      let reused = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
          const session = `${name}-${run++}`;
          let messages = ["Fix the failing test in src/clock.ts"];
          for (const st of steps) {
            messages = next(messages, st);
            const payload = JSON.stringify(
              body(messages.map((t, i) => text(i % 2 ? "assistant" : "user", t))),
            );
            const forwarded = async (res: Response) => {
              await res.arrayBuffer();
              return res.status === 200 ? new TextDecoder().decode(up.requests.at(-1)!.body) : null;
            };
            const before = via().runtime.proxy.turnStats().reparsed;
            const turn = await send(via(), session, payload);
            const status = turn.status;
            const sent = await forwarded(turn);
            reused += via().runtime.proxy.turnStats().reparsed - before;
            // Under a session of its own the body is parsed and scanned whole.
            const alone = await send(via(), `${session}-alone-${run++}`, payload);
            const aloneSent = await forwarded(alone);
            // The conversation may find more (a token cut across two turns), never less.
            if (alone.status !== 200) expect(status).toBe(alone.status);
            if (sent !== null && aloneSent !== null) expect(sent).toBe(aloneSent);
            if (sent !== null) expect(sent).not.toContain(token);
          }
        }),
        { numRuns: 60 },
      );
      expect(reused).toBeGreaterThan(60);
    });
});

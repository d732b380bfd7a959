/**
 * Attack: the shortcut of scanning a session's payload only where it differs from the previous one
 * when that matched nothing (src/policy/unchanged.ts). Each attack sends turns that pass, then one
 * the shortcut handles: a token cut between a kept text and a new one (before it, after it, across
 * texts removed or moved between them), a token in a kept text after the policy changed through the
 * dashboard (a rule added, a detector or the decoding stage switched on, an allowlist entry removed),
 * a token sent while the proxy was in passthrough and resent once it is active, a turn after one that
 * was blocked, a turn after a side request (a title) of the session, another client on the same
 * session id, and a token cut across two turns that each
 * send one message after the same system prompt, once the session's segment memory forgot what it
 * held (expired after an idle hour, taken by another session, a fingerprint dropped for the limit),
 * over HTTP and a WebSocket. The stand-in upstream must never receive the turn that completes the
 * token.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { type InProcessSluice, openWebSocket, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

const GH = ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"].join("");
const [HEAD, TAIL] = [GH.slice(0, 14), GH.slice(14)];

let up: Upstream;
let s: InProcessSluice;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg" }));
  up.on("POST", "/v1/chat/completions", () => json({ id: "c", choices: [] }));
  up.ws("/v1/responses");
  s = await startSluice({ upstream: up.url });
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

const reached = (needle: string) =>
  up.requests.some((r) => new TextDecoder().decode(r.body).includes(needle));

type Message = { role: string; content: unknown };
const text = (role: string, t: string): Message => ({ role, content: [{ type: "text", text: t }] });
const SYSTEM = "You are Claude Code, a coding assistant. Keep answers short and to the point.";
/** A Claude Code-like body: the conversation, then a system prompt and tools every turn resends. */
const claude = (messages: Message[], system = SYSTEM) => ({
  model: "claude-sonnet-4-5",
  messages,
  system: [{ type: "text", text: system }],
  tools: [
    { name: "Bash", description: "Runs a shell command in the project.", input_schema: { type: "object" } },
  ],
  max_tokens: 64,
});
const history = [
  text("user", "Fix the failing test in src/clock.ts"),
  text("assistant", "The expiry test uses the wall clock; I will inject one."),
];

async function send(via: InProcessSluice, session: string, body: unknown): Promise<Response> {
  const res = await fetch(`${via.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k", "x-claude-code-session-id": session },
    body: JSON.stringify(body),
  });
  await res.clone().arrayBuffer();
  return res;
}

/** A dashboard API call, with the CSRF token the dashboard hands out. */
async function api(via: InProcessSluice, method: string, path: string, body?: unknown): Promise<Response> {
  const auth = (await (await fetch(`${via.dashboardUrl}/api/v1/auth/session`)).json()) as {
    csrf_token: string;
  };
  return fetch(`${via.dashboardUrl}${path}`, {
    method,
    headers: { "content-type": "application/json", "x-csrf-token": auth.csrf_token },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** Turns that must pass, then the one that must be blocked, in one session. */
async function turns(via: InProcessSluice, session: string, passing: unknown[], last: unknown) {
  for (const body of passing) expect((await send(via, session, body)).status).toBe(200);
  return send(via, session, last);
}

describe("a token cut between a kept text and a new one", () => {
  test("the last kept message and the first new one", async () => {
    const kept = [...history, text("user", `remember this: ${HEAD}`)];
    const res = await turns(
      s,
      "cut-prefix",
      [claude(kept)],
      claude([...kept, text("user", `${TAIL} is the rest`)]),
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(
      "github_pat at messages[2].content[0].text + messages[3].content[0].text",
    );
    expect(reached(TAIL)).toBe(false);
  });

  test("the last new message and the resent system prompt after it", async () => {
    const system = `${TAIL} is what the setup script printed.`;
    const res = await turns(
      s,
      "cut-suffix",
      [claude(history, system)],
      claude([...history, text("user", `remember this: ${HEAD}`)], system),
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("github_pat at messages[2].content[0].text + system[0].text");
  });

  test("two kept messages made neighbours by removing the one between them", async () => {
    const kept = [
      text("user", `remember this: ${HEAD}`),
      text("assistant", "Noted, go on."),
      text("user", `${TAIL} ok`),
    ];
    const res = await turns(s, "cut-removed", [claude(kept)], claude([kept[0]!, kept[2]!]));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(
      "github_pat at messages[0].content[0].text + messages[1].content[0].text",
    );
  });

  test("two kept messages made neighbours by moving one", async () => {
    const kept = [
      text("user", `remember this: ${HEAD}`),
      text("assistant", "Noted, go on."),
      text("user", `${TAIL} ok`),
    ];
    const res = await turns(s, "cut-moved", [claude(kept)], claude([kept[0]!, kept[2]!, kept[1]!]));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(
      "github_pat at messages[0].content[0].text + messages[1].content[0].text",
    );
  });
});

describe("the policy changed between two turns", () => {
  test("a rule added through the dashboard finds its value in a kept message", async () => {
    await using fresh = await startSluice({ upstream: up.url });
    const kept = [...history, text("user", "see ticket SLT-123456-ABCD please")];
    expect((await send(fresh, "rule-added", claude(kept))).status).toBe(200);
    const added = await api(fresh, "POST", "/api/v1/rules", {
      name: "ticket-ref",
      pattern: "SLT-[0-9]{6}-[A-Z]{4}",
      detector: "secrets",
      severity: "high",
      action: "block",
    });
    expect(added.status).toBe(201);
    const res = await send(fresh, "rule-added", claude([...kept, text("user", "and then?")]));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("ticket-ref");
  }, 20_000); // starts a sluice of its own: room on a loaded machine

  test("a detector switched on through the dashboard finds a token in a kept message", async () => {
    await using fresh = await startSluice({
      upstream: up.url,
      config: { detectors: { secrets: { enabled: false } } },
    });
    const kept = [...history, text("user", `deploy with ${GH}`)];
    expect((await send(fresh, "detector-on", claude(kept))).status).toBe(200);
    const put = await api(fresh, "PUT", "/api/v1/pipeline", { detectors: { secrets: { enabled: true } } });
    expect(((await put.json()) as { errors: unknown[] }).errors).toEqual([]);
    const before = up.requests.length;
    const res = await send(fresh, "detector-on", claude([...kept, text("user", "did it work?")]));
    expect(res.status).toBe(400);
    expect(up.requests.length).toBe(before);
  }, 20_000); // starts a sluice of its own: room on a loaded machine

  test("decoding switched on through the dashboard finds a base64 token in a kept message", async () => {
    await using fresh = await startSluice({
      upstream: up.url,
      config: { pipeline: { stages: { encoding_decode: { enabled: false } } } },
    });
    const kept = [
      ...history,
      text("user", `the config blob is ${Buffer.from(`token=${GH}`).toString("base64")}`),
    ];
    expect((await send(fresh, "decode-on", claude(kept))).status).toBe(200);
    const put = await api(fresh, "PUT", "/api/v1/pipeline", {
      stages: { encoding_decode: { enabled: true } },
    });
    expect(((await put.json()) as { errors: unknown[] }).errors).toEqual([]);
    const res = await send(fresh, "decode-on", claude([...kept, text("user", "did it work?")]));
    expect(res.status).toBe(400);
  }, 20_000); // starts a sluice of its own: room on a loaded machine

  test("an allowlist entry removed through the dashboard: the token of a kept message is blocked", async () => {
    await using fresh = await startSluice({ upstream: up.url });
    const added = await api(fresh, "POST", "/api/v1/allowlists", { type: "secrets", pattern: GH });
    expect(added.status).toBe(201);
    const { id } = (await added.json()) as { id: number };
    const kept = [...history, text("user", `deploy with ${GH}`)];
    expect((await send(fresh, "allow-removed", claude(kept))).status).toBe(200);
    expect((await api(fresh, "DELETE", `/api/v1/allowlists/${id}`)).status).toBe(200);
    const res = await send(fresh, "allow-removed", claude([...kept, text("user", "did it work?")]));
    expect(res.status).toBe(400);
  }, 20_000); // starts a sluice of its own: room on a loaded machine

  test("a token sent in passthrough is found in the history once the proxy is active again", async () => {
    await using fresh = await startSluice({ upstream: up.url });
    expect((await send(fresh, "mode", claude(history))).status).toBe(200);
    fresh.runtime.setMode("passthrough", "test");
    const withToken = [...history, text("user", `deploy with ${GH}`)];
    expect((await send(fresh, "mode", claude(withToken))).status).toBe(200);
    fresh.runtime.setMode("active", "test");
    const res = await send(fresh, "mode", claude([...withToken, text("user", "did it work?")]));
    expect(res.status).toBe(400);
  }, 20_000); // starts a sluice of its own: room on a loaded machine
});

describe("what the previous turn was", () => {
  test("a blocked turn sent again is blocked again", async () => {
    const withToken = [...history, text("user", `deploy with ${GH}`)];
    expect((await send(s, "blocked", claude(history))).status).toBe(200);
    expect((await send(s, "blocked", claude(withToken))).status).toBe(400);
    expect((await send(s, "blocked", claude(withToken))).status).toBe(400);
    expect((await send(s, "blocked", claude([...withToken, text("user", "retry")]))).status).toBe(400);
  });

  test("after a side request (a title) of the session, a token cut between the last kept message and a new one, or written into the kept history, is found", async () => {
    // A token of its own: earlier tests forward GH on purpose (in passthrough).
    const token = GH.replace("MDAw", "MTEx");
    const [head, tail] = [token.slice(0, 14), token.slice(14)];
    const title = (said: string) => ({
      model: "claude-haiku-4-5",
      system: [{ type: "text", text: "Name this coding session in two to five words." }],
      messages: [{ role: "user", content: `<session>\n${said}\n</session>` }],
      max_tokens: 16,
    });
    const kept = [...history, text("user", `remember this: ${head}`)];
    const cut = await turns(
      s,
      "titled-cut",
      [claude(kept), title("Fix the failing test")],
      claude([...kept, text("user", `${tail} is the rest`)]),
    );
    expect(cut.status).toBe(400);
    expect(await cut.text()).toContain(
      "github_pat at messages[2].content[0].text + messages[3].content[0].text",
    );
    const next = [...history, text("user", "Now run the tests.")];
    const edited = [text("user", `Fix it with ${token}`), ...next.slice(1), text("user", "and?")];
    const written = await turns(
      s,
      "titled-history",
      [claude(history), title("Fix the failing test"), claude(next), title("Run the tests")],
      claude(edited),
    );
    expect(written.status).toBe(400);
    expect(await written.text()).toContain("messages[0].content[0].text");
    expect(reached(tail)).toBe(false);
  });

  test("another client on the same session id gets its own verdict", async () => {
    expect((await send(s, "shared", claude(history))).status).toBe(200);
    const other = [text("user", `Fix it with ${GH}`), history[1]!];
    expect((await send(s, "shared", claude(other))).status).toBe(400);
    const split = [...history, text("user", `remember this: ${HEAD}`)];
    expect((await send(s, "shared", claude(split))).status).toBe(200);
    const res = await send(s, "shared", claude([...split, text("user", `${TAIL} is the rest`)]));
    expect(res.status).toBe(400);
  });
});

/**
 * Each turn one message after the same system prompt (a client that keeps no history, or Codex's
 * WebSocket turns): a token cut across two turns is found at the junction with the previous
 * payload's end, which joins the first text the session's segment memory does not hold.
 */
describe("a token cut across two turns once the segment memory forgot", () => {
  const chat = (content: string) => ({
    model: "gpt-4o",
    messages: [
      {
        role: "system",
        content: "You are a coding assistant working in the user's repository. Keep answers short.",
      },
      { role: "user", content },
    ],
  });
  async function say(via: InProcessSluice, session: string, content: string): Promise<number> {
    const res = await fetch(`${via.proxyUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-x", "session-id": session },
      body: JSON.stringify(chat(content)),
    });
    await res.arrayBuffer();
    return res.status;
  }
  /** Turns after the memory forgot: the last completes the token and must not leave. */
  async function afterForgetting(via: InProcessSluice, session: string) {
    expect(await say(via, session, "Now run the tests and show me the output.")).toBe(200);
    expect(await say(via, session, `remember this: ${HEAD}`)).toBe(200);
    const before = up.requests.length;
    expect(await say(via, session, `${TAIL} is the rest of it`)).toBe(400);
    expect(up.requests.length).toBe(before);
  }

  test("expired after an idle hour", async () => {
    await using fresh = await startSluice({ upstream: up.url, dashboard: false });
    expect(await say(fresh, "idle", "Fix the failing test in src/clock.ts please.")).toBe(200);
    setSystemTime(new Date(Date.now() + 61 * 60_000));
    try {
      await afterForgetting(fresh, "idle");
    } finally {
      setSystemTime();
    }
  }, 20_000); // starts a sluice of its own: room on a loaded machine

  test("taken by another session", async () => {
    await using fresh = await startSluice({
      upstream: up.url,
      dashboard: false,
      config: { dedup: { max_conversations: 1 } },
    });
    expect(await say(fresh, "taken", "Fix the failing test in src/clock.ts please.")).toBe(200);
    expect(await say(fresh, "intruder", "Something else entirely, in another session.")).toBe(200);
    await afterForgetting(fresh, "taken");
  }, 20_000); // starts a sluice of its own: room on a loaded machine

  test("a fingerprint dropped for the limit", async () => {
    await using fresh = await startSluice({
      upstream: up.url,
      dashboard: false,
      config: { dedup: { max_hashes_per_conversation: 2 } },
    });
    expect(await say(fresh, "dropped", "Fix the failing test in src/clock.ts please.")).toBe(200);
    await afterForgetting(fresh, "dropped");
  }, 20_000); // starts a sluice of its own: room on a loaded machine

  test("over a WebSocket, taken by another session", async () => {
    await using fresh = await startSluice({
      upstream: up.url,
      dashboard: false,
      config: { dedup: { max_conversations: 1 } },
    });
    const ws = await openWebSocket(fresh.proxyUrl, "/v1/responses", {
      authorization: "Bearer sk-test",
      "session-id": "ws-taken",
    });
    const frame = (t: string) =>
      JSON.stringify({
        type: "response.create",
        model: "gpt-5-codex",
        instructions: "You are Codex, a coding agent working in the user's repository. Keep answers short.",
        input: [{ type: "message", role: "user", content: [{ type: "input_text", text: t }] }],
      });
    /** Send a frame; the frame the upstream echoed, or sluice's answer when it did not forward it. */
    const turn = (t: string) => {
      const answer = new Promise<string>((resolve) =>
        ws.addEventListener("message", (e) => resolve(String(e.data)), { once: true }),
      );
      ws.send(frame(t));
      return answer;
    };
    expect(await turn("Fix the failing test in src/clock.ts please.")).toBe(
      frame("Fix the failing test in src/clock.ts please."),
    );
    expect(await say(fresh, "intruder", "Something else entirely, in another session.")).toBe(200);
    for (const t of ["Now run the tests and show me the output.", `remember this: ${HEAD}`])
      expect(await turn(t)).toBe(frame(t));
    const frames = up.wsMessages.length;
    expect(JSON.parse(await turn(`${TAIL} is the rest of it`))).toMatchObject({
      type: "error",
      error: { code: "blocked_by_sluice" },
    });
    expect(up.wsMessages.length).toBe(frames);
    ws.close();
  }, 20_000); // starts a sluice of its own: room on a loaded machine
});

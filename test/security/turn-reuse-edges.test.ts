/**
 * Attack: more ways to make the parse of a turn from the previous one (src/proxy/turns.ts) read a
 * body otherwise than the upstream does. Each sends a first turn, then a second whose bytes share
 * most of the first's, with a token placed where a wrong cut or a stale value would hide it: an
 * edit that starts inside a multi-byte character, a backslash or an escaped quote at the cut, a
 * number that grows at the cut, a byte order mark, a gzip or UTF-16 body after a plain one, the
 * root key `messages` written with an escape, a nested `messages`, a previous turn that was
 * blocked, two turns of one conversation in flight at once, two clients under one conversation key,
 * a setting changed between turns; and bodies whose parsed values are far larger than their bytes,
 * which must not stay in memory. The stand-in upstream must never see the token.
 */

import { heapStats } from "bun:jsc";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

const GH = ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"].join("");

let up: Upstream;
let s: InProcessSluice;
/** Requests of session "slow" wait for this before the upstream answers. */
let release: () => void = () => {};
let held: Promise<void> = Promise.resolve();
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", async (r) => {
    if (r.headers.get("x-claude-code-session-id") === "slow") await held;
    return json({ id: "msg" });
  });
  s = await startSluice({ upstream: up.url, dashboard: false });
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

const dec = new TextDecoder();
const reached = (needle: string) => up.requests.some((r) => dec.decode(r.body).includes(needle));

type Message = { role: string; content: unknown };
function body(messages: Message[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: "claude-sonnet-4-5",
    messages,
    system: [{ type: "text", text: "You are Claude Code, a coding assistant. ".repeat(20) }],
    tools: [{ name: "Bash", description: "Run a command.", input_schema: { type: "object" } }],
    max_tokens: 64,
    ...extra,
  };
}
const text = (role: string, t: string): Message => ({ role, content: [{ type: "text", text: t }] });
const history = [
  text("user", "Fix the failing test in src/clock.ts"),
  text("assistant", "The expiry test uses the wall clock; I will inject one."),
];

async function send(
  session: string,
  payload: string | Uint8Array<ArrayBuffer>,
  headers: Record<string, string> = {},
  via: InProcessSluice = s,
): Promise<Response> {
  return fetch(`${via.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "k",
      "x-claude-code-session-id": session,
      ...headers,
    },
    body: payload,
  });
}

const reparsedSoFar = (via: InProcessSluice = s) => via.runtime.proxy.turnStats().reparsed;

/** A first turn that passes, then `second`; how many bodies were parsed from a previous turn. */
async function twoTurns(
  session: string,
  first: string | Uint8Array<ArrayBuffer>,
  second: string | Uint8Array<ArrayBuffer>,
  headers: [Record<string, string>, Record<string, string>] = [{}, {}],
) {
  const before = reparsedSoFar();
  const a = await send(session, first, headers[0]);
  expect(a.status).toBe(200);
  await a.arrayBuffer();
  const b = await send(session, second, headers[1]);
  return { res: b, reparsed: reparsedSoFar() - before };
}

async function blocked(res: Response, path?: string) {
  expect(res.status).toBe(400);
  const t = await res.text();
  expect(t).toContain("github_pat");
  if (path) expect(t).toContain(path);
  expect(reached(GH)).toBe(false);
}

describe("the bytes at the cut", () => {
  test("an edit that starts inside a multi-byte character of a kept message", async () => {
    // "€" is E2 82 AC, "₭" is E2 82 AD: the bodies differ first at the third byte of a character.
    const kept = [text("user", "It costs 10 € a month"), history[1]!];
    const first = JSON.stringify(body(kept));
    const second = JSON.stringify(
      body([text("user", `It costs 10 ₭ a month, key ${GH}`), history[1]!, text("user", "go on")]),
    );
    const { res, reparsed } = await twoTurns("utf8-cut", first, second);
    expect(reparsed).toBe(1);
    await blocked(res, "messages[0].content[0].text");
  });

  test("a backslash ending the last kept message and an escaped quote opening the new one", async () => {
    const kept = [...history, text("user", "the file is C:\\build\\")];
    const first = JSON.stringify(body(kept));
    const second = JSON.stringify(body([...kept, text("user", `"\\" ${GH}`)]));
    // The kept message's string ends in an escaped backslash right before its closing quote.
    expect(first).toContain('C:\\\\build\\\\"');
    const { res, reparsed } = await twoTurns("backslash-cut", first, second);
    expect(reparsed).toBe(1);
    await blocked(res, "messages[3].content[0].text");
  });

  test("a number of the last kept message that grows at the cut (1 to 12)", async () => {
    const kept = [...history, { role: "user", content: [{ type: "text", text: "part", index: 1 }] }];
    const first = JSON.stringify(body(kept));
    const second = first.replace('"index":1}', `"index":12,"note":"${GH}"}`);
    expect(JSON.parse(second).messages[2].content[0].note).toBe(GH);
    const { res, reparsed } = await twoTurns("number-cut", first, second);
    expect(reparsed).toBe(1);
    await blocked(res, "messages[2].content[0].note");
  });

  test("a byte order mark before either turn: parsed whole", async () => {
    const bom = "\ufeff";
    const first = bom + JSON.stringify(body(history));
    const second = bom + JSON.stringify(body([text("user", `use ${GH}`), history[1]!]));
    const one = await twoTurns("bom", first, second);
    expect(one.reparsed).toBe(0);
    await blocked(one.res);
    // A plain turn after one with a mark, and one with a mark after a plain one.
    const plain = JSON.stringify(body([...history, text("user", `and ${GH}`)]));
    const two = await twoTurns("bom-then-plain", first, plain);
    await blocked(two.res);
    const three = await twoTurns("plain-then-bom", JSON.stringify(body(history)), bom + plain);
    expect(three.reparsed).toBe(0);
    await blocked(three.res);
  });
});

describe("bodies that are not the bytes the upstream reads as text", () => {
  test("a gzip turn after a plain one is decoded and parsed whole, and the plain turn after it still reads right", async () => {
    const first = JSON.stringify(body(history));
    const zipped = new Uint8Array(gzipSync(JSON.stringify(body([text("user", `try ${GH}`), history[1]!]))));
    const { res, reparsed } = await twoTurns("gzip", first, zipped, [{}, { "content-encoding": "gzip" }]);
    expect(reparsed).toBe(0);
    await blocked(res);
    const before = reparsedSoFar();
    const third = await send("gzip", JSON.stringify(body([history[0]!, text("assistant", `ok ${GH}`)])));
    expect(reparsedSoFar() - before).toBe(1);
    await blocked(third, "messages[1].content[0].text");
  });

  test("a UTF-16 turn after a plain one is decoded and parsed whole", async () => {
    const first = JSON.stringify(body(history));
    const utf16 = new Uint8Array(
      Buffer.from(JSON.stringify(body([...history, text("user", `key ${GH}`)])), "utf16le"),
    );
    const { res, reparsed } = await twoTurns("utf16", first, utf16, [
      {},
      { "content-type": "application/json; charset=utf-16le" },
    ]);
    expect(reparsed).toBe(0);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("github_pat");
    expect(up.requests.some((r) => Buffer.from(r.body).toString("utf16le").includes(GH))).toBe(false);
  });
});

describe("the messages key", () => {
  test("written with an escape, then a second one added by the new part: ambiguous", async () => {
    const escaped = (o: Record<string, unknown>) =>
      JSON.stringify(o).replace('"messages"', '"mess\\u0061ges"');
    const first = escaped(body(history));
    const whole = escaped(body([...history, text("user", "hello")]));
    const close = whole.indexOf('],"system"');
    const second = `${whole.slice(0, close)}],"messages":[{"role":"user","content":"${GH}"}${whole.slice(close)}`;
    expect(JSON.parse(second).messages[0].content).toBe(GH);
    const { res, reparsed } = await twoTurns("escaped-key", first, second);
    expect(reparsed).toBe(0);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("twice");
    expect(reached(GH)).toBe(false);
  });

  test("written with an escape, a token in a kept message is found", async () => {
    const escaped = (o: Record<string, unknown>) =>
      JSON.stringify(o).replace('"messages"', '"mess\\u0061ges"');
    const first = escaped(body(history));
    const second = escaped(body([text("user", `with ${GH}`), history[1]!, text("user", "go")]));
    const { res, reparsed } = await twoTurns("escaped-key-2", first, second);
    expect(reparsed).toBe(1);
    await blocked(res, "messages[0].content[0].text");
  });

  test("a nested messages array, before and after the root's, edited with a token", async () => {
    const before = (m: unknown[], root: Message[]) =>
      JSON.stringify({ metadata: { messages: m }, ...body(root) });
    const one = await twoTurns(
      "nested-before",
      before(["a"], history),
      before([`a ${GH}`], [...history, text("user", "go")]),
    );
    expect(one.reparsed).toBe(0);
    await blocked(one.res, "metadata.messages[0]");
    const after = (m: unknown[], root: Message[]) => JSON.stringify(body(root, { extra: { messages: m } }));
    const two = await twoTurns("nested-after", after(["a"], history), after([`a ${GH}`], history));
    expect(two.reparsed).toBe(0);
    await blocked(two.res, "extra.messages[0]");
  });
});

describe("the previous turn, and other requests", () => {
  test("a previous turn that was blocked: the history still holds the token, and blocks again", async () => {
    const kept = [text("user", `deploy with ${GH}`), history[1]!];
    const first = await send("was-blocked", JSON.stringify(body(kept)));
    await blocked(first);
    const before = reparsedSoFar();
    const second = await send("was-blocked", JSON.stringify(body([...kept, text("user", "did it work?")])));
    expect(reparsedSoFar() - before).toBe(1);
    await blocked(second, "messages[0].content[0].text");
  });

  test("two turns of one conversation in flight at once", async () => {
    held = new Promise((r) => {
      release = r;
    });
    const firstSent = send("slow", JSON.stringify(body(history)));
    await up.nextRequest();
    const before = reparsedSoFar();
    const second = await send("slow", JSON.stringify(body([text("user", `now ${GH}`), history[1]!])));
    expect(reparsedSoFar() - before).toBe(1);
    await blocked(second, "messages[0].content[0].text");
    release();
    expect((await firstSent).status).toBe(200);
  });

  test("two clients under one conversation key, taking turns", async () => {
    const a = [text("user", "Client A's task"), text("assistant", "A's answer")];
    const b = [text("user", "Client B's task, a different one"), text("assistant", "B's answer")];
    const ua = { "user-agent": "claude-cli/2.0.0" };
    for (const [i, turn] of [a, b, [...a, text("user", "more")], [...b, text("user", `B ${GH}`)]].entries()) {
      const res = await send("shared", JSON.stringify(body(turn)), ua);
      if (i < 3) {
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      } else await blocked(res, "messages[2].content[0].text");
    }
  });

  test("a setting changed between two turns applies to the kept history (redact, then block)", async () => {
    await using fresh = await startSluice({
      upstream: up.url,
      dashboard: false,
      config: { detectors: { secrets: { action: "redact" } } },
    });
    const kept = [text("user", `deploy with ${GH}`), history[1]!];
    const first = await send("setting", JSON.stringify(body(kept)), {}, fresh);
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    expect(reached(GH)).toBe(false);
    const reload = await fresh.runtime.reload({ detectors: { secrets: { action: "block" } } }, "api");
    expect(reload.ok).toBe(true);
    const before = reparsedSoFar(fresh);
    const second = await send("setting", JSON.stringify(body([...kept, text("user", "again")])), {}, fresh);
    expect(reparsedSoFar(fresh) - before).toBe(1);
    await blocked(second, "messages[0].content[0].text");
  });
});

describe("memory", () => {
  test("bodies whose parsed values are many times their bytes are not kept", async () => {
    // `{},` takes 3 bytes of a body and ~75 bytes of heap once parsed: 16 conversations of 1 MB
    // kept as parsed values would hold over 400 MB.
    const dense = JSON.stringify(body([text("user", "hi")], { metadata: { list: Array(400_000).fill({}) } }));
    expect(dense.length).toBeGreaterThan(1_000_000);
    Bun.gc(true);
    const heap0 = heapStats().heapSize;
    for (let i = 0; i < 16; i++) {
      const res = await send(`dense-${i}`, dense);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    Bun.gc(true);
    const grown = heapStats().heapSize - heap0;
    expect(grown).toBeLessThan(160 * 1024 * 1024);
    // The next turn of such a conversation is parsed whole, and read right.
    const next = dense.replace('"text":"hi"', `"text":"hi ${GH}"`);
    await blocked(await send("dense-15", next), "messages[0].content[0].text");
  }, 60_000);
});

/**
 * The session context of one of a conversation's last two requests given again (src/proxy/session.ts,
 * `SessionContexts`): only while the headers, the address, the key and every body value the context
 * is read from are the same; anything else is worked out again, and a session named by a fingerprint
 * of the conversation's opening always is. A side request between two turns keeps its own.
 */
import { expect, test } from "bun:test";
import { SessionContexts, type SessionInput, sessionContext } from "../../src/proxy/session.ts";

const headers = () =>
  new Headers({ "user-agent": "claude-cli/2.1.197 (external, sdk-cli)", "x-api-key": "sk-ant-api03-x" });

function body(userId: string, cwd = "/home/dev/app") {
  return {
    model: "claude-sonnet-4-5",
    metadata: { user_id: userId },
    system: [{ type: "text", text: `Primary working directory: ${cwd}\nCurrent branch: main` }],
    messages: [
      { role: "user", content: "Fix the test" },
      { role: "assistant", content: "Which one?" },
      { role: "user", content: "The clock test" },
    ],
  };
}
const USER =
  "user_abc_account_0c5a3b1e-4f2d-4a8e-9b7c-1d2e3f4a5b6c_session_7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a";

const input = (json: unknown, h = headers()): SessionInput => ({
  provider: "anthropic",
  pathname: "/v1/messages",
  headers: h,
  json,
  sourceIp: "127.0.0.1",
  hmacKey: null,
});

test("the same inputs give the kept context; a next turn that keeps the body's values (and first messages) too", () => {
  const contexts = new SessionContexts();
  const first = body(USER);
  const a = contexts.get("c", input(first));
  expect(a).toEqual(sessionContext(input(first)));
  const next = { ...first, messages: [...first.messages, { role: "assistant", content: "Done" }] };
  // The body's length changes every turn.
  const h = headers();
  h.set("content-length", "1234");
  expect(contexts.get("c", input(next, h))).toBe(a);
});

test("a changed header, system prompt, metadata or first message is worked out again", () => {
  const contexts = new SessionContexts();
  const first = body(USER);
  const a = contexts.get("c", input(first));
  const moved = body(USER, "/home/dev/other");
  const b = contexts.get("c", input({ ...first, system: moved.system }));
  expect(b).not.toBe(a);
  expect(b.working_directory).toBe("/home/dev/other");
  const h = headers();
  h.set("x-claude-code-session-id", "another");
  expect(contexts.get("c", input(first, h)).session_id).toBe("another");
  const c = contexts.get("c", input({ ...first, metadata: { user_id: USER.replace("7d8e", "aaaa") } }));
  expect(c).toEqual(sessionContext(input({ ...first, metadata: { user_id: USER.replace("7d8e", "aaaa") } })));
  const d = contexts.get("c", input({ ...first, messages: [{ role: "user", content: "Another task" }] }));
  expect(d).toEqual(
    sessionContext(input({ ...first, messages: [{ role: "user", content: "Another task" }] })),
  );
});

test("a session named by a fingerprint of the opening is worked out every time", () => {
  const contexts = new SessionContexts();
  const json = { model: "m", messages: [{ role: "user", content: "hello" }] };
  const a = contexts.get("c", input(json));
  expect(a.session_id.startsWith("fp:")).toBe(true);
  expect(contexts.get("c", input(json))).not.toBe(a);
});

test("a side request between two turns (a title) leaves the turn's context to be given again", () => {
  const contexts = new SessionContexts();
  const first = body(USER);
  const a = contexts.get("c", input(first));
  const title = {
    model: "claude-haiku-4-5",
    metadata: { user_id: USER },
    system: [{ type: "text", text: "Name this coding session in two to five words." }],
    messages: [{ role: "user", content: "<session>\nThe clock test\n</session>" }],
  };
  const t = contexts.get("c", input(title));
  expect(t).toEqual(sessionContext(input(title)));
  expect(t).not.toBe(a);
  const next = { ...first, messages: [...first.messages, { role: "assistant", content: "Done" }] };
  expect(contexts.get("c", input(next))).toBe(a);
  expect(contexts.get("c", input(title))).toBe(t);
  // A third body pushes out the one least recently given.
  const other = { ...first, system: body(USER, "/home/dev/other").system };
  expect(contexts.get("c", input(other)).working_directory).toBe("/home/dev/other");
  expect(contexts.get("c", input(title))).toBe(t);
  expect(contexts.get("c", input(next))).not.toBe(a);
});

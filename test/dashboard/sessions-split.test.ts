/**
 * Separate runs of a tool are separate sessions, and the turns of one run are one, through the real
 * proxy with recorded request bodies: Gemini CLI signed in with an API key sends no session id (two
 * runs differ in their first prompt), Claude Code names its session in `metadata.user_id`. Each
 * session keeps the project and branch the tool named, with or without findings. What tells runs
 * apart without a session id, the conversation's opening, is checked on each provider's shape.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openingText } from "../../src/proxy/session.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { startUpstream, type Upstream } from "../helpers/upstream.ts";
import {
  answerProviders,
  claudeCodeBody,
  claudeCodeSession,
  geminiCliBody,
  sendClaudeCode,
  sendGeminiCli,
} from "../web/seed.ts";

interface Session {
  session_id: string;
  client: string | null;
  request_count: number;
  working_directory: string | null;
  git_branch: string | null;
}

let up: Upstream;
let s: InProcessSluice;

beforeAll(async () => {
  up = await startUpstream();
  answerProviders(up);
  s = await startSluice({ upstream: up.url });
});
afterAll(async () => {
  await s?.stop();
  await up?.[Symbol.asyncDispose]?.();
});

async function sessions(): Promise<Session[]> {
  await s.runtime.store.flush();
  const r = await fetch(`${s.dashboardUrl}/api/v1/sessions?limit=100`);
  return ((await r.json()) as { sessions: Session[] }).sessions;
}

async function ok(res: Promise<Response>): Promise<void> {
  const r = await res;
  await r.arrayBuffer();
  expect(r.status).toBe(200);
}

test("two Gemini CLI runs are two sessions; a run's routing call and later turns stay in its session", async () => {
  const before = new Set((await sessions()).map((x) => x.session_id));
  // Run 1: the routing call, the conversation, then a second turn (the history resent).
  await ok(sendGeminiCli(s.proxyUrl, "route", geminiCliBody("route", "say hi")));
  const first = geminiCliBody("stream", "say hi");
  await ok(sendGeminiCli(s.proxyUrl, "stream", first));
  const contents = first.contents as unknown[];
  await ok(
    sendGeminiCli(s.proxyUrl, "stream", {
      ...first,
      contents: [
        ...contents,
        { role: "model", parts: [{ text: "Hi! What are we working on?" }] },
        { role: "user", parts: [{ text: "list the files here" }] },
      ],
    }),
  );
  // Run 2: the same tool, key and directory, another first prompt.
  await ok(sendGeminiCli(s.proxyUrl, "route", geminiCliBody("route", "explain the build script")));
  await ok(sendGeminiCli(s.proxyUrl, "stream", geminiCliBody("stream", "explain the build script")));

  const added = (await sessions()).filter((x) => !before.has(x.session_id));
  expect(added.map((x) => x.client)).toEqual(["gemini-cli", "gemini-cli"]);
  expect(added.map((x) => x.request_count).sort()).toEqual([2, 3]);
  // Each keeps the workspace directory its session context names.
  for (const x of added) expect(x.working_directory).toBe("/tmp/logins-rec/work");
});

test("two turns of one Claude Code run are one session, with its project and branch", async () => {
  const body = claudeCodeBody();
  const id = claudeCodeSession(body);
  await ok(sendClaudeCode(s.proxyUrl, body));
  await ok(
    sendClaudeCode(s.proxyUrl, {
      ...body,
      messages: [
        ...body.messages,
        { role: "assistant", content: [{ type: "text", text: "Both checks pass now." }] },
        { role: "user", content: [{ type: "text", text: "commit it" }] },
      ],
    }),
  );
  const mine = (await sessions()).filter((x) => x.session_id === id);
  expect(mine).toHaveLength(1);
  expect(mine[0]).toMatchObject({
    client: "claude-code",
    request_count: 2,
    working_directory: "/home/dev/projects/inventory-service",
    git_branch: "feature/stock-reservations",
  });
});

test("a conversation's opening is what its user said first, the same in every later turn of every shape", () => {
  const user = (text: string) => ({
    role: "user",
    content: [{ type: "text", text, cache_control: { type: "ephemeral" } }],
  });
  // Anthropic Messages: the cache marker moves to the last turn; the opening stays.
  const first = { system: "be brief", messages: [user("fix the build")] };
  const later = {
    system: "be brief",
    messages: [
      { role: "user", content: [{ type: "text", text: "fix the build" }] },
      { role: "assistant", content: "done" },
      user("now the tests"),
    ],
  };
  expect(openingText(first)).toBe("fix the build");
  expect(openingText(later)).toBe(openingText(first));
  // OpenAI Responses: instructions first, then the user's messages; reasoning and tool calls end it.
  const input = [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "rules" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "<env/>" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "list files" }] },
  ];
  const responsesLater = [
    ...input,
    { type: "reasoning", summary: [{ type: "summary_text", text: "thinking" }] },
    { type: "function_call", name: "ls", arguments: "{}" },
    { type: "function_call_output", output: "a b" },
    { type: "message", role: "user", content: [{ type: "input_text", text: "thanks" }] },
  ];
  expect(openingText({ input })).toBe("<env/>\nlist files");
  expect(openingText({ input: responsesLater })).toBe(openingText({ input }));
  expect(openingText({ input: "just a string" })).toBe("just a string");
  // Gemini: the routing call splits the first turn in two contents, the conversation not.
  expect(openingText(geminiCliBody("route", "say hi"))).toBe(openingText(geminiCliBody("stream", "say hi")));
  expect(openingText(geminiCliBody("stream", "say hi"))).not.toBe(
    openingText(geminiCliBody("stream", "say bye")),
  );
  // Nothing said: nothing to tell runs apart by.
  expect(openingText({ model: "m" })).toBe("");
  expect(openingText(null)).toBe("");
});

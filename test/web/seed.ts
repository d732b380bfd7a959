/**
 * Seed a running sluice the way users do: real provider requests with secrets in them, sent through
 * the proxy to the stand-in upstream. Secret-looking values are assembled at run time.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { anthropicMessage, json, type Upstream } from "../helpers/upstream.ts";

const FIXTURES = join(import.meta.dir, "../fixtures");
const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));

/** A fresh, valid-looking AWS access key id (never a real one). */
export function fakeAwsKey(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let s = "";
  for (let i = 0; i < 16; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
  return `AK${"IA"}${s}`;
}

export function fakeGithubToken(): string {
  const a = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  let s = "";
  for (let i = 0; i < 36; i++) s += a[Math.floor(Math.random() * a.length)];
  return `gh${"p_"}${s}`;
}

/** Answer the three providers' endpoints on the stand-in upstream. */
export function answerProviders(up: Upstream) {
  up.on("POST", "/v1/messages", () => json(anthropicMessage("ok", "claude-sonnet-4-5")));
  up.on("POST", "/v1/chat/completions", () =>
    json({
      id: "chatcmpl-1",
      object: "chat.completion",
      model: "gpt-5",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    }),
  );
  up.on(
    "POST",
    (p) => p.includes(":generateContent"),
    () => json({ candidates: [{ content: { role: "model", parts: [{ text: "ok" }] } }] }),
  );
  up.on(
    "POST",
    (p) => p.includes(":streamGenerateContent"),
    () =>
      new Response(
        `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP" }] })}\r\n\r\n`,
        { headers: { "content-type": "text/event-stream" } },
      ),
  );
}

/** A Claude Code request body: the recorded turn of `test/fixtures/claude-code-request.json`. */
export interface ClaudeCodeBody {
  messages: Array<{ role: string; content: unknown }>;
  metadata: { user_id: string };
  [k: string]: unknown;
}

/** The recorded Claude Code turn (working directory and branch in its environment block), a fresh copy. */
export function claudeCodeBody(): ClaudeCodeBody {
  return fixture("claude-code-request.json");
}

/** The session id Claude Code put in a body's `metadata.user_id`. */
export function claudeCodeSession(body: ClaudeCodeBody): string {
  return (JSON.parse(body.metadata.user_id) as { session_id: string }).session_id;
}

/**
 * Send `body` as Claude Code does: the headers of the recorded Claude Code request
 * (`test/fixtures/logins/claude-oauth-messages.meta.json`) with its session id and a test token.
 */
export function sendClaudeCode(proxyUrl: string, body: ClaudeCodeBody) {
  const meta = fixture("logins/claude-oauth-messages.meta.json") as {
    path: string;
    headers: Record<string, string>;
  };
  const headers = { ...meta.headers };
  for (const k of ["connection", "accept-encoding"]) delete headers[k];
  headers.authorization = `Bearer sk-ant-${"oat01"}-test-token`;
  headers["x-claude-code-session-id"] = claudeCodeSession(body);
  return fetch(`${proxyUrl}${meta.path}`, {
    method: "POST",
    headers,
    body: JSON.stringify({ ...body, stream: false }),
  });
}

/**
 * A Gemini CLI request signed in with an API key (`GOOGLE_GEMINI_BASE_URL`): the recorded request of
 * `test/fixtures/logins/gemini-code-assist-*` without the Code Assist wrapper and its session id,
 * which this sign-in mode does not send. `kind` is the conversation (`stream`) or the routing call
 * before it (`route`); `prompt` replaces the recorded first prompt ("say hi").
 */
export function geminiCliBody(kind: "stream" | "route", prompt: string): Record<string, unknown> {
  const name = kind === "stream" ? "stream-generate-content" : "generate-content";
  const wrapped = fixture(`logins/gemini-code-assist-${name}.body.json`) as {
    request: Record<string, unknown> & { contents: Array<{ parts: Array<{ text?: string }> }> };
  };
  const { session_id: _, ...request } = wrapped.request;
  const contents = JSON.parse(
    JSON.stringify(wrapped.request.contents).replaceAll('"say hi"', JSON.stringify(prompt)),
  );
  return { ...request, contents };
}

/** Send a Gemini CLI body as Gemini CLI 0.61 does with `GEMINI_API_KEY` (one User-Agent per run). */
export function sendGeminiCli(proxyUrl: string, kind: "stream" | "route", body: Record<string, unknown>) {
  const path =
    kind === "stream"
      ? "gemini-2.5-pro:streamGenerateContent?alt=sse"
      : "gemini-2.5-flash-lite:generateContent";
  return fetch(`${proxyUrl}/v1beta/models/${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-goog-api-key": `AI${"za"}TestKeyNotReal`,
      "x-goog-api-client": "gl-node/20.20.2",
      "user-agent": "GeminiCLI-tui/0.61.0/gemini-2.5-pro (linux; x64; terminal)",
    },
    body: JSON.stringify(body),
  });
}

/** One Claude Code-shaped request carrying `text`. */
export function sendAnthropic(proxyUrl: string, text: string, sessionId = crypto.randomUUID()) {
  return fetch(`${proxyUrl}/v1/messages?beta=true`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": `sk-ant-${"test"}-key`,
      "anthropic-version": "2023-06-01",
      "user-agent": "claude-cli/2.1.328 (external, sdk-cli)",
      "x-app": "cli",
      "x-claude-code-session-id": sessionId,
    },
    body: JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 64,
      messages: [{ role: "user", content: [{ type: "text", text }] }],
    }),
  });
}

export function sendOpenAI(proxyUrl: string, text: string) {
  return fetch(`${proxyUrl}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer sk-${"test"}-openai-key`,
      "user-agent": "codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)",
      "session-id": crypto.randomUUID(),
    },
    body: JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content: text }] }),
  });
}

export function sendGemini(proxyUrl: string, text: string) {
  return fetch(`${proxyUrl}/v1beta/models/gemini-2.5-pro:generateContent`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-goog-api-key": `AI${"za"}TestKeyNotReal`,
      "user-agent": "GeminiCLI-tui/0.61.0/gemini-2.5-pro (linux; x64; terminal)",
    },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text }] }] }),
  });
}

/** A handful of requests from three tools with secrets and personal data; returns the statuses. */
export async function seed(proxyUrl: string): Promise<number[]> {
  const res = await Promise.all([
    sendAnthropic(proxyUrl, `deploy with ${fakeAwsKey()} please`),
    sendAnthropic(proxyUrl, `token ${fakeGithubToken()} and mail jane.doe@acme-corp.io`),
    sendOpenAI(proxyUrl, `call me at jane.doe@acme-corp.io, key ${fakeAwsKey()}`),
    sendGemini(proxyUrl, `here is ${fakeGithubToken()}`),
    sendAnthropic(proxyUrl, "just a harmless question about TypeScript generics"),
  ]);
  await Promise.all(res.map((r) => r.arrayBuffer()));
  return res.map((r) => r.status);
}

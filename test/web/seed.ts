/**
 * Seed a running sluice the way users do: real provider requests with secrets in them, sent through
 * the proxy to the stand-in upstream. Secret-looking values are assembled at run time.
 */
import { anthropicMessage, json, type Upstream } from "../helpers/upstream.ts";

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

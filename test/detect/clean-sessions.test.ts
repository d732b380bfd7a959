/**
 * A clean session of each coding tool raises no finding: every request Claude Code, Codex and
 * Gemini CLI sent for "say hi" (test/fixtures, recorded from the real tools) goes through the proxy
 * with the built-in rules, and sluice records nothing. The tools' own prompts name sensitive files
 * in prose ("sensitive files (.env, credentials)") and carry version strings that look like
 * addresses ("cc_version=2.1.197.123"); none of that is a leak.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Finding } from "../../src/core/types.ts";
import { recorded } from "../helpers/recorded.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

let up: Upstream;
let s: InProcessSluice;
const findings: Finding[] = [];

beforeAll(async () => {
  up = await startUpstream();
  up.on(
    "POST",
    (p) => p.startsWith("/v1internal:"),
    () => json({ response: {} }),
  );
  up.on("POST", "/backend-api/codex/responses", () => json({ type: "response.completed" }));
  up.on(
    "POST",
    (p) => p.startsWith("/v1/messages"),
    () => json({ id: "msg_1", type: "message", content: [] }),
  );
  up.ws("/backend-api/codex/responses", {
    message(ws) {
      ws.send(JSON.stringify({ type: "response.completed" }));
    },
  });
  s = await startSluice({ upstream: up.url });
  s.runtime.bus.on("finding", (e) => findings.push(e.finding));
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

/** Sends one recorded request through the proxy; the findings it raised (rule and path only). */
async function through(name: string, credential: string): Promise<string[]> {
  const r = recorded(name);
  const mark = findings.length;
  const before = up.requests.length;
  const res = await fetch(`${s.proxyUrl}${r.path}`, {
    method: r.method,
    headers: r.headers(credential),
    body: r.method === "GET" ? undefined : r.body,
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  expect(up.requests.length).toBe(before + 1);
  // Findings are emitted before the request is forwarded: all of this request's are in by now.
  return findings.slice(mark).map((f) => `${f.rule} at ${f.path}`);
}

describe("a clean session raises no finding", () => {
  test("Claude Code (API key): the recorded request with its system prompt and tools", async () => {
    const body = readFileSync(join(import.meta.dir, "../fixtures/claude-code-request.json"));
    const mark = findings.length;
    const res = await fetch(`${s.proxyUrl}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": "test-key",
        "anthropic-version": "2023-06-01",
        "user-agent": "claude-cli/2.1.197 (external, cli)",
      },
      body,
    });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    expect(findings.slice(mark).map((f) => `${f.rule} at ${f.path}`)).toEqual([]);
  });

  test("Claude Code on a subscription: its Bash tool description names .env and credentials.json", async () => {
    const r = recorded("claude-oauth-messages");
    const text = new TextDecoder().decode(r.body);
    expect(text).toContain("sensitive files (.env, credentials)");
    expect(text).toContain("cc_version=2.1.197.123");
    expect(await through("claude-oauth-messages", "oauth-token")).toEqual([]);
  });

  test("Gemini CLI signed in with Google: every call, system instruction and tools included", async () => {
    for (const name of [
      "gemini-code-assist-load-code-assist",
      "gemini-code-assist-retrieve-user-quota",
      "gemini-code-assist-list-experiments",
      "gemini-code-assist-generate-content",
      "gemini-code-assist-stream-generate-content",
    ])
      expect({ name, found: await through(name, "ya29.test-token") }).toEqual({ name, found: [] });
  });

  test("Codex signed in with ChatGPT: the Responses body and both WebSocket frames", async () => {
    expect(await through("codex-chatgpt-responses", "chatgpt-access-token")).toEqual([]);
    const upgrade = recorded("codex-chatgpt-ws-upgrade");
    const headers = upgrade.headers("chatgpt-access-token");
    for (const k of ["connection", "upgrade", "sec-websocket-version", "sec-websocket-extensions"])
      delete headers[k];
    const ws = await new Promise<WebSocket>((resolve, reject) => {
      const w = new WebSocket(`${s.proxyUrl.replace("http", "ws")}${upgrade.path}`, {
        headers,
      } as unknown as string[]);
      w.onopen = () => resolve(w);
      w.onerror = () => reject(new Error("websocket failed to open"));
    });
    const mark = findings.length;
    const before = up.wsMessages.length;
    for (const name of ["codex-chatgpt-ws-frame-prewarm", "codex-chatgpt-ws-frame-turn"]) {
      const frame = recorded(name, "codex-chatgpt-ws-upgrade");
      const answer = new Promise<void>((r) => ws.addEventListener("message", () => r(), { once: true }));
      ws.send(new TextDecoder().decode(frame.body));
      await answer;
    }
    ws.close();
    expect(up.wsMessages.length).toBe(before + 2);
    expect(findings.slice(mark).map((f) => `${f.rule} at ${f.path}`)).toEqual([]);
  });
});

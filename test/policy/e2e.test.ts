/**
 * End to end through the proxy with the real scanner and the community rules, driven by the official
 * SDKs (and raw HTTP where byte-exactness matters): block (provider-shaped 400 or 403, upstream never sees
 * the request), redact (upstream receives the placeholder, JSON parses, nothing else changed),
 * alert/log (forwarded unchanged, finding emitted), a secret from turn 1 still blocked in turn 5, a
 * secret inside base64, and a secret in a Codex WebSocket frame.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import type { Finding } from "../../src/core/types.ts";
import { type InProcessSluice, openWebSocket, startSluice } from "../helpers/sluice.ts";
import { anthropicMessage, json, startUpstream, type Upstream } from "../helpers/upstream.ts";

// Fake credentials assembled at run time (never real, never a literal in the source).
const AWS_ID = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");
const GH = ["ghp", "_", "EXAMPLE0fake1Key2For3Tests4Only5sluz"].join("");
const TICKET = "SLT-123456-ABCD";

let up: Upstream;
let s: InProcessSluice;
const findings: Finding[] = [];

beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json(anthropicMessage("ok", "claude-test")));
  up.on("POST", "/v1/chat/completions", () =>
    json({
      id: "c1",
      object: "chat.completion",
      created: 1,
      model: "gpt-5",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    }),
  );
  up.on(
    "POST",
    (p) => p.includes(":generateContent"),
    () =>
      json({ candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP" }] }),
  );
  up.ws("/v1/responses", {
    message(ws) {
      ws.send(JSON.stringify({ type: "response.completed" }));
    },
  });
  s = await startSluice({
    upstream: up.url,
    config: {
      custom_rules: [
        { name: "test_ticket", pattern: "SLT-[0-9]{6}-[A-Z]{4}", severity: "high", action: "redact" },
      ],
    },
  });
  s.runtime.bus.on("finding", (e) => findings.push(e.finding));
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

const noValues = (text: string) => {
  expect(text).not.toContain(AWS_ID);
  expect(text).not.toContain(GH);
};

describe("block", () => {
  test("the message links to the request's findings on the dashboard and to its allowlists; the link finds them", async () => {
    const res = await fetch(`${s.proxyUrl}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": "k",
        "x-claude-code-session-id": "links-session",
      },
      body: JSON.stringify({
        model: "m",
        max_tokens: 1,
        messages: [{ role: "user", content: `key ${AWS_ID}` }],
      }),
    });
    expect(res.status).toBe(400);
    const message = ((await res.json()) as { error: { message: string } }).error.message;
    expect(message).toContain(
      `if it is a false positive, allow it with \`sluice allowlist add '<the value>' --type secrets\` or at ${s.dashboardUrl}/#/allowlists`,
    );
    const link = /Findings: (\S+)$/.exec(message)![1]!;
    expect(link.startsWith(`${s.dashboardUrl}/#/findings?`)).toBe(true);
    const query = new URLSearchParams(link.split("?")[1]);
    expect(query.get("rule")).toBe("aws_access_key_id");
    noValues(message);
    await s.runtime.store.flush();
    const listed = (await (await fetch(`${s.dashboardUrl}/api/v1/findings?${query}`)).json()) as {
      findings: { rule: string }[];
    };
    expect(listed.findings.map((r) => r.rule)).toContain("aws_access_key_id");
  });

  test("anthropic SDK: 400 invalid_request_error (a 403 reads as a sign-in failure in Claude Code) naming type, path and rule; upstream never sees it", async () => {
    const client = new Anthropic({ baseURL: s.proxyUrl, apiKey: "sk-ant-test", maxRetries: 0 });
    const before = up.requests.length;
    const err = (await client.messages
      .create({
        model: "claude-test",
        max_tokens: 10,
        messages: [{ role: "user", content: `deploy with ${AWS_ID}` }],
      })
      .catch((e) => e)) as InstanceType<typeof Anthropic.BadRequestError>;
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.status).toBe(400);
    const body = err.error as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("aws_access_key_id");
    expect(body.error.message).toContain("messages[0].content");
    noValues(JSON.stringify(body));
    expect(up.requests.length).toBe(before);
  });

  test("openai SDK: 400 with code blocked_by_sluice (Codex retries any other status); upstream never sees it", async () => {
    const client = new OpenAI({ baseURL: `${s.proxyUrl}/v1`, apiKey: "sk-test", maxRetries: 0 });
    const before = up.requests.length;
    const err = (await client.chat.completions
      .create({ model: "gpt-5", messages: [{ role: "user", content: `token ${GH}` }] })
      .catch((e) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.code).toBe("blocked_by_sluice");
    expect(err.message).toContain("github_pat");
    noValues(JSON.stringify(err.error));
    expect(up.requests.length).toBe(before);
  });

  test("gemini SDK: 403 PERMISSION_DENIED; upstream never sees it", async () => {
    const ai = new GoogleGenAI({ apiKey: "gemini-test", httpOptions: { baseUrl: s.proxyUrl } });
    const before = up.requests.length;
    const err = (await ai.models
      .generateContent({ model: "gemini-2.5-pro", contents: `use key ${AWS_ID}` })
      .catch((e) => e)) as Error & { status?: number };
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toContain("PERMISSION_DENIED");
    expect(err.message).toContain("aws_access_key_id");
    expect(err.message).toContain("contents[0].parts[0].text");
    noValues(err.message);
    expect(up.requests.length).toBe(before);
  });

  test("a secret inside base64 is decoded and blocked; the finding says so", async () => {
    const before = up.requests.length;
    const encoded = Buffer.from(`[default]\naws_access_key_id = ${AWS_ID}\n`).toString("base64");
    const res = await fetch(`${s.proxyUrl}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({
        model: "m",
        max_tokens: 5,
        messages: [{ role: "user", content: `decode this: ${encoded}` }],
      }),
    });
    expect(res.status).toBe(400);
    expect(up.requests.length).toBe(before);
    expect(findings.some((f) => f.rule === "aws_access_key_id" && f.decoded === "base64")).toBe(true);
  });
});

describe("redact", () => {
  test("upstream receives the placeholder, the JSON parses, and every other byte is unchanged", async () => {
    const raw = `{"model":"m",  "max_tokens":5,\n "messages":[{"role":"user","content":"ticket ${TICKET}, caf\\u00e9 \\"quoted\\""}]}`;
    const res = await fetch(`${s.proxyUrl}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
      body: raw,
    });
    expect(res.status).toBe(200);
    const got = new TextDecoder().decode(up.requests.at(-1)!.body);
    expect(got).toBe(raw.replace(TICKET, "[REDACTED:test_ticket]"));
    expect(JSON.parse(got).messages[0].content).toBe('ticket [REDACTED:test_ticket], café "quoted"');
    expect(findings.some((f) => f.rule === "test_ticket" && f.action === "redact")).toBe(true);
  });

  test("the anthropic SDK call goes through with the value replaced", async () => {
    const client = new Anthropic({ baseURL: s.proxyUrl, apiKey: "sk-ant-test", maxRetries: 0 });
    const msg = await client.messages.create({
      model: "claude-test",
      max_tokens: 10,
      messages: [{ role: "user", content: `see ${TICKET}` }],
    });
    expect(msg.content[0]).toMatchObject({ type: "text", text: "ok" });
    const sent = JSON.parse(new TextDecoder().decode(up.requests.at(-1)!.body));
    expect(sent.messages[0].content).toBe("see [REDACTED:test_ticket]");
  });
});

describe("alert and log", () => {
  test("forwarded byte for byte, finding emitted with a masked preview", async () => {
    const client = new OpenAI({ baseURL: `${s.proxyUrl}/v1`, apiKey: "sk-test", maxRetries: 0 });
    const n = findings.length;
    const done = await client.chat.completions.create({
      model: "gpt-5",
      messages: [
        { role: "user", content: "mail maria.gonzalez@northwind-traders.com and mark it CONFIDENTIAL" },
      ],
    });
    expect(done.choices[0]!.message.content).toBe("ok");
    const recorded = up.requests.at(-1)!;
    const sent = JSON.parse(new TextDecoder().decode(recorded.body));
    expect(sent.messages[0].content).toContain("maria.gonzalez@northwind-traders.com");
    expect(recorded.sha256).toBe(createHash("sha256").update(recorded.body).digest("hex"));
    const mine = findings.slice(n);
    expect(mine.find((f) => f.rule === "email_address")).toMatchObject({
      action: "log",
      preview: "mari****************************.com",
    });
    expect(mine.find((f) => f.rule === "confidential_marker")).toMatchObject({
      action: "alert",
      detector: "proprietary",
    });
    expect(JSON.stringify(mine)).not.toContain("maria.gonzalez@");
  });
});

describe("conversation history", () => {
  test("a secret in turn 1 is still blocked in turn 5", async () => {
    const history: { role: string; content: string }[] = [{ role: "user", content: `my token is ${GH}` }];
    const headers = {
      "content-type": "application/json",
      "x-api-key": "k",
      "anthropic-version": "2023-06-01",
      "x-claude-code-session-id": "e2e-history",
    };
    const before = up.requests.length;
    for (let turn = 1; turn <= 5; turn++) {
      const res = await fetch(`${s.proxyUrl}/v1/messages`, {
        method: "POST",
        headers,
        body: JSON.stringify({ model: "m", max_tokens: 5, messages: history }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message).toContain("github_pat");
      history.push(
        { role: "assistant", content: `answer ${turn}` },
        { role: "user", content: `question ${turn + 1}` },
      );
    }
    expect(up.requests.length).toBe(before);
  });
});

describe("Codex WebSocket", () => {
  test("a secret in a response.create frame closes the connection and never reaches upstream", async () => {
    const ws = await openWebSocket(s.proxyUrl, "/v1/responses", {
      authorization: "Bearer sk-test",
      "session-id": "codex-e2e",
      "user-agent": "codex_cli_rs/0.169.0",
    });
    const clean = JSON.stringify({
      type: "response.create",
      model: "gpt-5-codex",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] }],
    });
    const reply = new Promise((r) => ws.addEventListener("message", (e) => r(e.data), { once: true }));
    ws.send(clean);
    await reply;
    expect(up.wsMessages.at(-1)).toBe(clean);
    const n = up.wsMessages.length;
    const answer = new Promise((r) => ws.addEventListener("message", (e) => r(e.data), { once: true }));
    ws.send(
      JSON.stringify({
        type: "response.create",
        model: "gpt-5-codex",
        input: [{ type: "function_call_output", call_id: "c1", output: `AWS_ACCESS_KEY_ID=${AWS_ID}` }],
      }),
    );
    expect(JSON.parse(String(await answer))).toMatchObject({
      type: "error",
      status_code: 400,
      error: { code: "blocked_by_sluice" },
    });
    expect(up.wsMessages.length).toBe(n);
    // The socket stays open: the next turn goes through on it.
    const again = new Promise((r) => ws.addEventListener("message", (e) => r(e.data), { once: true }));
    ws.send(clean);
    await again;
    expect(up.wsMessages.at(-1)).toBe(clean);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    expect(findings.some((f) => f.rule === "aws_access_key_id" && f.path === "input[0].output")).toBe(true);
  });
});

/**
 * The official SDKs through sluice to an HTTPS stand-in upstream (trusted via proxy.ca_bundle):
 * streaming and not, for every provider path; upstream receives byte-identical bodies.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

let up: Upstream;
let s: InProcessSluice;
const sha = (b: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

function sseBody(events: { event?: string; data: unknown }[]): string {
  return events
    .map((e) => `${e.event ? `event: ${e.event}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`)
    .join("");
}
const sseResponse = (text: string) =>
  new Response(text, { headers: { "content-type": "text/event-stream" } });

const anthropicMessage = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-test-model",
  content: [{ type: "text", text: "hi there" }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 2 },
};
const anthropicStream = sseBody([
  { event: "message_start", data: { type: "message_start", message: { ...anthropicMessage, content: [] } } },
  {
    event: "content_block_start",
    data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  },
  {
    event: "content_block_delta",
    data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hel" } },
  },
  {
    event: "content_block_delta",
    data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo" } },
  },
  { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
  {
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 2 },
    },
  },
  { event: "message_stop", data: { type: "message_stop" } },
]);
const chatCompletion = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-5",
  choices: [{ index: 0, message: { role: "assistant", content: "hi there" }, finish_reason: "stop" }],
};
const chatStream =
  ["hel", "lo"]
    .map(
      (t) =>
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-5", choices: [{ index: 0, delta: { content: t }, finish_reason: null }] })}\n\n`,
    )
    .join("") + "data: [DONE]\n\n";
const responseObj = {
  id: "resp_1",
  object: "response",
  created_at: 1,
  status: "completed",
  model: "gpt-5",
  output: [
    {
      type: "message",
      id: "m1",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "hi there", annotations: [] }],
    },
  ],
};
const responsesStream = sseBody([
  {
    event: "response.created",
    data: {
      type: "response.created",
      sequence_number: 0,
      response: { ...responseObj, status: "in_progress", output: [] },
    },
  },
  {
    event: "response.output_text.delta",
    data: {
      type: "response.output_text.delta",
      sequence_number: 1,
      item_id: "m1",
      output_index: 0,
      content_index: 0,
      delta: "hello",
    },
  },
  {
    event: "response.completed",
    data: { type: "response.completed", sequence_number: 2, response: responseObj },
  },
]);
const geminiResponse = {
  candidates: [{ content: { role: "model", parts: [{ text: "hi there" }] }, finishReason: "STOP", index: 0 }],
  usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
};
const geminiStream = ["hel", "lo"]
  .map(
    (t) =>
      `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: t }] }, index: 0 }] })}\r\n\r\n`,
  )
  .join("");

beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", (r) => {
    const body = JSON.parse(new TextDecoder().decode(r.body));
    return body.stream
      ? sseResponse(anthropicStream)
      : json(anthropicMessage, { headers: { "request-id": "req_up_1" } });
  });
  up.on("POST", "/v1/messages/count_tokens", () => json({ input_tokens: 42 }));
  up.on("GET", "/v1/models", () =>
    json({
      data: [{ id: "m", type: "model", display_name: "M", created_at: "2025-01-01T00:00:00Z" }],
      has_more: false,
      first_id: "m",
      last_id: "m",
    }),
  );
  up.on("POST", "/v1/chat/completions", (r) => {
    const body = JSON.parse(new TextDecoder().decode(r.body));
    return body.stream ? sseResponse(chatStream) : json(chatCompletion);
  });
  up.on("POST", "/v1/responses", (r) => {
    const body = JSON.parse(new TextDecoder().decode(r.body));
    return body.stream ? sseResponse(responsesStream) : json(responseObj);
  });
  up.on("POST", "/v1/embeddings", () =>
    json({
      object: "list",
      data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }],
      model: "e",
      usage: { prompt_tokens: 1, total_tokens: 1 },
    }),
  );
  up.on("POST", /:generateContent/, () => json(geminiResponse));
  up.on("POST", /:streamGenerateContent/, () => sseResponse(geminiStream));
  up.on("POST", /:countTokens/, () => json({ totalTokens: 7 }));
  s = await startSluice({ upstream: up.url });
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

/** The last request upstream received must carry exactly the bytes the SDK sent to sluice. */
function lastUpstream() {
  return up.requests[up.requests.length - 1]!;
}

describe("anthropic SDK", () => {
  const client = () => new Anthropic({ baseURL: s.proxyUrl, apiKey: "sk-ant-api03-test", maxRetries: 0 });
  test("messages.create, non-streaming", async () => {
    const msg = await client().messages.create({
      model: "claude-test-model",
      max_tokens: 64,
      messages: [{ role: "user", content: "héllo ✓ — unicode survives" }],
      metadata: {
        user_id: JSON.stringify({ device_id: "dev1", account_uuid: "acc-1", session_id: "sess-9" }),
      },
    });
    expect(msg.content[0] as unknown).toEqual({ type: "text", text: "hi there" });
    const r = lastUpstream();
    expect(r.path).toBe("/v1/messages");
    expect(r.headers.get("authorization")).toBe("Bearer sk-ant-api03-test");
    expect(r.headers.get("anthropic-version")).toBeTruthy();
    expect(r.headers.get("host")).toBe(new URL(up.url).host);
    expect(JSON.parse(new TextDecoder().decode(r.body)).messages[0].content).toBe(
      "héllo ✓ — unicode survives",
    );
  });
  test("messages.stream", async () => {
    const stream = client().messages.stream({
      model: "claude-test-model",
      max_tokens: 64,
      messages: [{ role: "user", content: "stream please" }],
    });
    let text = "";
    stream.on("text", (t) => (text += t));
    const final = await stream.finalMessage();
    expect(text).toBe("hello");
    expect(final.stop_reason).toBe("end_turn");
  });
  test("count_tokens and models.list", async () => {
    const c = client();
    const n = await c.messages.countTokens({
      model: "claude-test-model",
      messages: [{ role: "user", content: "x" }],
    });
    expect(n.input_tokens).toBe(42);
    const models = await c.models.list();
    expect(models.data[0]!.id).toBe("m");
    expect(lastUpstream().path.startsWith("/v1/models")).toBe(true);
  });
});

describe("openai SDK", () => {
  const client = () => new OpenAI({ baseURL: `${s.proxyUrl}/v1`, apiKey: "sk-proj-test", maxRetries: 0 });
  test("chat.completions, non-streaming and streaming", async () => {
    const c = client();
    const out = await c.chat.completions.create({
      model: "gpt-5",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(out.choices[0]!.message.content).toBe("hi there");
    const stream = await c.chat.completions.create({
      model: "gpt-5",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("hello");
  });
  test("responses, non-streaming and streaming", async () => {
    const c = client();
    const out = await c.responses.create({ model: "gpt-5", input: "hi" });
    expect(out.output_text).toBe("hi there");
    const stream = await c.responses.create({ model: "gpt-5", input: "hi", stream: true });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    expect(types).toEqual(["response.created", "response.output_text.delta", "response.completed"]);
  });
  test("embeddings", async () => {
    const out = await client().embeddings.create({ model: "e", input: "x" });
    expect(out.data[0]!.embedding).toEqual([0.1, 0.2]);
  });
});

describe("google genai SDK", () => {
  const client = (apiVersion?: string) =>
    new GoogleGenAI({ apiKey: "AIzaTestKey", httpOptions: { baseUrl: s.proxyUrl, apiVersion } });
  test.each([undefined, "v1beta"])("generateContent, stream and countTokens (api version %s)", async (v) => {
    const ai = client(v);
    const out = await ai.models.generateContent({ model: "gemini-2.5-pro", contents: "hi" });
    expect(out.text).toBe("hi there");
    expect(lastUpstream().path).toMatch(/^\/v1(beta)?\/models\/gemini-2\.5-pro:generateContent$/);
    expect(lastUpstream().headers.get("x-goog-api-key")).toBe("AIzaTestKey");
    let text = "";
    for await (const chunk of await ai.models.generateContentStream({
      model: "gemini-2.5-pro",
      contents: "hi",
    }))
      text += chunk.text ?? "";
    expect(text).toBe("hello");
    expect(lastUpstream().path).toMatch(
      /^\/v1(beta)?\/models\/gemini-2\.5-pro:streamGenerateContent\?alt=sse$/,
    );
    const n = await ai.models.countTokens({ model: "gemini-2.5-pro", contents: "hi" });
    expect(n.totalTokens).toBe(7);
  });
});

test("every body upstream received is byte-identical to what the client sent", async () => {
  // Send raw bodies with odd whitespace, key order and unicode: sluice must not re-serialise them.
  const bodies = [
    '{ "model":"claude-x" ,"max_tokens":1,\n "messages":[{"role":"user","content":"a\\u00e9 é"}] }',
    '{"stream":false,"model":"gpt-5","messages":[{"role":"user","content":"x"}],"z":1.0}',
  ];
  const paths = ["/v1/messages", "/v1/chat/completions"];
  for (let i = 0; i < bodies.length; i++) {
    const res = await fetch(`${s.proxyUrl}${paths[i]}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-test", "x-api-key": "k" },
      body: bodies[i],
    });
    await res.arrayBuffer();
    expect(lastUpstream().sha256).toBe(sha(bodies[i]!));
  }
  const big = new Uint8Array(300_000).map((_, i) => (i * 7) & 0xff);
  const res = await fetch(`${s.proxyUrl}/v1/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/octet-stream", authorization: "Bearer sk-test" },
    body: big,
  });
  expect(res.status).toBe(200);
  expect(lastUpstream().sha256).toBe(sha(big));
});

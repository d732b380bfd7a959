/**
 * Attack: one value in pieces. A token split across two messages, two text blocks, two tool_result
 * pages or two turns; an AWS secret key in one message with its id in another; base64 or hex output
 * wrapped at 76 columns with the token across a line break; text hidden in a data field (Gemini
 * `inlineData` as application/octet-stream, a `data:` URL). Each piece alone matches nothing, so
 * each used to reach the upstream. All go through sluice as the tools send them, to the stand-in
 * upstream, which must never see the token.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { blockingAndRedacting, type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

const GH = ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"].join("");
const AWS_ID = ["AKIA", "QYLPMN5HFIQR7XOB"].join("");
const AWS_SECRET = ["AC9C79z5dcoqdc/F5caD4cq0", "zDDTK+7lCVKr7jf3"].join("");

let up: Upstream;
let s: InProcessSluice;
let redacting: InProcessSluice;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg" }));
  up.on("POST", "/v1beta/models/gemini-2.5-pro:generateContent", () => json({ candidates: [] }));
  up.on("POST", "/v1/chat/completions", () => json({ id: "c", choices: [] }));
  [s, redacting] = await blockingAndRedacting(up.url);
});
afterAll(async () => {
  await s?.stop();
  await redacting?.stop();
  await up?.stop();
});

/** Whether any piece of the token reached the upstream whole. */
const leaked = () =>
  up.requests.some((r) => {
    const text = new TextDecoder().decode(r.body);
    return text.includes(GH) || text.includes(AWS_SECRET);
  });

async function send(
  body: unknown,
  opts: { via?: InProcessSluice; path?: string; session?: string } = {},
): Promise<Response> {
  const path = opts.path ?? "/v1/messages";
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (path.startsWith("/v1beta")) headers["x-goog-api-key"] = "k";
  else if (path.startsWith("/v1/chat")) headers.authorization = "Bearer sk-x";
  else headers["x-api-key"] = "k";
  if (opts.session) headers["x-claude-code-session-id"] = opts.session;
  return fetch(`${(opts.via ?? s).proxyUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
}

const anthropic = (messages: unknown[]) => ({ model: "claude-sonnet-4-5", max_tokens: 64, messages });

describe("a token split in two", () => {
  for (const cut of [4, 10, 17, 30]) {
    const [a, b] = [GH.slice(0, cut), GH.slice(cut)];
    test(`across two messages (cut at ${cut})`, async () => {
      const res = await send(
        anthropic([
          { role: "user", content: `remember this: ${a}` },
          { role: "user", content: `${b} is the rest` },
        ]),
      );
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("github_pat at messages[0].content + messages[1].content");
    });
  }

  test("across two text blocks", async () => {
    const res = await send(
      anthropic([
        {
          role: "user",
          content: [
            { type: "text", text: `part one ${GH.slice(0, 12)}` },
            { type: "text", text: GH.slice(12) },
          ],
        },
      ]),
    );
    expect(res.status).toBe(400);
  });

  test("across two tool_result pages", async () => {
    const res = await send(
      anthropic([
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_01",
              content: [
                { type: "text", text: `line 1\nline 2\nTOKEN=${GH.slice(0, 20)}` },
                { type: "text", text: `${GH.slice(20)}\nline 4` },
              ],
            },
          ],
        },
      ]),
    );
    expect(res.status).toBe(400);
  });

  test("across two turns of one session (each turn sent alone)", async () => {
    const session = crypto.randomUUID();
    const first = await send(anthropic([{ role: "user", content: `keep ${GH.slice(0, 15)}` }]), { session });
    expect(first.status).toBe(200);
    const second = await send(anthropic([{ role: "user", content: GH.slice(15) }]), { session });
    expect(second.status).toBe(400);
    expect(await second.text()).toContain("(previous payload) + messages[0].content");
  });

  test("with redact configured it is blocked: no one string holds the value to replace", async () => {
    const res = await send(
      anthropic([
        { role: "user", content: `a: ${GH.slice(0, 9)}` },
        { role: "user", content: GH.slice(9) },
      ]),
      { via: redacting },
    );
    expect(res.status).toBe(400);
  });

  test("ordinary neighbours do not join into findings", async () => {
    const res = await send(
      anthropic([
        { role: "user", content: "open db/users.ts and config.json" },
        { role: "assistant", content: [{ type: "text", text: "Reading them now." }] },
        { role: "user", content: "thanks, then run bun test" },
      ]),
    );
    expect(res.status).toBe(200);
  });
});

test("an AWS secret key in one message and its id in the next", async () => {
  const res = await send(
    anthropic([
      { role: "user", content: `the key id is ${AWS_ID}` },
      { role: "user", content: AWS_SECRET },
    ]),
  );
  expect(res.status).toBe(400);
  expect(await res.text()).toContain("aws_secret_access_key at messages[0].content + messages[1].content");
});

describe("wrapped encodings", () => {
  const text = `deploy log\nexport GITHUB_TOKEN=${GH}\nthen push the branch and open the PR`;
  for (const [name, wrapped] of [
    [
      "base64 at 76 columns",
      Buffer.from(text)
        .toString("base64")
        .match(/.{1,76}/g)!
        .join("\n"),
    ],
    [
      "base64 at 64 columns, CRLF",
      Buffer.from(text)
        .toString("base64")
        .match(/.{1,64}/g)!
        .join("\r\n"),
    ],
    [
      "hex at 60 columns",
      Buffer.from(text)
        .toString("hex")
        .match(/.{1,60}/g)!
        .join("\n"),
    ],
  ] as const)
    test(`${name}, the token across a line break`, async () => {
      const res = await send(anthropic([{ role: "user", content: `output:\n${wrapped}\n` }]));
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("github_pat");
    });
});

describe("text in data fields", () => {
  const file = `# .env\nGITHUB_TOKEN=${GH}\nDEBUG=false\n`;
  const b64 = Buffer.from(file).toString("base64");

  test("Gemini inlineData declared application/octet-stream", async () => {
    const res = await send(
      {
        contents: [
          {
            role: "user",
            parts: [
              { text: "summarise this file" },
              { inlineData: { mimeType: "application/octet-stream", data: b64 } },
            ],
          },
        ],
      },
      { path: "/v1beta/models/gemini-2.5-pro:generateContent" },
    );
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("inlineData.data (decoded)");
  });

  test("an OpenAI file as a data: URL", async () => {
    const res = await send(
      {
        model: "gpt-5",
        messages: [
          {
            role: "user",
            content: [
              {
                type: "file",
                file: { filename: "x.bin", file_data: `data:application/octet-stream;base64,${b64}` },
              },
            ],
          },
        ],
      },
      { path: "/v1/chat/completions" },
    );
    expect(res.status).toBe(400);
  });

  test("an Anthropic document whose base64 is text", async () => {
    const res = await send(
      anthropic([
        {
          role: "user",
          content: [
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: b64 } },
          ],
        },
      ]),
    );
    expect(res.status).toBe(400);
  });

  test("a real binary image is not scanned as text and goes through", async () => {
    const png = new Uint8Array(4096);
    png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    for (let i = 8; i < png.length; i++) png[i] = (i * 7919) % 256;
    const res = await send(
      anthropic([
        {
          role: "user",
          content: [
            {
              type: "image",
              source: { type: "base64", media_type: "image/png", data: Buffer.from(png).toString("base64") },
            },
          ],
        },
      ]),
    );
    expect(res.status).toBe(200);
  });
});

afterAll(() => {
  expect(leaked()).toBe(false);
});

/**
 * Payload adapters: segments and their JSON paths for each provider's body shape (Anthropic
 * Messages, OpenAI Chat Completions and Responses, Gemini generateContent), opaque fields skipped,
 * and byte-exact redaction (JSON still parses, every other byte unchanged).
 */
import { describe, expect, test } from "bun:test";
import type { Segment } from "../../src/core/types.ts";
import { childPath, extractSegments } from "../../src/payload/extract.ts";
import { asciiJsonSource } from "../../src/payload/json-source.ts";
import { placeholder, redactJson, redactText } from "../../src/payload/redact.ts";

const IMG = "iVBORw0KGgo".padEnd(400, "A");
const at = (segs: Segment[], path: string) => segs.find((s) => s.path === path)?.text;

describe("extractSegments", () => {
  test("anthropic: system blocks, messages, tool_use input, tool_result, tools; images and signatures skipped", () => {
    const body = {
      model: "claude-sonnet-4-5",
      system: [{ type: "text", text: "You are Claude Code." }],
      tools: [
        {
          name: "Bash",
          description: "Run a command",
          input_schema: {
            type: "object",
            properties: { command: { type: "string", description: "the command" } },
          },
        },
      ],
      messages: [
        { role: "user", content: "hello" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "let me think", signature: "EqQBCkYIBxgCKkB".padEnd(300, "x") },
            { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "cat .env" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "API_KEY=abc" }] },
          ],
        },
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: IMG } },
          ],
        },
      ],
    };
    const segs = extractSegments(body, "anthropic");
    expect(at(segs, "system[0].text")).toBe("You are Claude Code.");
    expect(at(segs, "tools[0].description")).toBe("Run a command");
    expect(at(segs, "tools[0].input_schema.properties.command.description")).toBe("the command");
    expect(at(segs, "messages[0].content")).toBe("hello");
    expect(at(segs, "messages[1].content[0].thinking")).toBe("let me think");
    expect(at(segs, "messages[1].content[1].input.command")).toBe("cat .env");
    expect(at(segs, "messages[2].content[0].content[0].text")).toBe("API_KEY=abc");
    expect(at(segs, "messages[3].content[0].text")).toBe("look");
    expect(at(segs, "messages[3].content[1].source.data")).toBeUndefined();
    expect(at(segs, "messages[1].content[0].signature")).toBeUndefined();
  });

  test("openai chat: string and part contents, tool_calls arguments; data-URL images skipped", () => {
    const body = {
      model: "gpt-5",
      messages: [
        { role: "system", content: "be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "what is this" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${IMG}` } },
          ],
        },
        {
          role: "assistant",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "read", arguments: '{"path":"/repo/.env"}' } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "DB_PASSWORD=x" },
      ],
      tools: [{ type: "function", function: { name: "read", description: "Read a file", parameters: {} } }],
    };
    const segs = extractSegments(body, "openai");
    expect(at(segs, "messages[0].content")).toBe("be brief");
    expect(at(segs, "messages[1].content[0].text")).toBe("what is this");
    expect(at(segs, "messages[1].content[1].image_url.url")).toBeUndefined();
    expect(at(segs, "messages[2].tool_calls[0].function.arguments")).toBe('{"path":"/repo/.env"}');
    expect(at(segs, "messages[3].content")).toBe("DB_PASSWORD=x");
    expect(at(segs, "tools[0].function.description")).toBe("Read a file");
  });

  test("opaque-field rules stay narrow: text files as data URLs and tool inputs with a `format` are scanned", () => {
    const env = "AWS_SECRET_ACCESS_KEY=".padEnd(80, "x");
    const json = `data:application/json;base64,${Buffer.from(`{"k":"${env}"}`).toString("base64")}`;
    const body = {
      messages: [
        {
          role: "user",
          content: [
            { type: "file", file: { filename: "cfg.json", file_data: json } },
            { type: "input_audio", input_audio: { format: "wav", data: IMG } },
          ],
        },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "t", name: "w", input: { format: "env", data: env } }],
        },
        {
          role: "user",
          content: [{ type: "tool_use", id: "u", name: "w", input: { type: "base64", data: env } }],
        },
      ],
    };
    for (const provider of ["openai", "anthropic"] as const) {
      const segs = extractSegments(body, provider);
      expect(at(segs, "messages[0].content[0].file.file_data")).toBe(json);
      expect(at(segs, "messages[0].content[1].input_audio.data")).toBeUndefined();
      expect(at(segs, "messages[1].content[0].input.data")).toBe(env);
      expect(at(segs, "messages[2].content[0].input.data")).toBe(env);
    }
  });

  test("openai responses / Codex response.create: input items, instructions, function calls; encrypted reasoning skipped", () => {
    const body = {
      type: "response.create",
      model: "gpt-5-codex",
      instructions: "You are Codex.",
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: "fix the bug" }] },
        { type: "reasoning", summary: [], encrypted_content: "gAAAAABo".padEnd(200, "z") },
        { type: "function_call", name: "shell", call_id: "c1", arguments: '{"command":["cat","id_rsa"]}' },
        { type: "function_call_output", call_id: "c1", output: "-----BEGIN" },
      ],
    };
    const segs = extractSegments(body, "openai");
    expect(at(segs, "instructions")).toBe("You are Codex.");
    expect(at(segs, "input[0].content[0].text")).toBe("fix the bug");
    expect(at(segs, "input[1].encrypted_content")).toBeUndefined();
    expect(at(segs, "input[2].arguments")).toBe('{"command":["cat","id_rsa"]}');
    expect(at(segs, "input[3].output")).toBe("-----BEGIN");
  });

  test("gemini: contents parts, functionCall args, functionResponse, systemInstruction; inline images skipped", () => {
    const body = {
      contents: [
        {
          role: "user",
          parts: [
            { text: "hi" },
            { inlineData: { mimeType: "image/jpeg", data: IMG } },
            { inlineData: { mimeType: "text/plain", data: "plain text file content here".padEnd(80, ".") } },
          ],
        },
        {
          role: "model",
          parts: [
            {
              functionCall: { name: "read_file", args: { path: "secrets.yaml" } },
              thoughtSignature: "CiQB".padEnd(100, "q"),
            },
          ],
        },
        {
          role: "user",
          parts: [{ functionResponse: { name: "read_file", response: { output: "token: abc" } } }],
        },
      ],
      systemInstruction: { parts: [{ text: "You are Gemini CLI." }] },
      tools: [{ functionDeclarations: [{ name: "read_file", description: "Reads a file" }] }],
    };
    const segs = extractSegments(body, "gemini");
    expect(at(segs, "contents[0].parts[0].text")).toBe("hi");
    expect(at(segs, "contents[0].parts[1].inlineData.data")).toBeUndefined();
    expect(at(segs, "contents[0].parts[2].inlineData.data")).toStartWith("plain text");
    expect(at(segs, "contents[1].parts[0].functionCall.args.path")).toBe("secrets.yaml");
    expect(at(segs, "contents[1].parts[0].thoughtSignature")).toBeUndefined();
    expect(at(segs, "contents[2].parts[0].functionResponse.response.output")).toBe("token: abc");
    expect(at(segs, "systemInstruction.parts[0].text")).toBe("You are Gemini CLI.");
    expect(at(segs, "tools[0].functionDeclarations[0].description")).toBe("Reads a file");
  });

  test("paths for odd keys, arrays at the root and a string root", () => {
    expect(childPath("", "messages")).toBe("messages");
    expect(childPath("a", "b c")).toBe('a["b c"]');
    expect(childPath("a", 3)).toBe("a[3]");
    expect(extractSegments([{ "x-y": "v" }])).toEqual([{ path: '[0]["x-y"]', text: "v" }]);
    expect(extractSegments("just text")).toEqual([{ path: "$", text: "just text" }]);
  });
});

describe("redaction", () => {
  const value = ["AKIA", "IOSFODNN7", "EXAMPLE"].join("");
  test("only the matched characters change; escapes before the match are respected", () => {
    const raw = `{ "messages" : [ {"role":"user", "content":"line\\n\\u00e9\\"q\\" key=${value} end"} ],\n  "n": 1.50e3, "t": true }`;
    const parsed = JSON.parse(raw) as { messages: { content: string }[] };
    const text = parsed.messages[0]!.content;
    const start = text.indexOf(value);
    const out = redactJson(raw, [
      {
        path: "messages[0].content",
        start,
        end: start + value.length,
        replacement: placeholder("aws_access_key_id"),
      },
    ]);
    expect(out).toBe(raw.replace(value, "[REDACTED:aws_access_key_id]"));
    expect((JSON.parse(out) as typeof parsed).messages[0]!.content).toBe(
      text.replace(value, "[REDACTED:aws_access_key_id]"),
    );
  });

  test("several edits in one string and in several strings; overlaps merged; unknown paths ignored", () => {
    const raw = JSON.stringify({ a: "x SECRET1 y SECRET2 z", b: ["q SECRET3"] });
    const e = (path: string, s: string, from: number) => {
      const text = path === "a" ? "x SECRET1 y SECRET2 z" : "q SECRET3";
      const i = text.indexOf(s);
      return { path, start: i + from, end: i + s.length, replacement: "[R]" };
    };
    const out = redactJson(raw, [
      e("a", "SECRET2", 0),
      e("a", "SECRET1", 0),
      e("a", "SECRET1", 2),
      e("b[0]", "SECRET3", 0),
      { path: "zz", start: 0, end: 1, replacement: "[R]" },
    ]);
    expect(JSON.parse(out)).toEqual({ a: "x [R] y [R] z", b: ["q [R]"] });
  });

  test("plain text bodies", () => {
    expect(redactText("a KEY b", [{ path: "body", start: 2, end: 5, replacement: "[R]" }])).toBe("a [R] b");
  });

  test("plain text: overlapping edits are merged, the rest is kept", () => {
    const e = (start: number, end: number) => ({ path: "body", start, end, replacement: placeholder("t") });
    expect(redactText("aaaSECRETbbbSECRET", [e(3, 9), e(4, 8), e(12, 18)])).toBe(
      "aaa[REDACTED:t]bbb[REDACTED:t]",
    );
  });

  test("non-JSON input to redactJson throws (the scanner then blocks rather than leak)", () => {
    expect(() => redactJson("{nope", [{ path: "x", start: 0, end: 1, replacement: "[R]" }])).toThrow();
  });
});

describe("asciiJsonSource", () => {
  const utf8 = new TextDecoder();
  const enc = new TextEncoder();
  const parse = (s: string): { ok: true; v: unknown } | { ok: false } => {
    try {
      return { ok: true, v: JSON.parse(s) };
    } catch {
      return { ok: false };
    }
  };
  let seed = 11;
  const rnd = (n: number) => {
    seed = (seed * 48271) % 2147483647;
    return seed % n;
  };
  const CHARS = [
    "a",
    "Z",
    " ",
    '"',
    "\\",
    "\n",
    "é",
    "’",
    "😀",
    "\ufeff",
    "\u2028",
    "中",
    "\u00a0",
    "{",
    "1",
  ];
  /** Mostly ASCII, like real bodies: one character in `every` from the whole set. */
  const randomText = (len: number, every = 40) =>
    Array.from({ length: len }, () => (rnd(every) === 0 ? CHARS[rnd(CHARS.length)] : "abc d{1"[rnd(7)])).join(
      "",
    );

  test("JSON with non-ASCII text: an ASCII source that parses to the same value", () => {
    let nonNull = 0;
    for (let round = 0; round < 200; round++) {
      const value = {
        model: "m",
        messages: Array.from({ length: 1 + rnd(4) }, () => ({
          role: "user",
          content: randomText(rnd(30_000), 3000),
        })),
        [randomText(3)]: [randomText(5), rnd(100)],
      };
      const bytes = enc.encode(JSON.stringify(value));
      const src = asciiJsonSource(bytes);
      if (src === null) continue; // more than 1/32 non-ASCII: the caller decodes as usual
      nonNull++;
      expect(/^[\x00-\x7f]*$/.test(src)).toBe(true);
      expect(JSON.parse(src)).toEqual(value);
    }
    expect(nonNull).toBeGreaterThan(100);
    expect(asciiJsonSource(enc.encode(JSON.stringify({ t: randomText(5000, 2) })))).toBeNull();
    const mostlyAscii = enc.encode(JSON.stringify({ t: `${"x".repeat(100_000)}’${"y".repeat(50_000)}😀` }));
    expect(JSON.parse(asciiJsonSource(mostlyAscii)!)).toEqual(JSON.parse(utf8.decode(mostlyAscii)));
  });

  test("any bytes: same parse result (value or failure) as decoding, or null", () => {
    const bad = [
      [0x80],
      [0xc3],
      [0xf0, 0x9f],
      [0xef, 0xbb, 0xbf],
      [0x5c, 0xc3, 0xa9],
      [0xff, 0xfe],
      [0xe2, 0x80, 0xa8],
    ];
    let nonNull = 0;
    for (let round = 0; round < 500; round++) {
      const base = enc.encode(
        JSON.stringify({ a: randomText(20_000 + rnd(200), 4000), b: [randomText(rnd(50))] }),
      );
      const out: number[] = [...base];
      for (let k = rnd(4); k > 0; k--) {
        // Anywhere, but often near the start (a byte order mark) or inside a string.
        const at = rnd(3) === 0 ? rnd(4) : rnd(out.length + 1);
        out.splice(at, 0, ...bad[rnd(bad.length)]!);
      }
      const bytes = Uint8Array.from(out);
      const src = asciiJsonSource(bytes);
      if (src === null) continue;
      nonNull++;
      expect(/^[\x00-\x7f]*$/.test(src)).toBe(true);
      expect(parse(src)).toEqual(parse(utf8.decode(bytes)));
    }
    expect(nonNull).toBeGreaterThan(50);
    // A byte order mark at the start, a non-ASCII character after a backslash: left to the decoder.
    expect(asciiJsonSource(Uint8Array.from([0xef, 0xbb, 0xbf, ...enc.encode("{}")]))).toBeNull();
    expect(asciiJsonSource(enc.encode('{"a":"\\é"}'))).toBeNull();
  });
});

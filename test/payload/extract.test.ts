/**
 * Text segments and their JSON paths for each provider's body shape (Anthropic Messages, OpenAI
 * Chat Completions and Responses, Gemini generateContent), opaque fields skipped.
 */
import { describe, expect, test } from "bun:test";
import type { Segment } from "../../src/core/types.ts";
import { childPath, extractSegments } from "../../src/payload/extract.ts";

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
      expect(at(segs, "messages[0].content[0].file.file_data")).toBeUndefined();
      expect(at(segs, "messages[0].content[0].file.file_data (decoded)")).toBe(
        new TextDecoder().decode(Uint8Array.fromBase64(json.split(",")[1]!)),
      );
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
    const OCTET_TEXT = "API_KEY=from an octet-stream: a text file that Gemini CLI attached\n";
    const body = {
      contents: [
        {
          role: "user",
          parts: [
            { text: "hi" },
            { inlineData: { mimeType: "image/jpeg", data: IMG } },
            { inlineData: { mimeType: "text/plain", data: "plain text file content here".padEnd(80, ".") } },
            {
              inlineData: {
                mimeType: "application/octet-stream",
                data: Buffer.from(OCTET_TEXT).toString("base64"),
              },
            },
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
    expect(at(segs, "contents[0].parts[3].inlineData.data (decoded)")).toBe(OCTET_TEXT);
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

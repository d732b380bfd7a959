/**
 * Evasions undone before matching, end to end: a GitHub token split by zero-width characters, in
 * fullwidth forms, or with a Cyrillic letter in place of a Latin one is found like the plain token
 * through the proxy (Anthropic SDK: blocked; with redact, the whole disguised span is replaced) and
 * through `sluice mcp` (MCP SDK: a tool call blocked before the server). Also normalizeForMatching
 * itself: offsets back to the original, scripts on their own left alone.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { normalizeForMatching, SUSPECT, suspectUnit } from "../../src/detect/normalize.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { startMessagesUpstream, type Upstream } from "../helpers/upstream.ts";
import { fixture, sdkOverSluice, tempHome } from "../mcp/helpers.ts";

// Assembled at run time: no credential-shaped literal in the source.
const TOKEN = ["ghp", "_", "R7xK2mQ9pL4vT8wZ3nB6cY1dF5gS0aHjE2uX"].join("");
const EVASIONS: [string, string][] = [
  [
    "zero-width characters inside",
    `${TOKEN.slice(0, 6)}\u200b${TOKEN.slice(6, 20)}\u2060${TOKEN.slice(20)}\ufeff`,
  ],
  ["fullwidth forms", [...TOKEN].map((c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).join("")],
  ["a Cyrillic homoglyph", TOKEN.replace("p", "\u0440")],
  [
    "a soft hyphen and a Greek capital tau",
    `${TOKEN.slice(0, 10)}\u00ad${TOKEN.slice(10)}`.replace("T", "\u03a4"),
  ],
];

describe("normalizeForMatching", () => {
  test("each evasion gives back the plain token; offsets point into the original", () => {
    for (const [, disguised] of EVASIONS) {
      const text = `key: ${disguised}!`;
      const n = normalizeForMatching(text)!;
      expect(n.text).toBe(`key: ${TOKEN}!`);
      const at = n.text.indexOf(TOKEN);
      expect(n.from[at]).toBe(5);
      expect(n.from[at + TOKEN.length]).toBe(5 + disguised.length);
    }
  });
  test("plain text, Cyrillic and Greek words on their own are left alone", () => {
    expect(normalizeForMatching(`plain ascii ${TOKEN}`)).toBeNull();
    expect(normalizeForMatching("расход средств за месяц")).toBeNull();
    expect(normalizeForMatching("καλημέρα κόσμε")).toBeNull();
  });
  test("Unicode tag characters are dropped; mathematical letters folded", () => {
    const tags = [..."hi"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
    expect(normalizeForMatching(`a${tags}b`)!.text).toBe("ab");
    expect(normalizeForMatching("\u{1D42D}\u{1D428}\u{1D424}\u{1D41E}\u{1D427}")!.text).toBe("token");
  });
});

let up: Upstream;
beforeAll(async () => {
  up = await startMessagesUpstream();
});
afterAll(() => up?.stop());

const ask = (s: InProcessSluice, text: string) =>
  new Anthropic({ apiKey: "sk-ant-test", baseURL: s.proxyUrl, maxRetries: 0 }).messages.create({
    model: "claude-test-model",
    max_tokens: 8,
    messages: [{ role: "user", content: text }],
  });

describe("through the proxy (Anthropic SDK)", () => {
  test("each disguised token is blocked like the plain one", async () => {
    await using s = await startSluice({ upstream: up.url });
    for (const [how, disguised] of EVASIONS) {
      const before = up.requests.length;
      const err = await ask(s, `deploy with ${disguised} please`).then(
        () => null,
        (e: unknown) => e,
      );
      expect({ how, status: (err as { status?: number } | null)?.status }).toEqual({ how, status: 400 });
      expect(String((err as Error).message)).toContain("github_pat");
      expect(up.requests.length).toBe(before);
    }
  });

  test("redact replaces the whole disguised span, invisible characters included", async () => {
    await using s = await startSluice({
      upstream: up.url,
      config: { detectors: { secrets: { action: "redact" } } },
    });
    for (const [how, disguised] of EVASIONS) {
      const before = up.requests.length;
      await ask(s, `deploy with ${disguised} please`);
      const sent = JSON.parse(new TextDecoder().decode(up.requests[before]!.body)) as {
        messages: { content: string }[];
      };
      expect({ how, text: sent.messages[0]!.content }).toEqual({
        how,
        text: "deploy with [REDACTED:github_pat] please",
      });
    }
  });
});

describe("through sluice mcp (MCP SDK)", () => {
  test("a zero-width-split token in a tool argument is blocked before the server", async () => {
    const home = tempHome({ detectors: { secrets: { action: "block" } } });
    const rec = join(home, "received.jsonl");
    {
      await using s = await sdkOverSluice(["--", "bun", fixture("recording-server.ts"), rec], { home });
      const err = await s.client
        .callTool({ name: "echo", arguments: { message: `token ${EVASIONS[0]![1]}` } })
        .then(
          () => null,
          (e: Error) => e,
        );
      expect(err).toBeInstanceOf(Error);
      expect(err!.message).toContain("github_pat");
    }
    expect(await Bun.file(rec).text()).not.toContain(TOKEN.slice(6, 20));
  });
});

test("the suspect character class and the per-unit rule agree on every UTF-16 code unit", () => {
  const differ: number[] = [];
  for (let c = 0; c <= 0xffff; c++)
    if (SUSPECT.test(String.fromCharCode(c)) !== suspectUnit(c)) differ.push(c);
  expect(differ).toEqual([]);
});

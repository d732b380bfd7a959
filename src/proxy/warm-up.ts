/**
 * Warming the request path after a start. JavaScriptCore runs a function in its interpreter first
 * and compiles it to fast machine code only once it has run often (baseline, then the optimizing
 * tiers, each after more runs). A proxy runs the functions that read, parse and scan a turn once per
 * request, so without this the first few hundred turns after every start run them in the slow
 * tiers, and the matcher is compiled inside the first turn (docs/benchmarks.md has the figures).
 *
 * So once the proxy listens, two synthetic conversations (a Claude Code-shaped Messages body and a
 * Codex-shaped Responses body, which grow by a few messages a turn, as tools send them) go through
 * the same functions a request's body goes through: the turn parse and session context (`turns.ts`,
 * `session.ts`), the shape check, the scan (the pipeline's own hook, with the rules and settings in
 * force) and the upstream headers. Everything it touches is its own: its own turn memory and session
 * contexts, sessions named by fresh random ids whose memories the pipeline forgets as each
 * conversation ends; no record, metric, event or log line of a request; no extension is called and
 * nothing is sent. It runs one turn at a time between the proxy's own work (a request that arrives
 * meanwhile waits for one synthetic turn at most; the first compiles the matcher, as the first
 * request would), stops at the first finding (a rule that matches its made-up texts), and ends with
 * a full garbage collection.
 */
import type { RequestHook, ScanRequest } from "../core/hook.ts";
import type { ProviderLabel } from "../core/types.ts";
import { knownShape } from "../payload/shape.ts";
import { upstreamRequestHeaders } from "./headers.ts";
import { isStreamingRequest } from "./provider.ts";
import { loginMode, SessionContexts } from "./session.ts";
import { conversationKey, TurnMemory } from "./turns.ts";

/** Synthetic turns a start runs: past them, more barely changes how fast a turn is read and scanned. */
export const WARM_UP_TURNS = 1000;
/** Turns of each synthetic conversation before the next one starts afresh (its body stays small). */
const TURNS_PER_CONVERSATION = 24;

export interface WarmUpDeps {
  /** The scanning pipeline's hook (not one wrapped by extensions). */
  hook: RequestHook;
  /** Drop what the pipeline's session memories hold for a request's session. */
  forget(req: Pick<ScanRequest, "transport" | "session">): void;
  hmacKey: Uint8Array;
}

export interface WarmUpResult {
  turns: number;
  /** Why it stopped before the end: aborted, or a finding in its own texts (a rule's name). */
  stopped?: string;
}

type Json = Record<string, unknown>;

interface Conversation {
  provider: ProviderLabel;
  path: string;
  headers: Headers;
  /** The body of turn `t`. */
  body(t: number): Json;
}

const enc = new TextEncoder();

const WORDS =
  "the test now injects the clock so that expiry is checked against a fixed time and the cache keeps each entry until its deadline passes while the worker reads the queue in order and retries a failed job once before it reports the error to the caller".split(
    " ",
  );

/** Plain prose of about `n` words, different for each seed. */
function prose(seed: number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[(seed * 7 + i * 13) % WORDS.length]!);
  return `${out.join(" ")}.`;
}

/** A few lines of TypeScript, as a tool result or an edit carries them. */
function code(seed: number): string {
  return [
    `export function expiresAt${seed}(entry: { created: number; ttl: number }): number {`,
    "  // the deadline of an entry, from the injected clock",
    `  return entry.created + entry.ttl * ${seed + 1};`,
    "}",
    `test("entry ${seed} expires", () => expect(expiresAt${seed}({ created: 0, ttl: 2 })).toBe(${2 * (seed + 1)}));`,
  ].join("\n");
}

function messagesConversation(): Conversation {
  const session = crypto.randomUUID();
  const system = [
    { type: "text", text: "You are a coding assistant working in a terminal." },
    { type: "text", text: prose(1, 300), cache_control: { type: "ephemeral" } },
  ];
  const tools = ["Bash", "Read", "Edit", "Grep", "Glob", "TodoWrite"].map((name, i) => ({
    name,
    description: prose(i + 2, 60),
    input_schema: {
      type: "object",
      properties: { path: { type: "string", description: prose(i, 8) }, limit: { type: "number" } },
      required: ["path"],
    },
  }));
  const first = {
    role: "user",
    content: [
      {
        type: "text",
        text: "<env>\nWorking directory: /home/dev/project\nIs directory a git repo: Yes\n</env>",
      },
      { type: "text", text: prose(3, 40) },
    ],
  };
  return {
    provider: "anthropic",
    path: "/v1/messages",
    headers: new Headers({
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
      "x-app": "cli",
      "user-agent": "claude-cli/2.1.197 (external, cli)",
      "x-claude-code-session-id": session,
    }),
    body(t) {
      const messages: unknown[] = [first];
      for (let i = 0; i < t; i++) {
        const id = `toolu_${i}`;
        messages.push(
          {
            role: "assistant",
            content: [
              { type: "text", text: prose(i, 20) },
              { type: "tool_use", id, name: "Bash", input: { command: `bun test test/cache-${i}.test.ts` } },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: id, content: code(i) },
              { type: "text", text: prose(i + 5, 12) },
            ],
          },
        );
      }
      return {
        model: "claude-sonnet-4-5",
        messages,
        system,
        tools,
        metadata: { user_id: JSON.stringify({ device_id: "", account_uuid: "", session_id: session }) },
        max_tokens: 32000,
        stream: true,
      };
    },
  };
}

function responsesConversation(): Conversation {
  const session = crypto.randomUUID();
  const tools = ["shell", "apply_patch", "update_plan"].map((name, i) => ({
    type: "function",
    name,
    description: prose(i + 4, 50),
    strict: false,
    parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } } },
  }));
  const first = {
    type: "message",
    role: "user",
    content: [
      {
        type: "input_text",
        text: `<environment_context>\n  <cwd>/home/dev/project</cwd>\n</environment_context>\n${prose(6, 40)}`,
      },
    ],
  };
  return {
    provider: "openai",
    path: "/v1/responses",
    headers: new Headers({
      "content-type": "application/json",
      originator: "codex_cli_rs",
      "user-agent": "codex_cli_rs/0.169.0",
      session_id: session,
    }),
    body(t) {
      const input: unknown[] = [first];
      for (let i = 0; i < t; i++) {
        const call = `call_${i}`;
        input.push(
          {
            type: "function_call",
            name: "shell",
            arguments: `{"command":["bun","test","test/cache-${i}.test.ts"]}`,
            call_id: call,
          },
          { type: "function_call_output", call_id: call, output: code(i) },
          { type: "message", role: "assistant", content: [{ type: "output_text", text: prose(i + 2, 20) }] },
        );
      }
      return {
        model: "gpt-5-codex",
        instructions: prose(8, 300),
        input,
        tools,
        tool_choice: "auto",
        stream: true,
        prompt_cache_key: session,
      };
    },
  };
}

/** Give the event loop a turn: whatever arrived meanwhile runs before the next synthetic turn. */
const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

/** Run `turns` synthetic turns (alternating the two conversations); resolves when done or stopped. */
export async function warmUp(deps: WarmUpDeps, turns: number, signal?: AbortSignal): Promise<WarmUpResult> {
  const memory = new TurnMemory();
  const sessions = new SessionContexts();
  /**
   * The sessions of the conversations under way, by id: the pipeline forgets them when the next
   * ones start, so that the warm-up never holds more than two of its session memories' places.
   */
  const seen = new Map<string, Pick<ScanRequest, "transport" | "session">>();
  const forgetSeen = () => {
    for (const s of seen.values()) deps.forget(s);
    seen.clear();
  };
  let conversations: Conversation[] = [];
  let done = 0;
  try {
    for (let n = 0; n < turns; n++) {
      await yieldToLoop();
      if (signal?.aborted) return { turns: done, stopped: "aborted" };
      const t = Math.floor(n / 2) % TURNS_PER_CONVERSATION;
      if (t === 0 && n % 2 === 0) {
        forgetSeen();
        conversations = [messagesConversation(), responsesConversation()];
      }
      const c = conversations[n % 2]!;
      const bytes = enc.encode(JSON.stringify(c.body(t)));
      const headers = new Headers(c.headers);
      headers.set("content-length", String(bytes.byteLength));
      const key = conversationKey(c.provider, c.path, headers);
      const parsed = memory.read(key, c.provider, bytes, headers.get("content-type"));
      const session = sessions.get(key, {
        provider: c.provider,
        pathname: c.path,
        headers,
        json: parsed.json,
        sourceIp: "127.0.0.1",
        hmacKey: deps.hmacKey,
      });
      seen.set(session.session_id, { transport: "http", session });
      knownShape(c.provider, c.path, parsed.json);
      const verdict = await deps.hook({
        provider: c.provider,
        method: "POST",
        path: c.path,
        headers,
        body: bytes,
        json: parsed.json,
        ...(parsed.source !== undefined ? { jsonSource: parsed.source } : {}),
        ...(parsed.uniqueKeys ? { uniqueKeys: true } : {}),
        ...(parsed.texts ? { texts: parsed.texts } : {}),
        session,
        transport: "http",
        id: `warm-up-${n}`,
      });
      if (verdict.findings.length > 0) return { turns: done, stopped: verdict.findings[0]!.rule };
      isStreamingRequest(c.path, "", parsed.json);
      loginMode(c.provider, headers);
      upstreamRequestHeaders(headers);
      memory.settle();
      done++;
    }
    return { turns: done };
  } finally {
    forgetSeen();
    // What it left is garbage now: collected at once, so that sluice's memory after the warm-up is
    // what it would be after the same few real turns.
    Bun.gc(true);
  }
}

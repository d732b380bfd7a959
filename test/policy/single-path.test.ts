/**
 * One pipeline behind every transport: the same value under the same configuration gets the same
 * outcome through the proxy (the official Anthropic SDK), a WebSocket frame (Codex's Responses
 * socket), MCP over stdio (the MCP SDK client through `sluice mcp`) and `sluice scan`. Changing one
 * policy setting (a detector's action, an allowlist entry, the pipeline's default action) changes
 * all four the same way.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { stringify } from "yaml";
import { openWebSocket, startSluice } from "../helpers/sluice.ts";
import { startMessagesUpstream, type Upstream } from "../helpers/upstream.ts";
import { fixture, sdkOverSluice } from "../mcp/helpers.ts";
import { sluice as runScan } from "../scan/_cli.ts";

/** A value only the test's rule knows (no shipped rule matches it). */
const VALUE = "PIPEPROBE-31415926-qwerty";
const PLACEHOLDER = "[REDACTED:pipeline_probe]";
const RULE = {
  name: "pipeline_probe",
  pattern: "PIPEPROBE-[0-9]{8}-[a-z]{6}",
  detector: "secrets",
  severity: "high",
  action: "",
};

/** What happened to the value: not reported, reported and forwarded, blocked, or redacted. */
type Outcome = "unreported" | "log" | "block" | "redact";
/** The outcome and the action of the finding sluice recorded ("-" for none): `block/block`. */
type Seen = `${Outcome}/${string}`;

let up: Upstream;
beforeAll(async () => {
  up = await startMessagesUpstream();
  up.ws("/v1/responses", { message: (ws) => ws.send(JSON.stringify({ type: "response.completed" })) });
});
afterAll(() => up?.stop());

const text = (b: Uint8Array | string) => (typeof b === "string" ? b : new TextDecoder().decode(b));

/** What was forwarded says what happened to the value; `recorded` is the action of its finding. */
function seen(forwarded: string | null, recorded: string | undefined): Seen {
  const found = recorded ?? "-";
  if (forwarded === null) return `block/${found}`;
  if (forwarded.includes(PLACEHOLDER) && !forwarded.includes(VALUE)) return `redact/${found}`;
  if (!forwarded.includes(VALUE))
    throw new Error(`forwarded neither the value nor a placeholder: ${forwarded}`);
  return recorded ? `log/${found}` : "unreported/-";
}

/** Through the proxy with the Anthropic SDK, and a Codex WebSocket frame on the same sluice. */
async function viaProxy(config: Record<string, unknown>): Promise<{ http: Seen; websocket: Seen }> {
  await using s = await startSluice({ upstream: up.url, config });
  const recorded = new Map<string, string>();
  s.runtime.bus.on("finding", (e) => {
    if (e.finding.rule === RULE.name) recorded.set(e.transport, e.finding.action);
  });
  const client = new Anthropic({ baseURL: s.proxyUrl, apiKey: "sk-ant-api03-test", maxRetries: 0 });
  const before = up.requests.length;
  const http = await client.messages
    .create({
      model: "claude-test-model",
      max_tokens: 8,
      messages: [{ role: "user", content: `use ${VALUE}` }],
    })
    .then(
      () => text(up.requests.at(-1)!.body),
      (err: Error) => {
        expect(err.message).toContain("pipeline_probe at messages[0].content");
        expect(up.requests.length).toBe(before);
        return null;
      },
    );

  const ws = await openWebSocket(s.proxyUrl, "/v1/responses", {
    authorization: "Bearer sk-test",
    "user-agent": "codex_cli_rs/0.169.0",
  });
  const frames = up.wsMessages.length;
  // A blocked frame is answered with an error event (the socket stays open); a forwarded one gets
  // the stand-in's response.completed.
  const answer = new Promise<"answered" | "blocked">((resolve) => {
    ws.addEventListener("message", (e) => {
      const data = String(e.data);
      if (data.includes("response.completed")) resolve("answered");
      else if (data.includes("blocked_by_sluice")) resolve("blocked");
    });
    ws.addEventListener("close", () => resolve("blocked"));
  });
  ws.send(
    JSON.stringify({
      type: "response.create",
      model: "gpt-5-codex",
      input: [{ type: "message", text: `use ${VALUE}` }],
    }),
  );
  const websocket = (await answer) === "answered" ? text(up.wsMessages[frames]!) : null;
  ws.close();
  return { http: seen(http, recorded.get("http")), websocket: seen(websocket, recorded.get("websocket")) };
}

/** The MCP SDK client through `sluice mcp` to a stdio server that records what it receives. */
async function viaMcp(config: Record<string, unknown>): Promise<Seen> {
  const home = mkdtempSync(join(tmpdir(), "sluice-single-path-"));
  writeFileSync(join(home, "config.yaml"), stringify(config));
  const rec = join(home, "received.jsonl");
  writeFileSync(rec, "");
  {
    await using s = await sdkOverSluice(["--", "bun", fixture("recording-server.ts"), rec], { home });
    await s.client.callTool({ name: "echo", arguments: { message: `use ${VALUE}` } }).catch((err: Error) => {
      expect(err.message).toContain("pipeline_probe at params.arguments.message");
    });
  }
  // The session has ended: the server's record and sluice's store are complete.
  const call = (await Bun.file(rec).text()).split("\n").find((l) => l.includes('"tools/call"')) ?? null;
  const db = new Database(join(home, "sluice.db"), { readonly: true });
  const row = db
    .query<{ action: string }, []>(
      "SELECT action FROM findings WHERE transport = 'mcp' AND rule = 'pipeline_probe'",
    )
    .get();
  db.close();
  return seen(call, row?.action);
}

/** `sluice scan` of a file holding the value: it reports, and its action is the finding's. */
async function viaScan(config: Record<string, unknown>): Promise<Seen> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-single-path-scan-"));
  const home = join(dir, ".home");
  await Bun.write(join(home, "config.yaml"), stringify(config));
  writeFileSync(join(dir, "deploy.txt"), `use ${VALUE}\n`);
  const r = await runScan(["scan", "deploy.txt", "--format", "json"], { cwd: dir, home });
  const report = JSON.parse(r.stdout) as { findings: { rule: string; action: string }[] };
  const finding = report.findings.find((f) => f.rule === RULE.name);
  // A scan only reports: what a proxy would forward is the file as it is, or nothing for a block.
  return finding ? `${finding.action as Outcome}/${finding.action}` : "unreported/-";
}

describe("one policy setting, the same effect on every transport", () => {
  const cases: { setting: string; config: Record<string, unknown>; expected: Outcome }[] = [
    { setting: "defaults (pipeline.default_action log)", config: {}, expected: "log" },
    {
      setting: "detectors.secrets.action: block",
      config: { detectors: { secrets: { action: "block" } } },
      expected: "block",
    },
    {
      setting: "allowlists.secrets: the value",
      config: { detectors: { secrets: { action: "block" } }, allowlists: { secrets: [VALUE] } },
      expected: "unreported",
    },
    {
      setting: "pipeline.default_action: redact",
      config: { pipeline: { default_action: "redact" } },
      expected: "redact",
    },
  ];
  for (const c of cases)
    test(c.setting, async () => {
      const config = { ...c.config, custom_rules: [RULE], logging: { level: "info" } };
      const [proxy, mcp, scan] = await Promise.all([viaProxy(config), viaMcp(config), viaScan(config)]);
      const want: Seen = c.expected === "unreported" ? "unreported/-" : `${c.expected}/${c.expected}`;
      expect({ ...proxy, mcp, scan }).toEqual({ http: want, websocket: want, mcp: want, scan: want });
      // Each case starts an MCP subprocess and a `sluice scan` one: seconds on a busy 2-core machine.
    }, 30_000);
});

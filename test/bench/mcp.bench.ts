/**
 * MCP proxy benchmark: median added latency per JSON-RPC round trip in stdio mode. The same raw
 * client drives a minimal stdio server (test/mcp/fixtures/echo-server.ts) directly and through
 * `bun src/cli.ts mcp --no-store -- …`, sequential round trips after a warm-up; the difference of the
 * medians is sluice's cost (two extra pipe hops + parsing, tracking and argument scanning).
 * Also the in-process cost of the security core per round trip (no pipes). Target: ≤ 0.5 ms added.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { defaultConfig } from "../../src/config/schema.ts";
import { Bus } from "../../src/core/bus.ts";
import { Logger } from "../../src/core/log.ts";
import { blankSession } from "../../src/core/types.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { McpSession } from "../../src/mcp/core.ts";
import { MemoryBaselines } from "../../src/mcp/drift.ts";
import { Reporter } from "../../src/mcp/events.ts";
import { createPipeline } from "../../src/policy/pipeline.ts";
import type { BenchTable } from "./index.ts";

const REPO = resolve(import.meta.dir, "../..");
const SERVER = ["bun", join(REPO, "test/mcp/fixtures/echo-server.ts")];
const WARMUP = 300;
const N = 2000;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!;
};

/** Sequential round trips of `message(i)` against a spawned stdio process; returns ms per trip. */
async function roundTrips(
  cmd: string[],
  env: Record<string, string>,
  message: (id: number) => string,
): Promise<number[]> {
  const proc = Bun.spawn(cmd, { stdin: "pipe", stdout: "pipe", stderr: "ignore", env });
  const reader = proc.stdout.getReader();
  const dec = new TextDecoder();
  let buf = "";
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const nl = buf.indexOf("\n");
      if (nl !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        return line;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("server closed");
      buf += dec.decode(value, { stream: true });
    }
  };
  const send = (s: string) => {
    proc.stdin.write(`${s}\n`);
    proc.stdin.flush();
  };
  send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    }),
  );
  await nextLine();
  const times: number[] = [];
  for (let i = 1; i <= WARMUP + N; i++) {
    const t0 = performance.now();
    send(message(i));
    await nextLine();
    if (i > WARMUP) times.push(performance.now() - t0);
  }
  proc.stdin.end();
  await proc.exited;
  return times;
}

const ping = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;
const smallCall = (id: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { message: "hello world" } },
  });
const text10k = "The quick brown fox jumps over the lazy dog. ".repeat(228);
const bigCall = (id: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { message: text10k } },
  });

function inProcessCore(): McpSession {
  const config = defaultConfig();
  const rules = loadBuiltinRules();
  const pipeline = createPipeline({
    config: () => config,
    rules: () => rules,
    rulesVersion: () => 1,
    hmacKey: null,
  });
  const ctx = blankSession({ session_id: "bench", client: "mcp" });
  return new McpSession({
    serverId: "bench",
    config: () => config,
    hook: pipeline.hook,
    baselines: new MemoryBaselines(),
    reporter: new Reporter(new Bus(), new Logger({ stderr: false }), "bench", ctx),
  });
}

async function coreCost(message: (id: number) => string): Promise<number[]> {
  const s = inProcessCore();
  const times: number[] = [];
  for (let i = 1; i <= WARMUP + N; i++) {
    const t0 = performance.now();
    await s.fromClient(message(i));
    await s.fromServer(
      `{"jsonrpc":"2.0","id":${i},"result":{"content":[{"type":"text","text":"hello world"}]}}`,
    );
    if (i > WARMUP) times.push(performance.now() - t0);
  }
  return times;
}

export async function run(): Promise<BenchTable[]> {
  const home = mkdtempSync(join(tmpdir(), "sluice-mcp-bench-"));
  writeFileSync(join(home, "config.yaml"), "");
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, SLUICE_HOME: home };
  const viaSluice = ["bun", join(REPO, "src/cli.ts"), "mcp", "--no-store", "--", ...SERVER];
  const rows: (string | number)[][] = [];
  const f = (n: number) => n.toFixed(3);
  for (const [label, msg] of [
    ["ping", ping],
    ["tools/call, short argument", smallCall],
    ["tools/call, 10 KB argument", bigCall],
  ] as const) {
    const direct = await roundTrips(SERVER, env, msg);
    const proxied = await roundTrips(viaSluice, env, msg);
    const added = median(proxied) - median(direct);
    rows.push([
      label,
      f(median(direct)),
      f(median(proxied)),
      f(pct(proxied, 95)),
      f(added),
      added <= 0.5 ? "yes" : "no",
    ]);
  }
  const coreRows: (string | number)[][] = [];
  for (const [label, msg] of [
    ["tools/call, short argument", smallCall],
    ["tools/call, 10 KB argument", bigCall],
  ] as const) {
    const t = await coreCost(msg);
    coreRows.push([label, f(median(t)), f(pct(t, 95))]);
  }
  return [
    {
      title: `MCP stdio proxy: round trip, ms (${N} sequential trips after ${WARMUP} warm-up)`,
      columns: ["message", "direct p50", "via sluice p50", "via sluice p95", "added p50", "≤ 0.5 ms"],
      rows,
    },
    {
      title: "MCP security core in process (request + response, real scanner with the shipped rules), ms",
      columns: ["message", "p50", "p95"],
      rows: coreRows,
    },
  ];
}

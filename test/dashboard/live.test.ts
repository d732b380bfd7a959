/** `/api/v1/live`: every event type with {type, ts}, heartbeats, and rows other processes wrote. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { followLive } from "../helpers/live.ts";
import { finding, request, session } from "../helpers/records.ts";
import { type Env, makeEnv } from "./_env.ts";

let env: Env;
beforeAll(async () => {
  env = await makeEnv({ heartbeatMs: 30, pollMs: 20 });
});
afterAll(() => env.close());

async function open() {
  const res = await env.api("GET", "/api/v1/live");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  return followLive(res);
}

test("every bus event is streamed as {type, ts, ...fields}; heartbeats keep coming", async () => {
  const live = await open();
  await live.next((e) => e.event === "heartbeat");
  const bus = env.rt.bus;
  const secret = "AKIAQ7XK2M4PZL9RTW3B";
  bus.emit("finding", {
    finding: finding({ preview: "AKIA****TW3B", description: "aws key" }),
    session: session(),
    provider: "anthropic",
    request_id: "req-9",
    transport: "http",
  });
  bus.emit(
    "request",
    request({
      request_id: "req-9",
      provider: "gemini",
      client: "x",
      model: null,
      path: `/v1beta/models/m:generateContent?key=${secret}`,
      bytes: 1,
      duration_ms: 1,
      session_id: "s",
      account_id: null,
    }),
  );
  bus.emit("mode-changed", { mode: "passthrough", previous: "active" });
  bus.emit("config-reloaded", { changes: ["proxy.timeout: 120 -> 60"], source: "api" });
  bus.emit("ws-connection", {
    connection_id: "c1",
    phase: "open",
    target_url: "wss://x",
    origin: null,
    provider: "openai",
    session_id: "s",
    duration_ms: 0,
    frames_in: 0,
    frames_out: 0,
    findings: 0,
    close_code: null,
  });
  bus.emit("mcp-event", { kind: "drift", server: "srv", message: "tool changed", severity: "high" });
  for (const name of [
    "finding",
    "request",
    "mode-changed",
    "config-reloaded",
    "ws-connection",
    "mcp-event",
  ]) {
    const e = await live.next((x) => x.event === name);
    expect(e.data.type).toBe(name);
    expect(String(e.data.ts)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
  expect((await live.next((e) => e.event === "finding")).data).toMatchObject({
    preview: "AKIA****TW3B",
    session_id: "sess-1",
    provider: "anthropic",
  });
  expect(JSON.stringify(live.events)).not.toContain(secret);
  const beats = live.events.filter((e) => e.event === "heartbeat").length;
  await live.next(
    (e) => e.event === "heartbeat" && live.events.filter((x) => x.event === "heartbeat").length > beats,
  );
  expect(env.hub.size).toBe(1);
  await live.close();
  // The hub forgets a client that went away.
  await new Promise<void>((r) => {
    const check = () => (env.hub.size === 0 ? r() : setTimeout(check, 5));
    check();
  });
});

test("findings and MCP events written by another process (sluice mcp) reach the stream", async () => {
  const live = await open();
  await live.next((e) => e.event === "heartbeat");
  const root = join(import.meta.dir, "../..");
  const child = Bun.spawn(
    [
      process.execPath,
      "-e",
      `import { openStore } from ${JSON.stringify(join(root, "src/store/index.ts"))};
       import { Bus } from ${JSON.stringify(join(root, "src/core/bus.ts"))};
       import { Logger } from ${JSON.stringify(join(root, "src/core/log.ts"))};
       import { finding, session } from ${JSON.stringify(join(root, "test/helpers/records.ts"))};
       const bus = new Bus(); const s = openStore({ configDir: ${JSON.stringify(env.dir)}, bus, log: new Logger({ stderr: false }) });
       bus.emit("finding", { finding: finding({ finding_type: "tool_poisoning", detector: "injection" }), session: session({ session_id: "mcp:srv" }), provider: "unknown", request_id: "7", transport: "mcp" });
       bus.emit("mcp-event", { kind: "tool_drift", server: "srv", message: "read_file changed", severity: "high", tool: "read_file" });
       await s.close();`,
    ],
    { stdout: "inherit", stderr: "inherit" },
  );
  expect(await child.exited).toBe(0);
  const f = await live.next((e) => e.event === "finding" && e.data.finding_type === "tool_poisoning");
  expect(f.data).toMatchObject({ type: "finding", transport: "mcp", session_id: "mcp:srv" });
  const m = await live.next((e) => e.event === "mcp-event" && e.data.kind === "tool_drift");
  expect(m.data).toMatchObject({ type: "mcp-event", server: "srv", tool: "read_file", severity: "high" });
  await live.close();
  // And they are in the lists.
  expect((await env.json("GET", "/api/v1/findings?finding_type=tool_poisoning")).body.total).toBe(1);
  expect(
    (await env.json("GET", "/api/v1/mcp/events")).body.events.some(
      (e: { kind: string }) => e.kind === "tool_drift",
    ),
  ).toBe(true);
});

test("a client that stops reading is dropped instead of buffering without bound", async () => {
  const res = await env.api("GET", "/api/v1/live");
  expect(res.status).toBe(200);
  expect(env.hub.size).toBe(1);
  for (let i = 0; i < 6000 && env.hub.size > 0; i++)
    env.rt.bus.emit("mcp-event", { kind: "k", server: "s", message: `m${i}`, severity: "info" });
  expect(env.hub.size).toBe(0);
  await res.body?.cancel();
});

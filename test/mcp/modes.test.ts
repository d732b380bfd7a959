/**
 * The three network modes end to end with the official SDK on both sides:
 * HTTP bridge (stdio client → sluice → Streamable HTTP server, SSE and JSON answers),
 * HTTP reverse proxy (StreamableHTTPClientTransport → sluice --listen → server),
 * WebSocket bridge (stdio client → sluice → WebSocket server).
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { stringify } from "yaml";
import { testTls } from "../helpers/tls.ts";
import { startHttpMcpServer, startWsMcpServer } from "./fixtures/remote-servers.ts";
import { CLI, RawSession, REPO, StderrLog, sdkOverSluice, spawnMcp, tempHome, testEnv } from "./helpers.ts";

/** The same conversation in every mode; asserts what the client saw. */
async function exercise(client: Client, opts: { streaming?: boolean } = {}) {
  const tools = await client.listTools();
  expect(tools.tools.map((t) => t.name).sort()).toEqual(["add", "echo", "steps", "wait"]);
  const echo = await client.callTool({ name: "echo", arguments: { message: "over the wire ✓" } });
  expect((echo.content as { text: string }[])[0]!.text).toBe("over the wire ✓");

  // Server → client notifications: log messages travel on the GET stream (HTTP) and may trail the
  // response, so wait for them rather than expecting them before it.
  const logs: string[] = [];
  const allLogs = Promise.withResolvers<void>();
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(String(n.params.data));
    if (logs.length === 3) allLogs.resolve();
  });
  await client.setLoggingLevel("debug");
  const progress: number[] = [];
  const steps = await client.callTool({ name: "steps", arguments: { n: 3 } }, CallToolResultSchema, {
    onprogress: (p) => progress.push(p.progress),
  });
  expect((steps.content as { text: string }[])[0]!.text).toBe("done 3");
  if (opts.streaming !== false) {
    // A JSON-answering server cannot stream progress; with SSE (and WebSocket) it arrives in order.
    expect(progress).toEqual([1, 2, 3]);
    await allLogs.promise;
    expect(logs).toEqual(["step 1", "step 2", "step 3"]);
  }

  const res = await client.listResources();
  expect(res.resources.map((r) => r.uri)).toEqual(["mem://readme"]);
  const read = await client.readResource({ uri: "mem://readme" });
  expect((read.contents[0] as { text: string }).text).toBe("hello from a resource");
  const prompt = await client.getPrompt({ name: "greet", arguments: { who: "Ada" } });
  expect(JSON.stringify(prompt.messages)).toContain("Say hi to Ada");

  // Cancellation: the request is aborted, notifications/cancelled reaches the server.
  const ac = new AbortController();
  const waiting = client.callTool({ name: "wait", arguments: {} }, CallToolResultSchema, {
    signal: ac.signal,
  });
  setTimeout(() => ac.abort("stop"), 50);
  await expect(waiting).rejects.toThrow();
  await client.ping();
}

describe("HTTP bridge (--upstream http://)", () => {
  for (const json of [false, true]) {
    test(`SDK client ↔ Streamable HTTP server answering with ${json ? "JSON" : "SSE"}`, async () => {
      await using up = startHttpMcpServer({ json });
      await using s = await sdkOverSluice(["--upstream", up.url]);
      await exercise(s.client, { streaming: !json });
      // The session header was kept on every request after initialize.
      const sids = new Set(up.requests.slice(1).map((r) => r.sessionId));
      expect(sids.size).toBe(1);
      expect([...sids][0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(up.received.some((b) => b.includes("notifications/cancelled"))).toBe(true);
      await s.close();
      await s.log.ended;
      // Closing stdin ends the session with DELETE.
      expect(up.requests.at(-1)).toMatchObject({ method: "DELETE" });
      // The poisoned tool was reported, naming tool, field and category.
      const p = s.log.events("tool-poisoning");
      expect(p.map((e) => `${e.tool}:${e.field}:${e.category}`)).toEqual(
        expect.arrayContaining(["add:description:instruction_tags", "add:description:file_exfiltration"]),
      );
    }, 20_000);
  }

  test("session binding blocks an unlisted tool before it reaches the server; --action block withholds poisoned tools", async () => {
    await using up = startHttpMcpServer();
    await using s = await sdkOverSluice(["--session-binding", "--action", "block", "--upstream", up.url]);
    const tools = await s.client.listTools();
    expect(tools.tools.map((t) => t.name)).not.toContain("add");
    const blocked = await s.client
      .callTool({ name: "add", arguments: { a: 1, b: 2 } })
      .catch((e: Error) => e);
    expect(String((blocked as Error).message)).toContain("poisoned");
    const unknown = await s.client.callTool({ name: "shadow_tool", arguments: {} }).catch((e: Error) => e);
    expect(String((unknown as Error).message)).toContain("session binding");
    expect(up.received.some((b) => b.includes('"add"') && b.includes("tools/call"))).toBe(false);
    expect(up.received.some((b) => b.includes("shadow_tool"))).toBe(false);
  });

  test("SIGTERM ends the bridged session with DELETE and exits 143", async () => {
    await using up = startHttpMcpServer();
    await using raw = new RawSession(["--upstream", up.url]);
    await raw.initialize();
    await raw.request("ping");
    raw.proc.kill("SIGTERM");
    expect(await raw.proc.exited).toBe(143);
    expect(up.requests.at(-1)).toMatchObject({ method: "DELETE" });
  });

  test("an unreachable server answers each request with a JSON-RPC error instead of hanging", async () => {
    const p = spawnMcp(["--upstream", "http://127.0.0.1:9/mcp"]);
    p.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } })}\n`,
    );
    p.stdin.end();
    const out = await new Response(p.stdout).text();
    expect(await p.exited).toBe(0);
    expect(JSON.parse(out.trim())).toMatchObject({ id: 1, error: { code: -32000 } });
  });
});

async function startReverse(upstream: string, extra: string[] = [], home = tempHome()) {
  const proc = Bun.spawn(
    [
      "bun",
      CLI,
      "mcp",
      "--format",
      "json",
      "--log-level",
      "info",
      ...extra,
      "--listen",
      "127.0.0.1:0",
      "--upstream",
      upstream,
    ],
    {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: testEnv(home),
      cwd: REPO,
    },
  );
  const log = new StderrLog();
  const dec = new TextDecoder();
  const url = new Promise<string>((resolve) => {
    void (async () => {
      for await (const c of proc.stderr) {
        log.feed(dec.decode(c, { stream: true }));
        const m = /listening on (http:\/\/\S+)/.exec(log.text);
        if (m) resolve(m[1]!);
      }
    })();
  });
  const base = await url;
  return {
    base,
    home,
    log,
    proc,
    async [Symbol.asyncDispose]() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

describe("HTTP reverse proxy (--listen)", () => {
  test("SDK StreamableHTTPClientTransport ↔ sluice ↔ server; session id passes both ways", async () => {
    await using up = startHttpMcpServer();
    await using rp = await startReverse(up.url);
    expect(rp.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const transport = new StreamableHTTPClientTransport(new URL(`${rp.base}/mcp`));
    const client = new Client({ name: "reverse-test", version: "1" });
    await client.connect(transport);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    await exercise(client);
    expect(new Set(up.requests.slice(1).map((r) => r.sessionId))).toEqual(new Set([transport.sessionId!]));
    await rp.log.waitFor((l) => l.kind === "tool-poisoning" && l.tool === "add");
    const sid = transport.sessionId;
    await transport.terminateSession();
    await client.close();
    expect(up.requests.at(-1)).toMatchObject({ method: "DELETE", sessionId: sid });
  }, 20_000);

  test("blocked calls get a JSON-RPC error over HTTP and never reach the server", async () => {
    await using up = startHttpMcpServer({ json: true });
    await using rp = await startReverse(up.url, ["--action", "block"]);
    const client = new Client({ name: "reverse-test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${rp.base}/mcp`)));
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("add");
    const r = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } }).catch((e: Error) => e);
    expect(String((r as Error).message)).toContain("poisoned");
    expect(up.received.some((b) => b.includes("tools/call") && b.includes('"add"'))).toBe(false);
    await client.close();
  });

  test("SIGHUP reloads the configuration for sessions that start afterwards", async () => {
    await using up = startHttpMcpServer({ json: true });
    await using rp = await startReverse(up.url);
    writeFileSync(join(rp.home, "config.yaml"), stringify({ mcp: { session_binding: true } }));
    rp.proc.kill("SIGHUP");
    await rp.log.waitFor((l) => l.msg === "configuration reloaded (SIGHUP)");
    const client = new Client({ name: "reverse-test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${rp.base}/mcp`)));
    await client.listTools();
    const r = await client.callTool({ name: "shadow", arguments: {} }).catch((e: Error) => e);
    expect(String((r as Error).message)).toContain("session binding");
    await client.close();
  });

  test("a stateless upstream (no session id) keeps one security core: session binding still holds", async () => {
    await using up = startHttpMcpServer({ stateless: true });
    await using rp = await startReverse(up.url, ["--session-binding"]);
    const client = new Client({ name: "stateless-test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${rp.base}/mcp`)));
    expect((await client.listTools()).tools.length).toBe(4);
    const ok = await client.callTool({ name: "echo", arguments: { message: "stateless" } });
    expect((ok.content as { text: string }[])[0]!.text).toBe("stateless");
    const r = await client.callTool({ name: "shadow", arguments: {} }).catch((e: Error) => e);
    expect(String((r as Error).message)).toContain("session binding");
    expect(up.requests.every((q) => q.sessionId === null)).toBe(true);
    await client.close();
  });

  test("--header adds upstream headers (e.g. Authorization)", async () => {
    await using up = startHttpMcpServer();
    await using rp = await startReverse(up.url, ["--header", "Authorization: Bearer reverse-token"]);
    const client = new Client({ name: "hdr", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${rp.base}/mcp`)));
    await client.ping();
    await client.close();
    await using s = await sdkOverSluice([
      "--header",
      "Authorization: Bearer bridge-token",
      "--upstream",
      up.url,
    ]);
    await s.client.ping();
    const auths = new Set(up.requests.map((q) => q.authorization));
    expect(auths).toEqual(new Set(["Bearer reverse-token", "Bearer bridge-token"]));
  });

  test("a non-loopback Host header is refused (DNS rebinding)", async () => {
    await using up = startHttpMcpServer();
    await using rp = await startReverse(up.url);
    const res = await fetch(`${rp.base}/mcp`, {
      method: "POST",
      headers: { host: "evil.example", "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(403);
    expect(up.received).toEqual([]);
  });

  test("--listen on a non-loopback address is refused", async () => {
    const p = Bun.spawn(
      ["bun", CLI, "mcp", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1/mcp"],
      {
        stdout: "pipe",
        stderr: "pipe",
        env: testEnv(tempHome()),
      },
    );
    expect(await p.exited).toBe(2);
    expect(await new Response(p.stderr).text()).toContain("loopback only");
  });
});

describe("WebSocket bridge (--upstream ws://)", () => {
  test("SDK stdio client ↔ sluice ↔ WebSocket MCP server", async () => {
    await using up = startWsMcpServer();
    await using s = await sdkOverSluice(["--upstream", up.url]);
    await exercise(s.client);
    await s.log.waitFor((l) => l.kind === "tool-poisoning" && l.tool === "add");
    // Unchanged messages travel as the client sent them.
    expect(up.received.some((f) => f.includes('"method":"tools/list"'))).toBe(true);
  }, 20_000);

  test("blocked call never reaches the WebSocket server", async () => {
    await using up = startWsMcpServer();
    await using s = await sdkOverSluice(["--session-binding", "--upstream", up.url]);
    await s.client.listTools();
    const r = await s.client.callTool({ name: "not_listed", arguments: {} }).catch((e: Error) => e);
    expect(String((r as Error).message)).toContain("session binding");
    expect(up.received.some((f) => f.includes("not_listed"))).toBe(false);
  });
});

describe("byte-for-byte and batches over the network modes", () => {
  const odd = '{ "jsonrpc" : "2.0", "method" : "ping", "id" : "odd-1" }';

  test("HTTP bridge and WebSocket bridge forward an unchanged message exactly as the client wrote it", async () => {
    await using http = startHttpMcpServer({ json: true });
    await using ws = startWsMcpServer();
    for (const up of [http, ws]) {
      await using raw = new RawSession(["--upstream", up.url]);
      await raw.initialize();
      raw.send(odd);
      const r = await raw.waitFor((m) => m.id === "odd-1");
      expect(r.result).toEqual({});
      expect(up.received).toContain(odd);
    }
  });

  test("reverse proxy: a batch with one blocked call forwards the rest and answers for both", async () => {
    await using up = startHttpMcpServer({ json: true });
    await using rp = await startReverse(up.url, ["--session-binding"]);
    const post = (body: unknown, sid?: string) =>
      fetch(`${rp.base}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(sid ? { "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" } : {}),
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    const sid = init.headers.get("mcp-session-id")!;
    expect(sid).toBeTruthy();
    await init.text();
    expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, sid)).status).toBe(202);
    const list = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, sid);
    expect(((await list.json()) as { result: { tools: unknown[] } }).result.tools.length).toBe(4);
    const batch = await post(
      [
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "ghost", arguments: {} } },
        {
          jsonrpc: "2.0",
          id: 4,
          method: "tools/call",
          params: { name: "echo", arguments: { message: "in batch" } },
        },
      ],
      sid,
    );
    const answers = (await batch.json()) as { id: number; result?: unknown; error?: { code: number } }[];
    const byId = Object.fromEntries(answers.map((a) => [a.id, a]));
    expect(byId[3]!.error!.code).toBe(-32001);
    expect(JSON.stringify(byId[4]!.result)).toContain("in batch");
    expect(up.received.some((b) => b.includes("ghost"))).toBe(false);
  });
});

describe("TLS upstreams", () => {
  test("https and wss servers signed by a private CA work with proxy.ca_bundle, and fail without it", async () => {
    const tls = testTls();
    await using https = startHttpMcpServer({ tls: { cert: tls.cert, key: tls.key } });
    await using wss = startWsMcpServer({ tls: { cert: tls.cert, key: tls.key } });
    for (const up of [https, wss]) {
      await using s = await sdkOverSluice(["--upstream", up.url], {
        config: { proxy: { ca_bundle: tls.caPath } },
      });
      const r = await s.client.callTool({ name: "echo", arguments: { message: "over tls" } });
      expect((r.content as { text: string }[])[0]!.text).toBe("over tls");
    }
    await using raw = new RawSession(["--upstream", https.url]);
    const init = await raw.initialize();
    expect((init.error as { code: number }).code).toBe(-32000);
  });

  // Regression: the reverse proxy's POST to the server once went out without the CA bundle.
  test("the reverse proxy trusts proxy.ca_bundle for an https server too", async () => {
    const tls = testTls();
    await using https = startHttpMcpServer({ tls: { cert: tls.cert, key: tls.key } });
    await using rp = await startReverse(https.url, [], tempHome({ proxy: { ca_bundle: tls.caPath } }));
    const client = new Client({ name: "reverse-tls", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${rp.base}/mcp`)));
    const r = await client.callTool({ name: "echo", arguments: { message: "reverse over tls" } });
    expect((r.content as { text: string }[])[0]!.text).toBe("reverse over tls");
    await client.close();
  });
});

describe("HTTP bridge GET stream", () => {
  test("a dropped GET stream is reopened with Last-Event-ID; server-initiated messages keep flowing", async () => {
    const gets: (string | null)[] = [];
    const srv = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        if (req.method === "POST") {
          const m = (await req.json()) as { id?: number; method: string };
          if (m.id === undefined) return new Response(null, { status: 202 });
          const result =
            m.method === "initialize"
              ? {
                  protocolVersion: "2025-06-18",
                  capabilities: {},
                  serverInfo: { name: "raw-sse", version: "1" },
                }
              : {};
          return Response.json(
            { jsonrpc: "2.0", id: m.id, result },
            { headers: { "mcp-session-id": "sess-1" } },
          );
        }
        if (req.method === "GET") {
          gets.push(req.headers.get("last-event-id"));
          const note = (n: number) =>
            `id: ${n}\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `note ${n}` } })}\n\n`;
          // First stream: one event, then the server drops it. Second: the next event, kept open.
          if (gets.length === 1)
            return new Response(note(1), { headers: { "content-type": "text/event-stream" } });
          const body = new ReadableStream({
            start(c) {
              c.enqueue(new TextEncoder().encode(note(2)));
            },
          });
          return new Response(body, { headers: { "content-type": "text/event-stream" } });
        }
        return new Response(null, { status: 200 });
      },
    });
    try {
      await using raw = new RawSession(["--upstream", `http://127.0.0.1:${srv.port}/mcp`]);
      await raw.initialize();
      await raw.waitFor((m) => JSON.stringify(m).includes("note 1"));
      await raw.waitFor((m) => JSON.stringify(m).includes("note 2"));
      expect(gets).toEqual([null, "1"]);
    } finally {
      await srv.stop(true);
    }
  });
});

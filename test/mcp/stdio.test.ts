/**
 * stdio subprocess mode end to end: the official SDK client → `sluice mcp -- <server>` → servers
 * written with the SDK, and @modelcontextprotocol/server-everything.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { fixture, RawSession, REPO, sdkOverSluice, spawnMcp, tempHome } from "./helpers.ts";

const EVERYTHING = join(REPO, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

describe("stdio mode with server-everything", () => {
  test("initialize, tools, resources, prompts, notifications, progress, cancellation", async () => {
    await using s = await sdkOverSluice(["--", "bun", EVERYTHING, "stdio"]);
    const { client } = s;
    expect(client.getServerVersion()?.name).toContain("everything");

    const tools = await client.listTools();
    const names = tools.tools.map((t) => t.name);
    expect(names).toContain("echo");
    expect(names).toContain("get-sum");

    const echo = await client.callTool({ name: "echo", arguments: { message: "héllo ✓" } });
    expect((echo.content as { text: string }[])[0]!.text).toBe("Echo: héllo ✓");

    const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
    expect(JSON.stringify(sum.content)).toContain("42");

    const resources = await client.listResources();
    expect(resources.resources.length).toBeGreaterThan(0);
    const first = resources.resources[0]!;
    const read = await client.readResource({ uri: first.uri });
    expect(read.contents[0]!.uri).toBe(first.uri);
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.length).toBeGreaterThan(0);

    const prompts = await client.listPrompts();
    expect(prompts.prompts.length).toBeGreaterThan(0);
    const simple = prompts.prompts.find((p) => !p.arguments?.some((a) => a.required)) ?? prompts.prompts[0]!;
    const prompt = await client.getPrompt({ name: simple.name, arguments: {} });
    expect(prompt.messages.length).toBeGreaterThan(0);

    await client.setLoggingLevel("debug");
    await client.ping();

    // Progress: a long-running operation reports progress through sluice.
    const progress: number[] = [];
    const long = await client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
      CallToolResultSchema,
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(JSON.stringify(long.content)).toContain("completed");
    // All three progress notifications came through sluice. (The SDK client itself may drop the last
    // one when it arrives in the same read as the result: it handles notifications a microtask late.)
    const wire = s.received.filter((m) => m.method === "notifications/progress");
    expect(wire.map((m) => (m.params as { progress: number }).progress)).toEqual([1, 2, 3]);
    expect(progress.length).toBeGreaterThan(0);

    // Cancellation: the client aborts; notifications/cancelled passes through and the call rejects.
    const ac = new AbortController();
    const cancelled = client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 5, steps: 5 } },
      CallToolResultSchema,
      { signal: ac.signal, onprogress: () => ac.abort("user cancelled") },
    );
    await expect(cancelled).rejects.toThrow();
    // The session still works after a cancellation.
    const again = await client.callTool({ name: "echo", arguments: { message: "still here" } });
    expect((again.content as { text: string }[])[0]!.text).toBe("Echo: still here");
  }, 30_000);
});

describe("stdio framing", () => {
  test("unchanged messages pass byte for byte, both ways; batches and large messages work", async () => {
    const home = tempHome();
    const rec = join(home, "received.jsonl");
    await using raw = new RawSession(["--", "bun", fixture("recording-server.ts"), rec], { home });
    await raw.initialize();
    // Odd but valid spacing and key order must reach the server unchanged.
    const odd =
      '{ "params" : {"name":"echo","arguments":{"message":"a\\u00e9b"}}, "id":"x-1","jsonrpc":"2.0","method":"tools/call" }';
    raw.send(odd);
    const r = await raw.waitFor((m) => m.id === "x-1");
    expect(JSON.stringify(r)).toContain("aéb");

    // Large message (2 MB argument) round trip.
    const big = "y".repeat(2 * 1024 * 1024);
    const rb = await raw.request("tools/call", { name: "echo", arguments: { message: big } });
    expect((rb.result as { content: { text: string }[] }).content[0]!.text.length).toBe(big.length);

    // Large response (1 MB).
    const rl = await raw.request("tools/call", { name: "big", arguments: { n: 1_000_000 } });
    expect((rl.result as { content: { text: string }[] }).content[0]!.text.length).toBe(1_000_000);

    await raw.close();
    const received = readFileSync(rec, "utf8").split("\n");
    expect(received).toContain(odd);
    expect(received.some((l) => l.length > big.length)).toBe(true);
  }, 20_000);

  test("server output lines arrive unchanged", async () => {
    await using raw = new RawSession(["--", "bun", fixture("echo-server.ts")]);
    await raw.initialize();
    await raw.request("odd/format");
    expect(raw.lines).toContain(
      '{ "result" : { "z" : 1 , "a" : "\\u00e9" } , "id" : 2 , "jsonrpc" : "2.0" }',
    );
  });

  test("a batch passes as one line", async () => {
    const home = tempHome();
    const rec = join(home, "received.jsonl");
    await using raw = new RawSession(["--", "bun", fixture("recording-server.ts"), rec], { home });
    await raw.initialize();
    const batch = JSON.stringify([
      { jsonrpc: "2.0", id: 101, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
    ]);
    raw.send(batch);
    await raw.close();
    expect(readFileSync(rec, "utf8").split("\n")).toContain(batch);
  });

  test("exit code of the server is sluice's exit code; stderr passes through", async () => {
    const p = spawnMcp(["--", "bun", "-e", "console.error('server-stderr-line'); process.exit(7)"]);
    const code = await p.exited;
    expect(code).toBe(7);
    expect(await new Response(p.stderr).text()).toContain("server-stderr-line");
  });

  test("SIGTERM to sluice reaches the server; sluice exits as the server did", async () => {
    const script =
      "process.on('SIGTERM', () => { console.error('child got SIGTERM'); process.exit(42) }); console.error('ready'); setInterval(() => {}, 1000)";
    const p = spawnMcp(["--", "bun", "-e", script]);
    let err = "";
    const dec = new TextDecoder();
    const reader = p.stderr.getReader();
    while (!err.includes("ready")) {
      const { value, done } = await reader.read();
      if (done) break;
      err += dec.decode(value);
    }
    p.kill("SIGTERM");
    expect(await p.exited).toBe(42);
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      err += dec.decode(value);
    }
    expect(err).toContain("child got SIGTERM");
  });

  test("a server killed by a signal makes sluice exit 128+n", async () => {
    const p = spawnMcp(["--", "sh", "-c", "kill -9 $$"]);
    expect(await p.exited).toBe(137);
  });

  test("a server that cannot start: exit 127 and a message", async () => {
    const p = spawnMcp(["--", "/nonexistent/server-binary"]);
    expect(await p.exited).toBe(127);
    expect(await new Response(p.stderr).text()).toContain("cannot start MCP server");
  });
});

describe("command line", () => {
  test("--help and -h after -- belong to the server command, not to sluice", async () => {
    const p = spawnMcp(["--no-store", "--", "sh", "-c", 'echo "args: $*" >&2', "x", "--help", "-h"]);
    p.stdin.end();
    expect(await p.exited).toBe(0);
    expect(await new Response(p.stderr).text()).toContain("args: --help -h");
  });
});

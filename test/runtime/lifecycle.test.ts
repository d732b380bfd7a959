/**
 * Lifecycle of `sluice serve` as a subprocess: config errors exit 2 with a message and no
 * stack trace; SIGHUP with a bad file keeps the old config; SIGHUP with a new port rebinds without
 * dropping a request in flight; SIGTERM drains a request in flight, then prints the session summary;
 * a second signal exits at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort, openWebSocket, runSluice, spawnSluice, writeTestConfig } from "../helpers/sluice.ts";
import { testTls } from "../helpers/tls.ts";
import { json, type SseControl, sse, startUpstream, type Upstream } from "../helpers/upstream.ts";

let up: Upstream;
const streams: ((c: SseControl) => void)[] = [];
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => {
    const c = sse();
    streams.shift()?.(c);
    return c.response();
  });
  up.on("POST", "/v1/chat/completions", () => json({ ok: true }));
  up.ws("/v1/responses");
});
afterAll(async () => {
  await up?.stop();
});

const nextStream = () => new Promise<SseControl>((r) => streams.push(r));
const ANTH = { "content-type": "application/json", "x-api-key": "k" };
const streamBody = JSON.stringify({ model: "m", stream: true, messages: [] });

/** A streaming request through sluice whose upstream has sent `first`; `ctl` drives the rest. */
async function openStream(proxyUrl: string, first: string) {
  const ready = nextStream();
  const inflight = fetch(`${proxyUrl}/v1/messages`, { method: "POST", headers: ANTH, body: streamBody });
  const ctl = await ready;
  ctl.send(first);
  return { ctl, res: await inflight };
}

describe("config errors", () => {
  test.each([
    [{ proxy: { timeout: 9999 } }, /proxy\.timeout = 9999 is invalid: allowed range 1 to 300/],
    [{ bind: "0.0.0.0" }, /bind = "0\.0\.0\.0" is invalid: sluice listens on loopback only/],
    [
      { proxy: { ca_bundle: "/nonexistent/ca.pem" } },
      /proxy\.ca_bundle = "\/nonexistent\/ca\.pem" is invalid/,
    ],
    [{ proxy: { mode: "off" } }, /proxy\.mode = "off" is invalid: allowed values: "active", "passthrough"/],
  ])("%j → exit 2 with a message naming key, value and allowed range", async (config, message) => {
    const home = writeTestConfig({ config });
    const r = await runSluice(["serve", "--port", "0", "--dashboard-port", "0"], {
      env: { SLUICE_HOME: home },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/^\s+at /m); // no stack trace
  });

  test("invalid YAML and bad flags exit 2 too", async () => {
    const home = writeTestConfig();
    writeFileSync(join(home, "config.yaml"), "proxy:\n  timeout: [1,\n");
    const yaml = await runSluice(["serve"], { env: { SLUICE_HOME: home } });
    expect(yaml.code).toBe(2);
    expect(yaml.stderr).toContain("invalid YAML");
    const flag = await runSluice(["serve", "--format", "xml"], { env: { SLUICE_HOME: writeTestConfig() } });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--format = "xml" is invalid');
    const port = await runSluice(["serve", "--port", "70000"], { env: { SLUICE_HOME: writeTestConfig() } });
    expect(port.code).toBe(2);
  });

  test("verify_ssl: false warns at startup", async () => {
    await using p = await spawnSluice([], { upstream: up.url, config: { proxy: { verify_ssl: false } } });
    await p.waitForOutput(/proxy\.verify_ssl is false/);
  });
});

describe("signals", () => {
  test("SIGHUP with an invalid file keeps the old config and says why; a valid one is applied with its diff", async () => {
    await using p = await spawnSluice([], { upstream: up.url, config: { proxy: { timeout: 7 } } });
    const file = join(p.configDir, "config.yaml");
    const good = {
      proxy: { ca_bundle: testTls().caPath, timeout: 7 },
      providers: {
        openai: { upstream: up.url },
        anthropic: { upstream: up.url },
        gemini: { upstream: up.url },
      },
    };
    writeFileSync(file, stringify({ ...good, proxy: { ...good.proxy, timeout: 0 } }));
    p.kill("SIGHUP");
    await p.waitForOutput(
      /config reload \(sighup\) refused, keeping the old configuration: .*proxy\.timeout = 0/,
    );
    const res = await fetch(`${p.proxyUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-x" },
      body: "{}",
    });
    expect(res.status).toBe(200);
    writeFileSync(file, stringify({ ...good, proxy: { ...good.proxy, timeout: 9 } }));
    p.kill("SIGHUP");
    await p.waitForOutput(/config reloaded \(sighup\): .*proxy\.timeout: 7 -> 9/);
  });

  test("SIGHUP with a new port rebinds without dropping the request in flight", async () => {
    const port1 = freePort();
    await using p = await spawnSluice(["--dashboard-port", "0"], {
      upstream: up.url,
      config: { port: port1 },
      portFlags: false,
    });
    expect(p.proxyUrl).toBe(`http://127.0.0.1:${port1}`);
    const { ctl, res } = await openStream(p.proxyUrl, "data: before\n\n");
    const reader = res.body!.getReader();
    await reader.read();
    const port2 = freePort();
    const file = join(p.configDir, "config.yaml");
    const { parse } = await import("yaml");
    const cfg = parse(await Bun.file(file).text());
    writeFileSync(file, stringify({ ...cfg, port: port2 }));
    p.kill("SIGHUP");
    await p.waitForOutput(new RegExp(`proxy listening on http://127\\.0\\.0\\.1:${port2}`));
    const health = await fetch(`http://127.0.0.1:${port2}/health`);
    expect(health.status).toBe(200);
    // The old stream is still alive and completes.
    ctl.send("data: after\n\n");
    ctl.end();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe("data: after\n\n");
    // and the old port no longer accepts connections
    await expect(fetch(`http://127.0.0.1:${port1}/health`)).rejects.toThrow();
  });

  test("SIGTERM drains a request in flight, stops accepting, then prints the session summary", async () => {
    await using p = await spawnSluice([], { upstream: up.url });
    const { ctl, res } = await openStream(p.proxyUrl, "data: 1\n\n");
    p.kill("SIGTERM");
    await p.waitForOutput(/draining 1 request\(s\) in flight/);
    await expect(fetch(`${p.proxyUrl}/health`)).rejects.toThrow();
    ctl.send("data: 2\n\n");
    ctl.end();
    expect(await res.text()).toBe("data: 1\n\ndata: 2\n\n");
    expect(await p.exited).toBe(0);
    expect(p.output).toMatch(
      /session summary[\s\S]*requests: 1 \(pass 1\)[\s\S]*providers: anthropic 1[\s\S]*findings: 0/,
    );
  });

  test("a request still in flight at drain_timeout is force-closed with a warning", async () => {
    await using p = await spawnSluice([], { upstream: up.url, config: { proxy: { drain_timeout: 0.2 } } });
    const { res } = await openStream(p.proxyUrl, "data: 1\n\n");
    p.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    expect(p.output).toContain("force-closing 1 request(s)");
    await expect(res.text()).rejects.toThrow();
  });

  test("a second signal during the drain exits at once", async () => {
    await using p = await spawnSluice([], { upstream: up.url });
    await openStream(p.proxyUrl, "data: 1\n\n");
    p.kill("SIGINT");
    await p.waitForOutput(/draining 1 request/);
    p.kill("SIGINT");
    expect(await p.exited).toBe(130);
    expect(p.output).toContain("second SIGINT, exiting now");
  });
});

test("SIGTERM closes open WebSockets with 1001 and exits (server.stop never waits on them)", async () => {
  await using p = await spawnSluice([], { upstream: up.url });
  const ws = await openWebSocket(p.proxyUrl, "/v1/responses", { authorization: "Bearer sk-x" });
  const echoed = new Promise((r) => ws.addEventListener("message", r, { once: true }));
  ws.send("hello");
  await echoed;
  const closed = new Promise<CloseEvent>((r) => ws.addEventListener("close", (e) => r(e), { once: true }));
  p.kill("SIGTERM");
  expect((await closed).code).toBe(1001);
  expect(await p.exited).toBe(0);
  expect(p.output).toContain("session summary");
});

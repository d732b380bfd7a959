/**
 * Connections opened ahead of the next turn and how new ones are made: a warm-up (`HEAD /`) when a
 * host's connections idle out and at start for upstreams that saw traffic, each leaving a connection
 * the next turn runs on; HTTP/2 to an upstream that selects it (`proxy.upstream_http2`), HTTP/1.1 to
 * one that does not; TLS sessions resumed on new connections. Connections are counted at the
 * stand-in by the client port each request arrived from.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import http2 from "node:http2";
import { startSluice } from "../helpers/sluice.ts";
import { testTls } from "../helpers/tls.ts";
import { startUpstream, type Upstream } from "../helpers/upstream.ts";

const HEADERS = {
  "content-type": "application/json",
  "x-api-key": "sk-ant-test",
  "anthropic-version": "2023-06-01",
};
const STREAM = JSON.stringify({
  model: "m",
  max_tokens: 8,
  stream: true,
  messages: [{ role: "user", content: "hi" }],
});
const SSE =
  'event: message_start\ndata: {"type":"message_start"}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
  up.on(
    "POST",
    "/v1/messages",
    () => new Response(SSE, { headers: { "content-type": "text/event-stream" } }),
  );
});
afterAll(async () => {
  await up?.stop();
});

const turn = async (proxyUrl: string) => {
  const res = await fetch(`${proxyUrl}/v1/messages`, { method: "POST", headers: HEADERS, body: STREAM });
  expect(res.status).toBe(200);
  expect(await res.text()).toBe(SSE);
  return up.requests.at(-1)!;
};
const nextWarmUp = async () => {
  for (;;) {
    const r = await up.nextRequest();
    if (r.method === "HEAD") return r;
  }
};

test("when a host's connections idle out, a warm-up opens a new one and the next turn runs on it", async () => {
  // timeout 1 s: connections idle out after 2 s.
  await using s = await startSluice({
    upstream: up.url,
    dashboard: false,
    config: { proxy: { timeout: 1 } },
  });
  const first = await turn(s.proxyUrl);
  const warmUp = nextWarmUp();
  // The upstream drops the idle connection, as servers do after their keep-alive timeout.
  up.server.closeIdleConnections();
  const head = await warmUp;
  expect(head.path).toBe("/");
  expect(head.headers.get("x-api-key")).toBeNull(); // a warm-up carries no credentials
  expect(head.remotePort).not.toBe(first.remotePort);
  expect(await s.runtime.pool.warmedUp(new URL(up.url).host)).toBe(true);
  const next = await turn(s.proxyUrl);
  expect(next.remotePort).toBe(head.remotePort);
});

/** The config directory of a sluice that served one turn and stopped: its audit trail holds the turn. */
async function homeWithTraffic(): Promise<string> {
  const s = await startSluice({ upstream: up.url, dashboard: false });
  await turn(s.proxyUrl);
  await s.stop();
  return s.configDir;
}

test("at start sluice warms the upstreams that saw traffic, and the first turn runs on that connection", async () => {
  const home = await homeWithTraffic();
  const warmUp = nextWarmUp();
  await using s2 = await startSluice({ upstream: up.url, dashboard: false, home });
  const head = await warmUp;
  expect(await s2.runtime.pool.warmedUp(new URL(up.url).host)).toBe(true);
  const first = await turn(s2.proxyUrl);
  expect(first.remotePort).toBe(head.remotePort);
});

test("with proxy.warm_connections false nothing is opened at start", async () => {
  const home = await homeWithTraffic();
  const before = up.requests.length;
  await using s2 = await startSluice({
    upstream: up.url,
    dashboard: false,
    home,
    config: { proxy: { warm_connections: false } },
  });
  await turn(s2.proxyUrl);
  // A warm-up started at start would be in flight or done by now: none was sent.
  await s2.runtime.pool.warmedUp(new URL(up.url).host);
  expect(up.requests.slice(before).map((r) => r.method)).toEqual(["POST"]);
});

/** An HTTPS stand-in that offers HTTP/2 and HTTP/1.1 (ALPN), recording each request's version. */
async function http2Upstream() {
  const tls = testTls();
  const versions: string[] = [];
  let sessions = 0;
  const server = http2.createSecureServer({ cert: tls.cert, key: tls.key, allowHTTP1: true }, (req, res) => {
    versions.push(req.httpVersion);
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(SSE);
    });
  });
  server.on("session", () => sessions++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    versions,
    sessions: () => sessions,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

test("with proxy.upstream_http2, streams share one HTTP/2 connection to an upstream that offers it", async () => {
  const h2 = await http2Upstream();
  try {
    await using s = await startSluice({
      upstream: h2.url,
      dashboard: false,
      config: { proxy: { upstream_http2: true } },
    });
    const send = () => fetch(`${s.proxyUrl}/v1/messages`, { method: "POST", headers: HEADERS, body: STREAM });
    expect(await (await send()).text()).toBe(SSE);
    const concurrent = await Promise.all([send(), send(), send(), send()]);
    for (const r of concurrent) expect(await r.text()).toBe(SSE);
    expect(h2.versions).toEqual(["2.0", "2.0", "2.0", "2.0", "2.0"]);
    expect(h2.sessions()).toBe(1);
  } finally {
    await h2.stop();
  }
});

test("with proxy.upstream_http2, an upstream that only speaks HTTP/1.1 is reached over HTTP/1.1", async () => {
  await using s = await startSluice({
    upstream: up.url,
    dashboard: false,
    config: { proxy: { upstream_http2: true } },
  });
  const a = await turn(s.proxyUrl);
  const b = await turn(s.proxyUrl);
  expect(b.remotePort).toBe(a.remotePort); // and kept alive
});

test("a new upstream connection resumes the TLS session of an earlier one", async () => {
  const tls = testTls();
  // openssl's test server answers each request with a page that says whether the session was reused,
  // then closes the connection: every request through sluice needs a new one.
  const server = Bun.spawn(
    ["openssl", "s_server", "-www", "-accept", "127.0.0.1:0", "-cert", tls.certPath, "-key", tls.keyPath],
    { stdout: "pipe", stderr: "pipe" },
  );
  try {
    let out = "";
    const dec = new TextDecoder();
    for await (const chunk of server.stdout) {
      out += dec.decode(chunk);
      if (/ACCEPT .*:\d+/.test(out)) break;
    }
    const port = Number(out.match(/ACCEPT .*:(\d+)/)![1]);
    await using s = await startSluice({ upstream: `https://127.0.0.1:${port}`, dashboard: false });
    const status = async () => {
      const res = await fetch(`${s.proxyUrl}/v1/models`, { headers: { "x-api-key": "sk-ant-test" } });
      return (await res.text()).match(/(New|Reused), TLSv[\d.]+/)?.[0];
    };
    expect(await status()).toMatch(/^New, /);
    expect(await status()).toMatch(/^Reused, /);
  } finally {
    server.kill();
    await server.exited;
  }
});

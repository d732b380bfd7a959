/**
 * A pooled (kept-alive) upstream connection that went stale: the upstream resets it when the next
 * request arrives on it. sluice retries once on a fresh connection (bypassing the pool) and the
 * client never notices; with proxy.retries 0 the client gets the provider-shaped 502.
 */
import { expect, test } from "bun:test";
import type { Socket, TCPSocketListener } from "bun";
import { startSluice } from "../helpers/sluice.ts";
import { testTls } from "../helpers/tls.ts";

interface Conn {
  buf: string;
  served: number;
}

/** A raw HTTPS/1.1 server: answers the first request of each connection (keep-alive), resets on the second. */
function staleUpstream() {
  const tls = testTls();
  let connections = 0;
  let requests = 0;
  const server: TCPSocketListener<Conn> = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    socket: {
      open(s: Socket<Conn>) {
        connections++;
        s.data = { buf: "", served: 0 };
      },
      data(s: Socket<Conn>, chunk) {
        s.data.buf += chunk.toString("latin1");
        const end = s.data.buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const len = Number(s.data.buf.slice(0, end).match(/content-length:\s*(\d+)/i)?.[1] ?? 0);
        if (s.data.buf.length < end + 4 + len) return;
        s.data.buf = s.data.buf.slice(end + 4 + len);
        requests++;
        if (s.data.served++ >= 1) {
          s.terminate(); // the half-open pooled socket: reset on reuse
          return;
        }
        const body = JSON.stringify({ ok: true, n: requests });
        s.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n${body}`,
        );
      },
    },
  });
  return {
    url: `https://127.0.0.1:${server.port}`,
    stats: () => ({ connections, requests }),
    stop: () => server.stop(true),
  };
}

const send = (base: string) =>
  fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer sk-x" },
    body: "{}",
  });

test("a stale pooled connection is retried once on a fresh connection", async () => {
  const up = staleUpstream();
  try {
    await using s = await startSluice({
      upstream: up.url,
      dashboard: false,
      config: { proxy: { retries: 1 } },
    });
    const first = await send(s.proxyUrl);
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const second = await send(s.proxyUrl);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ ok: true, n: 3 });
    // request 1 on connection 1; request 2 reset on the reused connection 1; retry on connection 2
    expect(up.stats()).toEqual({ connections: 2, requests: 3 });
  } finally {
    up.stop();
  }
});

test("with proxy.retries 0 the stale connection's reset is a 502 in the provider's shape", async () => {
  const up = staleUpstream();
  try {
    await using s = await startSluice({
      upstream: up.url,
      dashboard: false,
      config: { proxy: { retries: 0 } },
    });
    await (await send(s.proxyUrl)).arrayBuffer();
    const second = await send(s.proxyUrl);
    expect(second.status).toBe(502);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe("upstream_unreachable");
  } finally {
    up.stop();
  }
});

test("after 2 × proxy.timeout idle the pooled connection is evicted: the next request opens a fresh one", async () => {
  const up = staleUpstream();
  try {
    await using s = await startSluice({
      upstream: up.url,
      dashboard: false,
      // Eviction alone: no warm-up probes the pool in the meantime.
      config: { proxy: { retries: 0, timeout: 1, warm_connections: false } },
    });
    await (await send(s.proxyUrl)).arrayBuffer();
    // The idle time under test: longer than 2 × timeout (2 s).
    await Bun.sleep(2100);
    const second = await send(s.proxyUrl);
    // No retry allowed, yet no reset: the stale connection was not reused.
    expect(second.status).toBe(200);
    expect(up.stats()).toEqual({ connections: 2, requests: 2 });
  } finally {
    up.stop();
  }
});

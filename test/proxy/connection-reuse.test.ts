/**
 * Upstream connections for streams: a stream that ends cleanly leaves its connection for the next
 * request; one cut short (client gone, upstream cut) closes its own and never poisons the pool;
 * 100 concurrent streams stay correct with reuse on; `proxy.reuse_stream_connections: false` brings
 * back one fresh connection per stream. Connections are counted at the stand-in upstream by the
 * client port each request arrived from.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import {
  type RecordedRequest,
  type SseControl,
  sse,
  startUpstream,
  type Upstream,
} from "../helpers/upstream.ts";

const HEADERS = {
  "content-type": "application/json",
  "x-api-key": "sk-ant-test",
  "anthropic-version": "2023-06-01",
};
const streamBody = (text = "hi") =>
  JSON.stringify({ model: "m", max_tokens: 8, stream: true, messages: [{ role: "user", content: text }] });

/** A stand-in whose /v1/messages streams are driven by the test (`next()` hands over the next one). */
async function drivenUpstream(): Promise<{ up: Upstream; next: () => Promise<SseControl> }> {
  const up = await startUpstream();
  const waiting: ((c: SseControl) => void)[] = [];
  const ready: SseControl[] = [];
  up.on("POST", "/v1/messages", () => {
    const c = sse();
    const w = waiting.shift();
    if (w) w(c);
    else ready.push(c);
    return c.response();
  });
  const next = () =>
    new Promise<SseControl>((r) => {
      const c = ready.shift();
      if (c) r(c);
      else waiting.push(r);
    });
  return { up, next };
}

const post = (s: InProcessSluice, signal?: AbortSignal, text?: string) =>
  fetch(`${s.proxyUrl}/v1/messages`, { method: "POST", headers: HEADERS, body: streamBody(text), signal });

/** One whole streamed turn through sluice; returns the text the client received. */
async function turn(s: InProcessSluice, next: () => Promise<SseControl>, events: string[]): Promise<string> {
  const stream = next();
  const res = post(s);
  const ctl = await stream;
  for (const e of events) ctl.send(e);
  ctl.end();
  const r = await res;
  expect(r.status).toBe(200);
  return r.text();
}

const EVENTS = [
  'event: message_start\ndata: {"type":"message_start"}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
];

describe("with reuse on (the default)", () => {
  let up: Upstream;
  let next: () => Promise<SseControl>;
  let s: InProcessSluice;
  beforeAll(async () => {
    ({ up, next } = await drivenUpstream());
    s = await startSluice({ upstream: up.url, dashboard: false });
  });
  afterAll(async () => {
    await s?.stop();
    await up?.stop();
  });

  test("a stream that ends cleanly leaves its connection, and the next request uses it", async () => {
    const before = up.requests.length;
    expect(await turn(s, next, EVENTS)).toBe(EVENTS.join(""));
    expect(await turn(s, next, EVENTS)).toBe(EVENTS.join(""));
    const [a, b] = up.requests.slice(before);
    expect(b!.remotePort).toBe(a!.remotePort);
    // A non-streaming request after them reuses it too.
    const plain = await fetch(`${s.proxyUrl}/v1/messages/count_tokens`, {
      method: "POST",
      headers: HEADERS,
      body: "{}",
    });
    await plain.arrayBuffer();
    expect(up.requests.at(-1)!.remotePort).toBe(a!.remotePort);
  });

  test("a stream the client aborts closes its connection; the next request succeeds on another", async () => {
    await turn(s, next, EVENTS); // a pooled connection exists
    const stream = next();
    const abort = new AbortController();
    const resP = post(s, abort.signal);
    const ctl = await stream;
    const aborted = up.requests.at(-1)!;
    ctl.send(EVENTS[0]!);
    const reader = (await resP).body!.getReader();
    await reader.read();
    abort.abort();
    await ctl.cancelled; // sluice cut the upstream side
    expect(await turn(s, next, EVENTS)).toBe(EVENTS.join(""));
    const after = up.requests.at(-1)!;
    expect(after.remotePort).not.toBe(aborted.remotePort);
    // And that new connection is pooled in its turn.
    await turn(s, next, EVENTS);
    expect(up.requests.at(-1)!.remotePort).toBe(after.remotePort);
  });

  test("a stream the upstream cuts mid-body reaches the client as an error; the next request succeeds", async () => {
    await turn(s, next, EVENTS);
    const stream = next();
    const resP = post(s);
    const ctl = await stream;
    const cut = up.requests.at(-1)!;
    ctl.send(EVENTS[0]!);
    const res = await resP;
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(EVENTS[0]!);
    ctl.abort();
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return "ended cleanly";
      })(),
    ).rejects.toThrow();
    expect(await turn(s, next, EVENTS)).toBe(EVENTS.join(""));
    expect(up.requests.at(-1)!.remotePort).not.toBe(cut.remotePort);
  });

  test("100 concurrent streams stay correct, twice over, reusing connections", async () => {
    const wave = async (w: number) => {
      const handed: SseControl[] = [];
      const requests: Promise<Response>[] = [];
      const controls = Array.from({ length: 100 }, () => next());
      for (let i = 0; i < 100; i++) requests.push(post(s, undefined, `wave ${w} stream ${i}`));
      for (const c of controls) handed.push(await c);
      // Every upstream stream answers with the body it received, in three chunks, interleaved.
      const recorded = up.requests.slice(-100);
      const text = (r: RecordedRequest) =>
        (JSON.parse(new TextDecoder().decode(r.body)) as { messages: { content: string }[] }).messages[0]!
          .content;
      for (let part = 0; part < 3; part++)
        for (const [i, c] of handed.entries())
          c.send(`data: {"part":${part},"echo":${JSON.stringify(text(recorded[i]!))}}\n\n`);
      for (const c of handed) c.end();
      const bodies = await Promise.all(requests.map(async (r) => (await r).text()));
      for (const [i, b] of bodies.entries()) {
        const echo = JSON.stringify(`wave ${w} stream ${i}`);
        expect(b).toBe([0, 1, 2].map((p) => `data: {"part":${p},"echo":${echo}}\n\n`).join(""));
      }
    };
    const before = up.connections;
    await wave(1);
    const afterFirst = up.connections;
    await wave(2);
    // The second wave runs on connections the first one left (Bun keeps up to 64 idle sockets).
    expect(up.connections - afterFirst).toBeLessThan(afterFirst - before);
  });
});

test("with proxy.reuse_stream_connections false every stream opens and closes its own connection", async () => {
  const { up, next } = await drivenUpstream();
  try {
    await using s = await startSluice({
      upstream: up.url,
      dashboard: false,
      config: { proxy: { reuse_stream_connections: false } },
    });
    await turn(s, next, EVENTS);
    await turn(s, next, EVENTS);
    await turn(s, next, EVENTS);
    expect(up.connections).toBe(3);
  } finally {
    await up.stop();
  }
});

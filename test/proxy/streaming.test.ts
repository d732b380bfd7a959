/**
 * SSE relay: chunks arrive one by one (the first before the upstream sends the second), many
 * concurrent streams, and a client that goes away cancels the upstream, before its answer started or
 * while it streams.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import {
  hang,
  type RecordedRequest,
  type SseControl,
  sse,
  startUpstream,
  type Upstream,
} from "../helpers/upstream.ts";

let up: Upstream;
let s: InProcessSluice;
const streams: SseControl[] = [];
let onStream: ((c: SseControl) => void) | null = null;
let onHeld: ((req: RecordedRequest) => void) | null = null;

beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => {
    const c = sse();
    streams.push(c);
    onStream?.(c);
    return c.response();
  });
  up.on("POST", "/v1/messages/hang", (req, raw) => {
    onHeld?.(req);
    return hang(req, raw);
  });
  s = await startSluice({ upstream: up.url });
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

const body = JSON.stringify({
  model: "m",
  max_tokens: 1,
  stream: true,
  messages: [{ role: "user", content: "hi" }],
});
const post = (signal?: AbortSignal) =>
  fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
    body,
    signal,
  });

function nextStream(): Promise<SseControl> {
  return new Promise((r) => (onStream = r));
}

test("SSE chunks are relayed one by one, each before the upstream sends the next", async () => {
  const ready = nextStream();
  const resP = post();
  const ctl = await ready;
  ctl.send('event: message_start\ndata: {"n":1}\n\n');
  const res = await resP;
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  const first = await reader.read();
  expect(dec.decode(first.value)).toBe('event: message_start\ndata: {"n":1}\n\n');
  // Only now does the upstream send the second chunk.
  ctl.send('data: {"n":2}\n\n');
  const second = await reader.read();
  expect(dec.decode(second.value)).toBe('data: {"n":2}\n\n');
  ctl.send('data: {"n":3}\n\n');
  ctl.end();
  let rest = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    rest += dec.decode(value);
  }
  expect(rest).toBe('data: {"n":3}\n\n');
});

test("100 concurrent streams are relayed independently", async () => {
  const before = streams.length;
  const all: Promise<SseControl>[] = [];
  const waiters: ((c: SseControl) => void)[] = [];
  for (let i = 0; i < 100; i++) all.push(new Promise((r) => waiters.push(r)));
  let k = 0;
  onStream = (c) => waiters[k++]!(c);
  const responses = Array.from({ length: 100 }, () => post());
  const ctls = await Promise.all(all);
  expect(streams.length - before).toBe(100);
  // Interleave: every stream gets chunk 1, then every stream chunk 2, then ends.
  for (const [i, c] of ctls.entries()) c.send(`data: {"i":${i},"part":1}\n\n`);
  for (const [i, c] of ctls.entries()) {
    c.send(`data: {"i":${i},"part":2}\n\n`);
    c.end();
  }
  const texts = await Promise.all(responses.map(async (r) => (await r).text()));
  const seen = new Set<number>();
  for (const t of texts) {
    const m = t.match(/^data: \{"i":(\d+),"part":1\}\n\ndata: \{"i":\1,"part":2\}\n\n$/);
    expect(m).not.toBeNull();
    seen.add(Number(m![1]));
  }
  expect(seen.size).toBe(100);
  expect(s.runtime.stats().active_requests).toBe(0);
});

test("a client that goes away cancels the upstream stream", async () => {
  const ready = nextStream();
  const ac = new AbortController();
  const resP = post(ac.signal);
  const ctl = await ready;
  ctl.send("data: 1\n\n");
  const res = await resP;
  const reader = res.body!.getReader();
  await reader.read();
  ac.abort();
  await ctl.cancelled; // resolves only if sluice cancelled its upstream read
  expect(true).toBe(true);
});

test("a client that goes away before the answer started cancels the upstream request; the next one is answered", async () => {
  const arrived = new Promise<RecordedRequest>((r) => (onHeld = r));
  const ac = new AbortController();
  const resP = fetch(`${s.proxyUrl}/v1/messages/hang`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
    body,
    signal: ac.signal,
  }).catch((e: Error) => e);
  const held = await arrived;
  ac.abort();
  expect(await resP).toBeInstanceOf(Error);
  await held.closed; // sluice aborted its upstream request: the stand-in saw it go
  expect(held.aborted).toBe(true);
  const ready = nextStream();
  const resP2 = post();
  const ctl = await ready;
  ctl.send("data: after\n\n");
  ctl.end();
  expect(await (await resP2).text()).toBe("data: after\n\n");
});

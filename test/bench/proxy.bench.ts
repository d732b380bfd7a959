/**
 * Proxy benchmark: direct-to-upstream vs through sluice, side by side in one run. The stand-in
 * upstream (HTTPS, test CA) runs in this process; sluice runs as a subprocess (`bun src/cli.ts serve`)
 * so that its RSS can be read from /proc. Measured twice: sluice as shipped (active, default rules)
 * and in passthrough mode (the proxy alone, no scanning).
 */
import { readFileSync } from "node:fs";
import { type SpawnedSluice, spawnSluice, warmedUp } from "../helpers/sluice.ts";
import { testTls } from "../helpers/tls.ts";
import { startUpstream, type Upstream } from "../helpers/upstream.ts";
import type { BenchTable } from "./index.ts";

const KB = 1024;

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const ms = (x: number) => x.toFixed(3);

/** A realistic request body of about `size` bytes: a chat with prose, no secrets. */
function body(size: number): string {
  const words =
    "the quick brown fox jumps over a lazy dog while refactoring the parser module and tests".split(" ");
  const base = { model: "claude-bench", max_tokens: 64, messages: [] as { role: string; content: string }[] };
  const overhead = JSON.stringify(base).length + 40;
  let text = "";
  let i = 0;
  while (text.length < size - overhead) text += `${words[i++ % words.length]} `;
  base.messages.push({ role: "user", content: text.slice(0, size - overhead) });
  return JSON.stringify(base);
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
  return kb / 1024;
}

interface Target {
  name: string;
  base: string;
  init: RequestInit;
}

async function timeOne(t: Target, payload: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${t.base}/v1/messages`, {
    ...t.init,
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "sk-ant-bench",
      "anthropic-version": "2023-06-01",
    },
    body: payload,
  });
  await res.arrayBuffer();
  return performance.now() - t0;
}

/** Interleave direct and proxied requests so that machine noise hits both alike. */
/** `payload` is one body repeated, or a function giving a fresh body per request (content never seen before). */
async function latency(
  targets: Target[],
  payload: string | ((i: number) => string),
  n: number,
): Promise<number[][]> {
  const at = (i: number) => (typeof payload === "string" ? payload : payload(i));
  const out = targets.map(() => [] as number[]);
  for (let i = 0; i < Math.min(200, n); i++) for (const t of targets) await timeOne(t, at(-i - 1));
  for (let i = 0; i < n; i++) {
    const p = at(i);
    for (const [k, t] of targets.entries()) out[k]!.push(await timeOne(t, p));
  }
  return out;
}

/** A 200 KB body whose text differs in every request: the scanner's per-session cache cannot help. */
function freshBody(size: number): (i: number) => string {
  const base = body(size);
  return (i) =>
    base.replace('"content":"', `"content":"request ${i} ${Math.random().toString(36).slice(2)} `);
}

async function ttfb(t: Target, n: number): Promise<number[]> {
  const xs: number[] = [];
  const payload = JSON.stringify({
    model: "m",
    stream: true,
    max_tokens: 8,
    messages: [{ role: "user", content: "hi" }],
  });
  for (let i = 0; i < n + 20; i++) {
    const t0 = performance.now();
    const res = await fetch(`${t.base}/v1/messages?stream`, {
      ...t.init,
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sk-ant-bench" },
      body: payload,
    });
    const reader = res.body!.getReader();
    await reader.read();
    if (i >= 20) xs.push(performance.now() - t0);
    while (!(await reader.read()).done) {}
  }
  return xs;
}

async function throughput(
  t: Target,
  payload: string,
  seconds: number,
  concurrency: number,
  sample?: () => void,
): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  const sampler = sample ? setInterval(sample, 200) : null;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        await timeOne(t, payload);
        done++;
      }
    }),
  );
  if (sampler) clearInterval(sampler);
  return done / seconds;
}

async function startBenchUpstream(): Promise<Upstream> {
  const up = await startUpstream();
  const answer = JSON.stringify({
    id: "msg_bench",
    type: "message",
    role: "assistant",
    content: [{ type: "text", text: "ok" }],
    usage: { input_tokens: 1, output_tokens: 1 },
  });
  up.on("POST", "/v1/messages", (r) => {
    if (r.path.includes("stream")) {
      const enc = new TextEncoder();
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(enc.encode('event: message_start\ndata: {"type":"message_start"}\n\n'));
          setTimeout(() => {
            c.enqueue(enc.encode('event: message_stop\ndata: {"type":"message_stop"}\n\n'));
            c.close();
          }, 2);
        },
      });
      return new Response(stream, { headers: { "content-type": "text/event-stream" } });
    }
    return new Response(answer, { headers: { "content-type": "application/json" } });
  });
  // Don't keep every request of the benchmark in memory.
  const reqs = up.requests;
  setInterval(() => reqs.splice(0), 500).unref();
  return up;
}

/**
 * What tracing costs a request: two sluice processes side by side, tracing off and on (exporting to
 * an in-process OTLP receiver that accepts everything), requests interleaved between them.
 */
async function tracingCost(up: Upstream, quick: boolean): Promise<BenchTable> {
  let exported = 0;
  const receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      exported += (await req.arrayBuffer()).byteLength;
      return Response.json({});
    },
  });
  const start = (tracing: boolean) =>
    spawnSluice([], {
      upstream: up.url,
      config: {
        logging: { level: "error" },
        tracing: { enabled: tracing, endpoint: `http://127.0.0.1:${receiver.port}/v1/traces` },
      },
    });
  const off = await start(false);
  const on = await start(true);
  const rows: (string | number)[][] = [];
  try {
    const offT: Target = { name: "off", base: off.proxyUrl, init: {} };
    const onT: Target = { name: "on", base: on.proxyUrl, init: {} };
    for (const size of [KB, 200 * KB]) {
      const n = quick ? 100 : size === KB ? 2000 : 500;
      const [a, b] = await latency([offT, onT], body(size), n);
      rows.push([
        `${size / KB} KB`,
        ms(percentile(a!, 50)),
        ms(percentile(a!, 99)),
        ms(percentile(b!, 50)),
        ms(percentile(b!, 99)),
        ms(percentile(b!, 50) - percentile(a!, 50)),
      ]);
    }
  } finally {
    for (const s of [off, on]) {
      s.kill("SIGTERM");
      await s.exited;
    }
    receiver.stop(true);
  }
  return {
    title: "Proxy: tracing off vs on (ms, through sluice, active mode)",
    columns: ["body", "off p50", "off p99", "on p50", "on p99", "added p50"],
    rows,
    notes: [
      "Two sluice processes, requests interleaved; tracing on exports every request's three spans over OTLP/HTTP to an in-process receiver.",
      `The receiver took ${(exported / 1024).toFixed(0)} KB of OTLP/JSON.`,
    ],
  };
}

export async function run(): Promise<BenchTable[]> {
  const quick = process.env.SLUICE_BENCH_QUICK === "1";
  const up = await startBenchUpstream();
  const tls = testTls();
  const direct: Target = { name: "direct", base: up.url, init: { tls: { ca: [tls.ca] } } as RequestInit };
  const tables: BenchTable[] = [];
  const latencyRows: (string | number)[][] = [];
  const loadRows: (string | number)[][] = [];
  const notes: string[] = [];
  let directDone = false;
  const directLat = new Map<number, number[]>();
  let directTtfb: number[] = [];
  let directRps = 0;

  for (const mode of ["active", "passthrough"] as const) {
    const s: SpawnedSluice = await spawnSluice([], {
      upstream: up.url,
      warmUp: true,
      config: { proxy: { mode }, logging: { level: "error" } },
    });
    await warmedUp(s.proxyUrl);
    try {
      const via: Target = { name: `sluice (${mode})`, base: s.proxyUrl, init: {} };
      const pid = s.proc.pid;
      // Let startup settle (rules compiled, store open) before reading idle RSS.
      await timeOne(via, body(KB));
      await Bun.sleep(500);
      Bun.gc(true);
      const idle = rssMb(pid);
      for (const size of [KB, 200 * KB]) {
        const n = quick ? 100 : size === KB ? 2000 : 500;
        const [d, v] = directDone
          ? [directLat.get(size)!, (await latency([via], body(size), n))[0]!]
          : await latency([direct, via], body(size), n);
        directLat.set(size, d!);
        const dp50 = percentile(d!, 50);
        const dp99 = percentile(d!, 99);
        const vp50 = percentile(v!, 50);
        const vp99 = percentile(v!, 99);
        latencyRows.push([
          `${size / KB} KB`,
          `sluice (${mode})`,
          ms(dp50),
          ms(dp99),
          ms(vp50),
          ms(vp99),
          ms(vp50 - dp50),
          ms(vp99 - dp99),
        ]);
      }
      {
        const n = quick ? 50 : 300;
        const [d, v] = await latency([direct, via], freshBody(200 * KB), n);
        latencyRows.push([
          "200 KB fresh",
          `sluice (${mode})`,
          ms(percentile(d!, 50)),
          ms(percentile(d!, 99)),
          ms(percentile(v!, 50)),
          ms(percentile(v!, 99)),
          ms(percentile(v!, 50) - percentile(d!, 50)),
          ms(percentile(v!, 99) - percentile(d!, 99)),
        ]);
      }
      if (!directDone) directTtfb = await ttfb(direct, quick ? 50 : 300);
      const st = await ttfb(via, quick ? 50 : 300);
      latencyRows.push([
        "SSE TTFB",
        `sluice (${mode})`,
        ms(percentile(directTtfb, 50)),
        ms(percentile(directTtfb, 99)),
        ms(percentile(st, 50)),
        ms(percentile(st, 99)),
        ms(percentile(st, 50) - percentile(directTtfb, 50)),
        ms(percentile(st, 99) - percentile(directTtfb, 99)),
      ]);
      const secs = quick ? 2 : 5;
      if (!directDone) directRps = await throughput(direct, body(KB), secs, 50);
      let peak = 0;
      const rps = await throughput(via, body(KB), secs, 50, () => {
        peak = Math.max(peak, rssMb(pid));
      });
      loadRows.push([
        `sluice (${mode})`,
        Math.round(directRps),
        Math.round(rps),
        idle.toFixed(1),
        peak.toFixed(1),
      ]);
      directDone = true;
    } finally {
      s.kill("SIGKILL");
      await s.exited;
    }
  }
  tables.push(await tracingCost(up, quick));
  await up.stop();
  tables.push({
    title: "Proxy: latency, direct vs through sluice (ms)",
    columns: ["body", "path", "direct p50", "direct p99", "via p50", "via p99", "added p50", "added p99"],
    rows: latencyRows,
    notes: [
      "Sequential requests, direct and proxied interleaved; upstream is an in-process HTTPS stand-in answering a small JSON body.",
      "Added = via − direct at the same percentile. SSE TTFB = time to the first body chunk of a streamed response.",
      '"200 KB fresh": every request\'s text differs, so the scanner cannot reuse its per-session cache.',
      ...notes,
    ],
  });
  tables.push({
    title: "Proxy: throughput at 50 concurrent (1 KB bodies) and sluice RSS",
    columns: ["path", "direct req/s", "via req/s", "RSS idle (MB)", "RSS under load, peak (MB)"],
    rows: loadRows,
    notes: [
      "Client, upstream and sluice share the same 2 cores, so req/s is a floor for the proxy alone.",
      "Targets: added p50 ≤ 1 ms and p99 ≤ 5 ms at 200 KB; ≥ 3,000 req/s at 1 KB; idle RSS ≤ 80 MB.",
    ],
  });
  return tables;
}

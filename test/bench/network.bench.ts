/**
 * `bun run bench network`: what sluice adds to a streamed turn on a real network. A delaying TCP
 * link (`test/helpers/slow-link.ts`) stands between the HTTPS stand-in upstream and everyone who
 * reaches it: the direct client (Bun's fetch with keep-alive, as the SDKs do) and sluice (a
 * subprocess, `bun src/cli.ts serve`, active mode with the default rules). The client reaches sluice
 * over loopback, as on a developer's machine.
 *
 * Per round-trip time (50 ms, 10 ms): 30 sequential streamed turns of a Claude Code request body
 * (`test/fixtures/claude-code-request.json`, one new message per turn, same session), direct and
 * through sluice interleaved turn by turn; 30 more, each sent together with a title request, as
 * Claude Code sends one in the same session with the turn of every prompt
 * (`claude-code-title-request.json`, recorded from Claude Code 2.1.332, not measured itself); then
 * the same for the Codex WebSocket transport (one socket per client, per turn the `response.create`
 * frame Codex 0.169 sent, recorded in `test/fixtures/logins/`, with one more exchange). Each path's first turn opens its
 * connections and is reported apart. Measured: time to the first byte of the answer and to its end.
 * `SLUICE_BENCH_RELAY=1` puts a bare WebSocket relay (`ws-relay.ts`) on the Codex rows as well.
 *
 * Then, at 50 ms: HTTP/2 against keep-alive HTTP/1.1 from Bun's fetch to an upstream that offers both,
 * and what TLS session resumption saves on a new connection.
 */
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import https from "node:https";
import { join } from "node:path";
import { type SlowLink, startSlowLink } from "../helpers/slow-link.ts";
import { followOutput, type SpawnedSluice, spawnSluice, warmedUp } from "../helpers/sluice.ts";
import { testTls } from "../helpers/tls.ts";
import { startUpstream, type Upstream } from "../helpers/upstream.ts";
import type { BenchTable } from "./index.ts";

const FIXTURE = join(import.meta.dir, "../fixtures/claude-code-request.json");
const TITLE_FIXTURE = join(import.meta.dir, "../fixtures/claude-code-title-request.json");
/** A `response.create` frame as Codex 0.169 sent it over its WebSocket (about 70 KB). */
const CODEX_FRAME = join(import.meta.dir, "../fixtures/logins/codex-chatgpt-ws-frame-turn.body.json");
const TURNS = Number(process.env.SLUICE_BENCH_TURNS ?? 30);
/** `SLUICE_BENCH_RTTS=50` measures one round-trip time only. */
const RTTS = (process.env.SLUICE_BENCH_RTTS ?? "50,10").split(",").map(Number);
/**
 * `SLUICE_BENCH_BASELINE=<dir>`: also run the sluice of another checkout (its `src/cli.ts`, e.g. main
 * unpacked by `git archive`), interleaved with this one in the same run.
 */
const BASELINE = process.env.SLUICE_BENCH_BASELINE;
/** `SLUICE_BENCH_QUICK=1`: only the streamed turns, without the streams-closed variant and the protocol tables. */
const QUICK = process.env.SLUICE_BENCH_QUICK === "1";
/**
 * `SLUICE_BENCH_WS_DEFLATE=1`: the stand-in's WebSockets accept permessage-deflate, which the Codex
 * client offers (as Codex does): the direct client then compresses each frame, and through sluice
 * sluice does (its client side never compresses).
 */
const WS_DEFLATE = process.env.SLUICE_BENCH_WS_DEFLATE === "1";
/** `SLUICE_BENCH_RELAY=1`: a bare WebSocket relay (`ws-relay.ts`) on the Codex rows too, the floor of any relay. */
const RELAY = process.env.SLUICE_BENCH_RELAY === "1";
/** Events in one streamed answer, and the upstream's pause between two of them (ms). */
const EVENTS = 6;
const EVENT_GAP_MS = 2;

const ms = (x: number) => x.toFixed(1);
/** The nearest-rank percentile `p` of `xs`. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

interface Sample {
  ttfb: number;
  total: number;
}

// ---------------------------------------------------------------- request bodies

type Json = Record<string, unknown>;

/** The fixture with `turn` more exchanges appended: each turn's body is new, its history is not. */
export function claudeTurn(base: Json, turn: number): string {
  const messages = [...(base.messages as unknown[])];
  for (let i = 0; i < turn; i++)
    messages.push(
      {
        role: "assistant",
        content: [{ type: "text", text: `Step ${i} done: the expiry test now uses the injected clock.` }],
      },
      {
        role: "user",
        content: [{ type: "text", text: `Good. Now check step ${i + 1} of the plan and run its tests.` }],
      },
    );
  return JSON.stringify({ ...base, messages });
}

/** The recorded title request of Claude Code, naming a session whose prompt is the one of `turn`. */
function titleRequest(title: Json, turn: number): string {
  const [message] = title.messages as { content: { text: string }[] }[];
  const text = message!.content[0]!.text.replace(
    "fix the expiry test in clock.ts",
    `Good. Now check step ${turn} of the plan and run its tests.`,
  );
  return JSON.stringify({
    ...title,
    messages: [{ ...message, content: [{ ...message!.content[0], text }] }],
  });
}

/** The recorded Codex turn frame with `turn` more exchanges appended to its input. */
function codexTurn(frame: Json, turn: number): string {
  const input = [...(frame.input as unknown[])];
  for (let i = 0; i < turn; i++)
    input.push(
      {
        type: "message",
        role: "assistant",
        content: [
          { type: "output_text", text: `Step ${i} done: the expiry test now uses the injected clock.` },
        ],
      },
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: `Good. Now check step ${i + 1} of the plan and run its tests.` },
        ],
      },
    );
  return JSON.stringify({ ...frame, input });
}

export const CLAUDE_HEADERS = {
  "content-type": "application/json",
  accept: "application/json",
  "anthropic-version": "2023-06-01",
  "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27",
  "x-api-key": "sk-ant-api03-bench",
  "x-app": "cli",
  "user-agent": "claude-cli/2.1.197 (external, sdk-cli)",
};

// ---------------------------------------------------------------- the stand-in upstream

async function startBenchUpstream(): Promise<Upstream> {
  const up = await startUpstream({ wsDeflate: WS_DEFLATE });
  const enc = new TextEncoder();
  const event = (type: string, data: Json) =>
    enc.encode(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  up.on("POST", "/v1/messages", () => {
    const stream = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(
          event("message_start", {
            message: { id: "msg_bench", type: "message", role: "assistant", content: [] },
          }),
        );
        for (let i = 0; i < EVENTS; i++) {
          await Bun.sleep(EVENT_GAP_MS);
          c.enqueue(
            event("content_block_delta", { index: 0, delta: { type: "text_delta", text: `word ${i} ` } }),
          );
        }
        c.enqueue(event("message_stop", {}));
        c.close();
      },
    });
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  });
  up.ws("/v1/responses", {
    async message(ws) {
      ws.send(JSON.stringify({ type: "response.created", response: { id: "resp_bench" } }));
      for (let i = 0; i < EVENTS; i++) {
        await Bun.sleep(EVENT_GAP_MS);
        ws.send(JSON.stringify({ type: "response.output_text.delta", delta: `word ${i} ` }));
      }
      ws.send(JSON.stringify({ type: "response.completed", response: { id: "resp_bench" } }));
    },
  });
  // Don't keep every request of the benchmark in memory.
  setInterval(() => up.requests.splice(0), 1000).unref();
  return up;
}

// ---------------------------------------------------------------- one turn

/** One streamed HTTP turn: time to the first body chunk and to the end of the stream. */
async function httpTurn(base: string, body: string, init: RequestInit = {}): Promise<Sample> {
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/messages?beta=true`, {
    ...init,
    method: "POST",
    headers: CLAUDE_HEADERS,
    body,
  });
  if (res.status !== 200) throw new Error(`turn answered ${res.status}: ${await res.text()}`);
  const reader = res.body!.getReader();
  let ttfb = 0;
  let text = "";
  const dec = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!ttfb) ttfb = performance.now() - t0;
    text += dec.decode(value, { stream: true });
  }
  if (!text.includes("message_stop")) throw new Error("stream ended early");
  return { ttfb, total: performance.now() - t0 };
}

/** A Codex-style WebSocket: open once, then one turn per frame. */
async function openCodexSocket(url: string, tlsCa?: string): Promise<{ ws: WebSocket; openMs: number }> {
  const t0 = performance.now();
  const ws = new WebSocket(url, {
    headers: {
      authorization: "Bearer sk-proj-bench",
      originator: "codex_cli_rs",
      "openai-beta": "responses_websockets=2026-02-06",
    },
    ...(tlsCa ? { tls: { ca: tlsCa } } : {}),
  } as unknown as string[]);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`WebSocket to ${url} failed`));
  });
  return { ws, openMs: performance.now() - t0 };
}

function wsTurn(ws: WebSocket, frame: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let ttfb = 0;
    const onMessage = (e: MessageEvent) => {
      if (!ttfb) ttfb = performance.now() - t0;
      if (String(e.data).includes('"response.completed"')) {
        ws.removeEventListener("message", onMessage);
        ws.removeEventListener("close", onClose);
        resolve({ ttfb, total: performance.now() - t0 });
      }
    };
    const onClose = (e: CloseEvent) => reject(new Error(`socket closed mid-turn: ${e.code} ${e.reason}`));
    ws.addEventListener("message", onMessage);
    ws.addEventListener("close", onClose);
    ws.send(frame);
  });
}

// ---------------------------------------------------------------- the runs

interface Path {
  name: string;
  sluice?: SpawnedSluice;
  /** The bare relay's ws:// URL (Codex rows only). */
  relay?: string;
}

/** The bare relay of `ws-relay.ts` in front of the link, as a subprocess like sluice. */
async function spawnRelay(link: SlowLink): Promise<{ url: string; stop: () => Promise<void> }> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "ws-relay.ts")], {
    env: {
      ...process.env,
      SLUICE_RELAY_TARGET: link.url.replace("https", "wss"),
      SLUICE_RELAY_CA: testTls().caPath,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = followOutput(proc);
  const m = await out.waitForOutput(/relay listening on (\d+)/);
  return {
    url: `ws://127.0.0.1:${m[1]}`,
    stop: async () => {
      proc.kill("SIGKILL");
      await out.exited;
    },
  };
}

/** A sluice as it runs by default (with its start-up warm-up, when it has one, over before it is measured). */
async function spawnFor(link: SlowLink, config: Json, checkout?: string): Promise<SpawnedSluice> {
  const s = await spawnSluice([], {
    upstream: link.url,
    dashboard: false,
    warmUp: true,
    config: { logging: { level: "error" }, ...config },
    ...(checkout ? { command: [process.execPath, join(checkout, "src/cli.ts"), "serve"] } : {}),
  });
  await warmedUp(s.proxyUrl);
  return s;
}

/** CPU time (user + system) a process has used so far, ms; null where /proc is not there. */
function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

function rows(label: string, direct: Sample[], via: Sample[], name: string): (string | number)[][] {
  const out: (string | number)[][] = [];
  for (const k of ["ttfb", "total"] as const) {
    const d = direct.map((s) => s[k]);
    const v = via.map((s) => s[k]);
    out.push([
      `${label} ${k === "ttfb" ? "TTFB" : "total"}`,
      name,
      ms(percentile(d, 50)),
      ms(percentile(d, 99)),
      ms(percentile(v, 50)),
      ms(percentile(v, 99)),
      ms(percentile(v, 50) - percentile(d, 50)),
      ms(percentile(v, 99) - percentile(d, 99)),
    ]);
  }
  return out;
}

async function runAt(
  rtt: number,
  up: Upstream,
  base: Json,
  title: Json,
  frame: Json,
  variants: { name: string; config: Json; checkout?: string }[],
): Promise<BenchTable> {
  const ca = testTls().ca;
  await using link = await startSlowLink({ port: up.port, rttMs: rtt });
  const paths: Path[] = [{ name: "direct" }];
  for (const v of variants) paths.push({ name: v.name, sluice: await spawnFor(link, v.config, v.checkout) });
  const relay = RELAY ? await spawnRelay(link) : null;
  const tableRows: (string | number)[][] = [];
  const notes: string[] = [];
  try {
    const baseOf = (p: Path) => p.sluice?.proxyUrl ?? link.url;
    const initOf = (p: Path) => (p.sluice ? {} : ({ tls: { ca } } as RequestInit));
    // HTTP/SSE: the first turn of each path opens its connections.
    const first = new Map<string, Sample>();
    for (const p of paths) first.set(p.name, await httpTurn(baseOf(p), claudeTurn(base, 0), initOf(p)));
    const samples = new Map<string, Sample[]>(paths.map((p) => [p.name, []]));
    const cpuBefore = new Map(paths.map((p) => [p.name, p.sluice ? cpuMs(p.sluice.proc.pid) : null]));
    for (let i = 1; i <= TURNS; i++)
      for (const p of paths)
        samples.get(p.name)!.push(await httpTurn(baseOf(p), claudeTurn(base, i), initOf(p)));
    for (const p of paths.slice(1))
      tableRows.push(...rows("HTTP/SSE", samples.get("direct")!, samples.get(p.name)!, p.name));
    const cpu = paths.slice(1).map((p) => {
      const before = cpuBefore.get(p.name);
      const after = cpuMs(p.sluice!.proc.pid);
      return `${p.name} ${before == null || after === null ? "?" : ms((after - before) / TURNS)} ms`;
    });
    notes.push(`CPU time of the sluice process per HTTP/SSE turn (user + system): ${cpu.join(", ")}.`);
    notes.push(
      `First turn (opens the connections), TTFB: ${paths.map((p) => `${p.name} ${ms(first.get(p.name)!.ttfb)} ms`).join(", ")}.`,
    );
    // The same conversation goes on, each turn with the title request of its prompt, sent together
    // as Claude Code does (the title request a moment first). The first such pair of each path opens
    // the second connection that two requests at once need, and is not counted.
    const titled = new Map<string, Sample[]>(paths.map((p) => [p.name, []]));
    for (let i = TURNS; i <= 2 * TURNS; i++)
      for (const p of paths) {
        const side = httpTurn(baseOf(p), titleRequest(title, i), initOf(p));
        const turn = await httpTurn(baseOf(p), claudeTurn(base, i), initOf(p));
        await side;
        if (i > TURNS) titled.get(p.name)!.push(turn);
      }
    for (const p of paths.slice(1))
      tableRows.push(...rows("HTTP/SSE after a title", titled.get("direct")!, titled.get(p.name)!, p.name));

    // Codex WebSocket: one socket per client, kept for every turn.
    if (relay) paths.push({ name: "bare relay", relay: relay.url });
    const sockets = new Map<string, { ws: WebSocket; openMs: number }>();
    for (const p of paths)
      sockets.set(
        p.name,
        p.sluice || p.relay
          ? await openCodexSocket(`${p.relay ?? p.sluice!.proxyUrl.replace("http", "ws")}/v1/responses`)
          : await openCodexSocket(`${link.url.replace("https", "wss")}/v1/responses`, ca),
      );
    const wsFirst = new Map<string, Sample>();
    for (const p of paths) wsFirst.set(p.name, await wsTurn(sockets.get(p.name)!.ws, codexTurn(frame, 0)));
    const wsSamples = new Map<string, Sample[]>(paths.map((p) => [p.name, []]));
    for (let i = 1; i <= TURNS; i++)
      for (const p of paths)
        wsSamples.get(p.name)!.push(await wsTurn(sockets.get(p.name)!.ws, codexTurn(frame, i)));
    for (const p of paths.slice(1))
      tableRows.push(...rows("Codex WS", wsSamples.get("direct")!, wsSamples.get(p.name)!, p.name));
    notes.push(
      `Codex WebSocket, opening the socket (upgrade answered): ${paths.map((p) => `${p.name} ${ms(sockets.get(p.name)!.openMs)} ms`).join(", ")}; its first turn: ${paths.map((p) => `${p.name} ${ms(wsFirst.get(p.name)!.total)} ms`).join(", ")}.`,
    );
    for (const { ws } of sockets.values()) ws.close();
    notes.push(`The link accepted ${link.connections} TCP connections in this run.`);
  } finally {
    for (const p of paths) {
      p.sluice?.kill("SIGKILL");
      await p.sluice?.exited;
    }
    await relay?.stop();
  }
  if (WS_DEFLATE)
    notes.push("The stand-in's WebSockets accept permessage-deflate (SLUICE_BENCH_WS_DEFLATE=1).");
  return {
    title: `Network: streamed turns at ${rtt} ms round trip, direct vs through sluice (ms, ${TURNS} turns)`,
    columns: ["turn", "path", "direct p50", "direct p99", "via p50", "via p99", "added p50", "added p99"],
    rows: tableRows,
    notes,
  };
}

// ---------------------------------------------------------------- HTTP/2 against HTTP/1.1

/** An HTTPS stand-in that offers HTTP/2 and HTTP/1.1, its receive windows set to `windowBytes`. */
async function startHttp2Upstream(windowBytes: number | null) {
  const tls = testTls();
  const enc = new TextEncoder();
  const server = http2.createSecureServer(
    {
      cert: tls.cert,
      key: tls.key,
      allowHTTP1: true,
      ...(windowBytes ? { settings: { initialWindowSize: windowBytes } } : {}),
    },
    (req, res) => {
      req.resume();
      req.on("end", async () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(enc.encode('event: message_start\ndata: {"type":"message_start"}\n\n'));
        for (let i = 0; i < EVENTS; i++) {
          await Bun.sleep(EVENT_GAP_MS);
          res.write(enc.encode(`event: content_block_delta\ndata: {"i":${i}}\n\n`));
        }
        res.end(enc.encode('event: message_stop\ndata: {"type":"message_stop"}\n\n'));
      });
    },
  );
  if (windowBytes)
    server.on("session", (session) => session.on("connect", () => session.setLocalWindowSize(windowBytes)));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as { port: number }).port,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The fixture grown to about `bytes` with earlier turns (a long conversation). */
function longConversation(base: Json, bytes: number): string {
  let turn = 0;
  let body = claudeTurn(base, 0);
  while (body.length < bytes) body = claudeTurn(base, (turn += 50));
  return body;
}

async function protocolTable(base: Json): Promise<BenchTable> {
  const rtt = 50;
  const body = claudeTurn(base, 1);
  const big = longConversation(base, 300 * 1024);
  const tableRows: (string | number)[][] = [];
  for (const window of [null, 16 * 1024 * 1024]) {
    const h2 = await startHttp2Upstream(window);
    await using link = await startSlowLink({ port: h2.port, rttMs: rtt });
    try {
      for (const http2on of [false, true]) {
        const s = await spawnFor(link, { proxy: { upstream_http2: http2on } });
        try {
          const seq: number[] = [];
          const large: number[] = [];
          const bursts: number[] = [];
          await httpTurn(s.proxyUrl, body); // opens the connection
          for (let i = 0; i < 10; i++) seq.push((await httpTurn(s.proxyUrl, body)).ttfb);
          for (let i = 0; i < 5; i++) large.push((await httpTurn(s.proxyUrl, big)).ttfb);
          // Four turns at once: the first burst finds one pooled connection, later ones what it left.
          for (let i = 0; i < 5; i++) {
            const four = await Promise.all([0, 1, 2, 3].map(() => httpTurn(s.proxyUrl, body)));
            bursts.push(Math.max(...four.map((x) => x.ttfb)));
          }
          tableRows.push([
            window ? "16 MiB" : "64 KiB (default)",
            http2on ? "HTTP/2" : "HTTP/1.1 keep-alive",
            ms(percentile(seq, 50)),
            ms(percentile(large, 50)),
            ms(bursts[0]!),
            ms(percentile(bursts.slice(1), 50)),
          ]);
        } finally {
          s.kill("SIGKILL");
          await s.exited;
        }
      }
    } finally {
      await h2.stop();
    }
  }
  return {
    title: `Network: HTTP/2 against keep-alive HTTP/1.1 from sluice to the upstream, ${rtt} ms round trip (TTFB p50, ms)`,
    columns: [
      "upstream receive window",
      "sluice → upstream",
      "turn (47 KB)",
      `turn (${Math.round(big.length / 1024)} KB)`,
      "4 at once, first time",
      "4 at once, later",
    ],
    rows: tableRows,
    notes: [
      "An HTTPS stand-in that offers both protocols (node:http2, ALPN h2 and http/1.1) behind the same slow link; sluice with proxy.upstream_http2 off and on.",
      "The upstream's receive window bounds how much request body HTTP/2 may send before the upstream acknowledges it: 64 KiB is the protocol's default.",
      '"4 at once": four streamed turns started together, slowest TTFB. The first time, HTTP/1.1 has one pooled connection and opens three; later, the four it kept. HTTP/2 runs them all on its one connection.',
    ],
  };
}

// ---------------------------------------------------------------- TLS session resumption

/** Time to the response headers on a new connection, and the size of the server's first flight. */
async function newConnection(link: SlowLink, ca: string): Promise<{ ttfb: number; flight: number }> {
  const t0 = performance.now();
  const res = await fetch(`${link.url}/`, { tls: { ca }, keepalive: false } as RequestInit);
  const ttfb = performance.now() - t0;
  await res.arrayBuffer();
  return { ttfb, flight: link.log.at(-1)!.downChunks[0] ?? 0 };
}

async function resumptionTable(): Promise<BenchTable> {
  const rtt = 50;
  const tls = testTls();
  const tableRows: (string | number)[][] = [];
  for (const maxVersion of ["TLSv1.3", "TLSv1.2"] as const) {
    const server = https.createServer({ cert: tls.cert, key: tls.key, maxVersion }, (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
      res.end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      await using link = await startSlowLink({
        port: (server.address() as { port: number }).port,
        rttMs: rtt,
      });
      const full = await newConnection(link, tls.ca);
      const later: { ttfb: number; flight: number }[] = [];
      for (let i = 0; i < 6; i++) later.push(await newConnection(link, tls.ca));
      // A resumed handshake sends no certificate: its first flight is the smaller one.
      const resumed = later.filter((c) => c.flight < full.flight * 0.8);
      const fullAgain = later.filter((c) => c.flight >= full.flight * 0.8);
      tableRows.push([maxVersion, "full (first connection)", ms(full.ttfb), full.flight, "1"]);
      for (const [label, group] of [
        ["resumed", resumed],
        ["full (later connection)", fullAgain],
      ] as const)
        if (group.length)
          tableRows.push([
            maxVersion,
            label,
            ms(
              percentile(
                group.map((c) => c.ttfb),
                50,
              ),
            ),
            group[0]!.flight,
            `${group.length} of ${later.length}`,
          ]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }
  return {
    title: `Network: new TLS connections from Bun's fetch, full handshake or resumed session, ${rtt} ms round trip`,
    columns: ["TLS", "handshake", "time to headers (ms)", "server's first flight (bytes)", "connections"],
    rows: tableRows,
    notes: [
      "Bun's fetch (what sluice forwards with) to a node:https stand-in limited to one TLS version, a new connection per request (keepalive false): the first runs a full handshake, the next six may resume its session.",
    ],
  };
}

export async function run(): Promise<BenchTable[]> {
  const base = (await Bun.file(FIXTURE).json()) as Json;
  const frame = (await Bun.file(CODEX_FRAME).json()) as Json;
  const title = (await Bun.file(TITLE_FIXTURE).json()) as Json;
  const up = await startBenchUpstream();
  const variants: { name: string; config: Json; checkout?: string }[] = [{ name: "sluice", config: {} }];
  if (BASELINE) variants.push({ name: "baseline", config: {}, checkout: BASELINE });
  if (!QUICK)
    variants.push({ name: "sluice, streams closed", config: { proxy: { reuse_stream_connections: false } } });
  const tables: BenchTable[] = [];
  try {
    for (const rtt of RTTS) tables.push(await runAt(rtt, up, base, title, frame, variants));
  } finally {
    await up.stop();
  }
  if (QUICK) return tables;
  tables.push(await protocolTable(base));
  tables.push(await resumptionTable());
  return tables;
}

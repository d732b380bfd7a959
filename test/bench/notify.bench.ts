/**
 * Notifications bench: proxied request latency with no channels beside the same with channels whose
 * receivers hang or answer 500, in one run, interleaved. Every request carries a secret, so every
 * request raises a finding that each channel queues (cooldown 0: nothing is held back).
 */
import { spawnSluice } from "../helpers/sluice.ts";
import { json, startUpstream } from "../helpers/upstream.ts";
import type { BenchTable } from "./index.ts";

const N = 300;

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}

async function timeOne(base: string, i: number): Promise<number> {
  const key = ["AKIA", "IOSFODNN7", "EXAMPL", String.fromCharCode(65 + (i % 26))].join("");
  const body = JSON.stringify({
    model: "m",
    max_tokens: 8,
    messages: [{ role: "user", content: `deploy with ${key}` }],
  });
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "sk-ant-bench",
      "anthropic-version": "2023-06-01",
    },
    body,
  });
  await res.arrayBuffer();
  return performance.now() - t0;
}

export async function run(): Promise<BenchTable[]> {
  await using up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ ok: true }));
  const hits = { hanging: 0, failing: 0 };
  const hanging = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => {
      hits.hanging++;
      return new Promise<Response>(() => {});
    },
  });
  const failing = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => {
      hits.failing++;
      return new Response("no", { status: 500 });
    },
  });
  const channel = (name: string, url: string) => ({
    name,
    type: "webhook",
    url,
    secret: "bench-signing-secret",
    events: ["finding", "block"],
    min_severity: "info",
    cooldown_seconds: 0,
  });
  try {
    await using none = await spawnSluice([], { upstream: up.url });
    await using dead = await spawnSluice([], {
      upstream: up.url,
      config: {
        notifications: {
          channels: [
            channel("hangs", `${hanging.url.href}hook`),
            channel("fails", `${failing.url.href}hook`),
          ],
        },
      },
    });
    const out: Record<string, number[]> = { none: [], dead: [] };
    for (let i = 0; i < 50; i++) {
      await timeOne(none.proxyUrl, i);
      await timeOne(dead.proxyUrl, i);
    }
    for (let i = 0; i < N; i++) {
      out.none?.push(await timeOne(none.proxyUrl, i));
      out.dead?.push(await timeOne(dead.proxyUrl, i));
    }
    const row = (label: string, xs: number[]) => [
      label,
      N,
      percentile(xs, 50).toFixed(3),
      percentile(xs, 95).toFixed(3),
      percentile(xs, 99).toFixed(3),
    ];
    return [
      {
        title: "notifications: proxied request latency (ms), every request raising a finding",
        columns: ["channels", "requests", "p50", "p95", "p99"],
        rows: [
          row("none", out.none ?? []),
          row("webhook hanging + webhook answering 500 (cooldown 0)", out.dead ?? []),
        ],
        notes: [
          "Interleaved one request each, after 50 warm-up requests each; sluice as a subprocess per row.",
          `Receivers during the run: the hanging one got ${hits.hanging} requests, the 500 one ${hits.failing}.`,
        ],
      },
    ];
  } finally {
    hanging.stop(true);
    failing.stop(true);
  }
}

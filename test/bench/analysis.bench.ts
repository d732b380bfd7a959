/**
 * Rule analysis against proxied requests: sluice (a subprocess, default rules) answers 1 KB requests
 * while no analysis runs, then while analyses of every built-in rule run back to back, then idle
 * again. The run is driven in slices of a few milliseconds, so requests should barely notice it.
 */
import { spawnSluice } from "../helpers/sluice.ts";
import { json, startUpstream } from "../helpers/upstream.ts";
import type { BenchTable } from "./index.ts";

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const ms = (x: number) => x.toFixed(3);

const BODY = JSON.stringify({
  model: "claude-bench",
  max_tokens: 16,
  messages: [{ role: "user", content: "refactor the parser module and its tests ".repeat(24) }],
});

export async function run(): Promise<BenchTable[]> {
  const quick = process.env.SLUICE_BENCH_QUICK === "1";
  const n = quick ? 200 : 1000;
  const up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg_bench" }));
  const s = await spawnSluice([], { upstream: up.url, config: { logging: { level: "error" } } });
  const dash = s.dashboardUrl!;
  const { csrf_token } = (await (await fetch(`${dash}/api/v1/auth/session`)).json()) as {
    csrf_token: string;
  };
  const headers = { "content-type": "application/json", "x-csrf-token": csrf_token };
  const one = async () => {
    const t0 = performance.now();
    const res = await fetch(`${s.proxyUrl}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sk-ant-bench" },
      body: BODY,
    });
    await res.arrayBuffer();
    return performance.now() - t0;
  };
  const measure = async () => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push(await one());
    return out;
  };
  const rows: (string | number)[][] = [];
  let runs = 0;
  let runMs = 0;
  try {
    for (let i = 0; i < 100; i++) await one(); // warm
    const before = await measure();
    let analysing = true;
    const loop = (async () => {
      while (analysing) {
        const res = await fetch(`${dash}/api/v1/rules/analysis`, { method: "POST", headers });
        await res.arrayBuffer();
        for (;;) {
          const st = (await (await fetch(`${dash}/api/v1/rules/analysis/status?since=999999`)).json()) as {
            running: boolean;
          };
          if (!st.running) break;
          await Bun.sleep(20);
        }
        const r = (await (await fetch(`${dash}/api/v1/rules/analysis`)).json()) as { duration_ms?: number };
        if (r.duration_ms !== undefined) {
          runs++;
          runMs += r.duration_ms;
        }
      }
    })();
    const during = await measure();
    analysing = false;
    await loop;
    const after = await measure();
    for (const [label, xs] of [
      ["no analysis", before],
      ["analyses running back to back", during],
      ["no analysis, again", after],
    ] as const)
      rows.push([label, ms(percentile(xs, 50)), ms(percentile(xs, 99)), ms(Math.max(...xs))]);
  } finally {
    s.kill("SIGTERM");
    await s.exited;
    await up.stop();
  }
  return [
    {
      title: "Rule analysis: proxied 1 KB requests while it runs (ms, through sluice)",
      columns: ["while", "p50", "p99", "max"],
      rows,
      notes: [
        `${n} sequential requests per row. ${runs} analyses of every built-in rule ran during the middle row, ${runs ? Math.round(runMs / runs) : 0} ms each on average.`,
      ],
    },
  ];
}

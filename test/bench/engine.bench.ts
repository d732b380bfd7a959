/**
 * `bun run bench engine`: the detection engine through the request hook on Claude Code-shaped
 * bodies (a long system prompt, 12 tools, history of prose, tool calls and source code), cold and as
 * a follow-up turn of the same session, and on plain text. Baselines measured in the same run:
 * JSON.parse alone, and every rule's regex run over the whole text (no prefilter).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig } from "../../src/config/schema.ts";
import type { ScanRequest, Verdict } from "../../src/core/hook.ts";
import type { SessionContext } from "../../src/core/types.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { compilePattern } from "../../src/detect/pattern.ts";
import { createPipeline, textPayload } from "../../src/policy/pipeline.ts";
import { lcg } from "../corpus/gen.ts";
import type { BenchTable } from "./index.ts";

const ROOT = join(import.meta.dir, "../..");
/**
 * `SLUICE_BENCH_BASELINE=<dir>`: the small-request rows are measured with another checkout's
 * pipeline as well (its `src/`, e.g. main unpacked by `git archive`), loaded into this process and
 * run in turn with this one, a batch of each at a time, so that both see the same load.
 */
const BASELINE = process.env.SLUICE_BENCH_BASELINE;

/** Real prose and real source code from the repository and its dependencies. */
export function corpus(): { prose: string[]; code: string[] } {
  // Fixed inputs (installed dependencies, not our own tree, which changes as we work): prose from
  // their READMEs and docs, code from their TypeScript sources.
  const prose: string[] = [];
  const code: string[] = [];
  const nm = join(ROOT, "node_modules");
  for (const f of [
    "openai/README.md",
    "@anthropic-ai/sdk/README.md",
    "zod/README.md",
    "yaml/README.md",
    "elysia/README.md",
    "openai/CHANGELOG.md",
  ]) {
    try {
      prose.push(...readFileSync(join(nm, f), "utf8").split(/\n\n+/));
    } catch {
      /* optional */
    }
  }
  const walk = (dir: string, depth: number) => {
    if (code.length > 400 || depth > 3) return;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p, depth + 1);
      else if (/\.ts$/.test(name) && !name.endsWith(".d.ts") && statSync(p).size < 40_000)
        code.push(readFileSync(p, "utf8"));
    }
  };
  walk(join(nm, "openai/src/resources"), 0);
  walk(join(nm, "zod/v4/core"), 0);
  walk(join(nm, "@anthropic-ai/sdk/src"), 0);
  return { prose: prose.filter((p) => p.length > 40), code };
}

export function claudeCodeBody(
  size: number,
  c: { prose: string[]; code: string[] },
  seed = 1,
): Record<string, unknown> {
  const rnd = lcg(seed);
  const pick = <T>(a: T[]) => a[rnd(a.length)]!;
  const system = [
    { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." },
    {
      type: "text",
      text: c.prose.slice(0, 60).join("\n\n").slice(0, 18_000),
      cache_control: { type: "ephemeral" },
    },
  ];
  const tools = [
    "Bash",
    "Read",
    "Write",
    "Edit",
    "Glob",
    "Grep",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "Task",
    "NotebookEdit",
    "ExitPlanMode",
  ].map((name) => ({
    name,
    description: c.prose
      .slice(rnd(20), rnd(20) + 4)
      .join("\n")
      .slice(0, 1800),
    input_schema: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command to run" },
        file_path: { type: "string", description: "Absolute path" },
      },
      required: ["command"],
    },
  }));
  const messages: unknown[] = [];
  const body = {
    model: "claude-sonnet-4-5",
    max_tokens: 32000,
    stream: true,
    system,
    tools,
    messages,
    metadata: { user_id: '{"device_id":"d","session_id":"s"}' },
  };
  let approx = JSON.stringify(body).length;
  let n = 0;
  while (approx < size) {
    const id = `toolu_${seed}_${n++}`;
    const code = pick(c.code).slice(0, 6000);
    const turn = [
      { role: "user", content: [{ type: "text", text: pick(c.prose) }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: pick(c.prose).slice(0, 600) },
          { type: "tool_use", id, name: "Read", input: { file_path: `/repo/src/file${n}.ts` } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: code }] },
    ];
    messages.push(...turn);
    approx += JSON.stringify(turn).length;
  }
  return body;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/** Median wall time and median CPU time (user + system of this process) in ms. */
function time(fn: () => void, runs: number): { wall: number; cpu: number } {
  // Warm up: JSC tiers the engine's loops and regexes up over the first dozen calls, as it does in a
  // proxy that has served a few requests.
  for (let i = 0; i < 12; i++) fn();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    Bun.gc(true); // each call starts from a collected heap, like a request after an idle moment
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    fn();
    wall.push(performance.now() - t0);
    const d = process.cpuUsage(c0);
    cpu.push((d.user + d.system) / 1000);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

/** Median wall and CPU ms of each of `fns`, run `runs` times each in turn (after a warm-up). */
function interleaved(fns: (() => void)[], runs: number): { wall: number; cpu: number }[] {
  for (let i = 0; i < 12; i++) for (const fn of fns) fn();
  const wall: number[][] = fns.map(() => []);
  const cpu: number[][] = fns.map(() => []);
  for (let i = 0; i < runs; i++)
    fns.forEach((fn, k) => {
      Bun.gc(true);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      fn();
      wall[k]!.push(performance.now() - t0);
      const d = process.cpuUsage(c0);
      cpu[k]!.push((d.user + d.system) / 1000);
    });
  return fns.map((_, k) => ({ wall: median(wall[k]!), cpu: median(cpu[k]!) }));
}

/** A pipeline of the checkout in `dir` with its built-in rules and default configuration. */
async function baselineScanner(dir: string): Promise<() => { hook: (r: ScanRequest) => unknown }> {
  const schema = await import(join(dir, "src/config/schema.ts"));
  const builtin = await import(join(dir, "src/detect/builtin.ts"));
  const pipeline = await import(join(dir, "src/policy/pipeline.ts"));
  const rules = builtin.loadBuiltinRules();
  const cfg = schema.defaultConfig();
  return () =>
    pipeline.createPipeline({
      config: () => cfg,
      rules: () => rules,
      rulesVersion: () => 1,
      hmacKey: new Uint8Array(32),
    });
}

export async function run(): Promise<BenchTable[]> {
  const c = corpus();
  const rules = loadBuiltinRules();
  const cfg = defaultConfig();
  const makeScanner = () =>
    createPipeline({
      config: () => cfg,
      rules: () => rules,
      rulesVersion: () => 1,
      hmacKey: new Uint8Array(32),
    });
  const enc = new TextEncoder();
  const req = (body: Uint8Array, session: string): ScanRequest => ({
    provider: "anthropic",
    method: "POST",
    path: "/v1/messages",
    headers: new Headers(),
    body,
    session: { session_id: session } as SessionContext,
    transport: "http",
  });
  const rows: (string | number)[][] = [];
  const fmt = (ms: number) => ms.toFixed(2);
  let sessionN = 0;

  for (const [label, size, target] of [
    ["100 KB", 100_000, 1.5],
    ["1 MB", 1_000_000, 10],
  ] as const) {
    const body = claudeCodeBody(size, c, size);
    // A few things to find, so the numbers include reporting findings.
    (body.messages as { content: unknown }[]).push({
      content: `deploy with AKIA${"Q2W3E4R5T6Y7U8I9"} and mail ops@acme-corp.io`,
    });
    const raw = JSON.stringify(body);
    const bytes = enc.encode(raw);
    const scanner = makeScanner();
    let verdict: Verdict | null = null;
    const cold = time(() => {
      verdict = scanner.hook(req(bytes, `cold-${sessionN++}`)) as Verdict;
    }, 21);
    const parse = time(() => JSON.parse(raw), 21);
    rows.push([
      `cold scan, ${label} Claude Code body (${(bytes.length / 1024).toFixed(0)} KiB)`,
      fmt(cold.wall),
      fmt(cold.cpu),
      `≤ ${target}`,
      fmt(parse.cpu),
      `${verdict!.findings.length} findings, ${verdict!.action}`,
    ]);

    if (size === 1_000_000) {
      // Follow-up turns: the same history plus ~4 KB new, in one session.
      const followScanner = makeScanner();
      for (let w = 0; w < 6; w++) followScanner.hook(req(bytes, `warm-${w}`));
      followScanner.hook(req(bytes, "follow"));
      const turns: Uint8Array[] = [];
      for (let t = 0; t < 21; t++) {
        const next = structuredClone(body) as { messages: unknown[] };
        next.messages.push({
          role: "user",
          content: [{ type: "text", text: `${c.code[t % c.code.length]!.slice(0, 4000)} turn ${t}` }],
        });
        turns.push(enc.encode(JSON.stringify(next)));
      }
      const wall: number[] = [];
      const cpu: number[] = [];
      for (const nb of turns) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        verdict = followScanner.hook(req(nb, "follow")) as Verdict;
        wall.push(performance.now() - t0);
        const d = process.cpuUsage(c0);
        cpu.push((d.user + d.system) / 1000);
      }
      rows.push([
        "follow-up turn: same 1 MB history + 4 KB new (incl. JSON.parse)",
        fmt(median(wall)),
        fmt(median(cpu)),
        "≤ 3",
        fmt(parse.cpu),
        `${verdict!.findings.length} findings, ${verdict!.action}`,
      ]);
    }
  }

  // Small requests, warm: the fixed per-request cost (parse, walk, hashing, masking, events). Timed in
  // batches (one collection per batch) because a single 1 KB scan is below the timer's useful grain.
  {
    const small = (extra: string) => {
      const b = {
        model: "claude-sonnet-4-5",
        max_tokens: 1024,
        messages: [{ role: "user", content: `${c.prose.join("\n\n").slice(0, 900)}${extra}` }],
      };
      return enc.encode(JSON.stringify(b));
    };
    const findings = ` deploy with AKIA${"Q2W3E4R5T6Y7U8I9"}, mail ops@acme-corp.io`;
    const sides: { name: string; make: () => { hook: (r: ScanRequest) => unknown } }[] = [
      { name: "", make: makeScanner },
    ];
    if (BASELINE) sides.push({ name: " (baseline)", make: await baselineScanner(BASELINE) });
    for (const [label, bytes, target] of [
      ["1 KB request, clean, warm (per request)", small(""), 50],
      ["1 KB request with findings, warm (per request)", small(findings), 120],
    ] as const) {
      const batch = 200;
      // A new session per call, so no session cache carries over between requests.
      const scanners = sides.map((side) => side.make());
      const verdicts: Verdict[] = [];
      const runs = scanners.map((s, k) => () => {
        for (let i = 0; i < batch; i++) verdicts[k] = s.hook(req(bytes, `small-${sessionN++}`)) as Verdict;
      });
      // One side: the median of 15 batches. With a baseline: 60 batches of each, in turn.
      const t = sides.length === 1 ? [time(runs[0]!, 15)] : interleaved(runs, 60);
      const parse = time(() => {
        for (let i = 0; i < batch; i++) JSON.parse(new TextDecoder().decode(bytes));
      }, 15);
      const us = (ms: number) => ((ms * 1000) / batch).toFixed(1);
      sides.forEach((side, k) => {
        rows.push([
          `${label}, ${bytes.length} B, µs${side.name}`,
          us(t[k]!.wall),
          us(t[k]!.cpu),
          `≤ ${target} µs`,
          us(parse.cpu),
          `${verdicts[k]!.findings.length} findings, ${verdicts[k]!.action}`,
        ]);
      });
    }
  }

  // Plain text throughput (the `scan` command path): code and prose, no JSON.
  let text = "";
  for (const s of [...c.code, ...c.prose]) {
    text += `${s}\n`;
    if (text.length > 1_000_000) break;
  }
  text = text.slice(0, 1_000_000);
  const scanner = makeScanner();
  const plain = time(() => scanner.inspect(textPayload(text, "file.txt")), 15);
  const regexes = rules.map((r) => compilePattern(r.pattern, "g"));
  const naive = time(() => {
    for (const re of regexes) {
      re.lastIndex = 0;
      while (re.exec(text) !== null) {}
    }
  }, 5);
  const mbps = (ms: number) => (text.length / 1e6 / (ms / 1000)).toFixed(0);
  rows.push([
    `plain text, 1 MB: ${mbps(plain.wall)} MB/s wall, ${mbps(plain.cpu)} MB/s CPU`,
    fmt(plain.wall),
    fmt(plain.cpu),
    "≥ 100 MB/s",
    `${fmt(naive.cpu)} (${mbps(naive.cpu)} MB/s)`,
    `${rules.length} rules, decoding on`,
  ]);

  return [
    {
      title: "Detection engine (median ms)",
      columns: ["case", "wall ms", "CPU ms", "target ms", "baseline CPU ms", "notes"],
      rows,
      notes: [
        "Baseline: JSON.parse of the same body for the request rows; for plain text, every rule's regex run over the whole text without the prefilter.",
        "Cold = a new session (nothing cached). Follow-up = the same session sending its history again plus a new ~4 KB message.",
        "CPU ms = user+system time of the process during the call: on a shared, loaded machine wall time includes waiting for a core.",
      ],
    },
  ];
}

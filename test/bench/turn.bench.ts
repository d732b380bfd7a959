/**
 * `bun run bench turn`: the work sluice does on a turn's body between reading it and forwarding it,
 * in process, without the HTTP around it: the parse from the conversation's previous turn
 * (`TurnMemory.read`), the session context (`SessionContexts.get`) and the scan (the pipeline's
 * hook, default rules and configuration). Between two turns comes what the proxy does when it is
 * idle: the kept turns are settled and the garbage collected (the first row leaves the collection
 * out).
 *
 * Conversations of 30 turns of the Claude Code request body of `bench network` (one new exchange
 * per turn, one session each), back to back and with 20 ms between turns, as a tool waits for its
 * answer: after a pause, or a collection, the same steps cost several times more on a machine whose
 * caches went cold. The first conversation and each conversation's first turn (parsed and scanned
 * in full) are not counted. `SLUICE_BENCH_BASELINE=<dir>` runs the same for another checkout,
 * conversation by conversation interleaved with this one.
 */
import { join } from "node:path";
import type { BenchTable } from "./index.ts";
import { CLAUDE_HEADERS, claudeTurn, percentile } from "./network.bench.ts";

const ROOT = join(import.meta.dir, "../..");
const FIXTURE = join(import.meta.dir, "../fixtures/claude-code-request.json");
const TURNS = 30;
const BASELINE = process.env.SLUICE_BENCH_BASELINE;

/** Microseconds per step of one turn. */
interface Steps {
  parse: number;
  session: number;
  scan: number;
}

interface Checkout {
  name: string;
  /** One conversation: the steps of each turn after the first. */
  conversation(bodies: Uint8Array[], session: string, pauseMs: number, idle: boolean): Promise<Steps[]>;
}

// The modules of another checkout are its own types: they are used through the shapes needed here.
async function checkout(name: string, dir: string): Promise<Checkout> {
  const { defaultConfig } = await import(join(dir, "src/config/schema.ts"));
  const { loadBuiltinRules } = await import(join(dir, "src/detect/builtin.ts"));
  const { createPipeline } = await import(join(dir, "src/policy/pipeline.ts"));
  const { TurnMemory, conversationKey } = await import(join(dir, "src/proxy/turns.ts"));
  const { SessionContexts } = await import(join(dir, "src/proxy/session.ts"));
  const cfg = defaultConfig();
  const rules = loadBuiltinRules();
  const hmacKey = new Uint8Array(32);
  const pipeline = createPipeline({ config: () => cfg, rules: () => rules, rulesVersion: () => 1, hmacKey });
  const turns = new TurnMemory();
  const sessions = new SessionContexts();
  const path = "/v1/messages";
  return {
    name,
    async conversation(bodies, session, pauseMs, idle) {
      const steps: Steps[] = [];
      for (const [i, body] of bodies.entries()) {
        if (pauseMs > 0) await Bun.sleep(pauseMs);
        const headers = new Headers({ ...CLAUDE_HEADERS, "x-claude-code-session-id": session });
        const t0 = performance.now();
        const key = conversationKey("anthropic", path, headers);
        const parsed = turns.read(key, "anthropic", body, headers.get("content-type"));
        const t1 = performance.now();
        const context = sessions.get(key, {
          provider: "anthropic",
          pathname: path,
          headers,
          json: parsed.json,
          sourceIp: "127.0.0.1",
          hmacKey,
        });
        const t2 = performance.now();
        const verdict = await pipeline.hook({
          provider: "anthropic",
          method: "POST",
          path,
          headers,
          body,
          json: parsed.json,
          jsonSource: parsed.source,
          session: context,
          transport: "http",
          id: `${session}-${i}`,
          ...(parsed.uniqueKeys ? { uniqueKeys: true } : {}),
          ...(parsed.texts ? { texts: parsed.texts } : {}),
        });
        const t3 = performance.now();
        if (verdict.action !== "pass") throw new Error(`turn ${i} of ${session}: ${verdict.action}`);
        if (i > 0) steps.push({ parse: (t1 - t0) * 1000, session: (t2 - t1) * 1000, scan: (t3 - t2) * 1000 });
        turns.settle();
        if (idle) Bun.gc(false);
      }
      return steps;
    },
  };
}

export async function run(): Promise<BenchTable[]> {
  const base = await Bun.file(FIXTURE).json();
  const enc = new TextEncoder();
  const bodies = Array.from({ length: TURNS }, (_, t) => enc.encode(claudeTurn(base, t)));
  const checkouts = [await checkout("sluice", ROOT)];
  if (BASELINE) checkouts.push(await checkout("baseline", BASELINE));
  const rows: (string | number)[][] = [];
  let n = 0;
  for (const [label, pauseMs, idle, conversations] of [
    ["back to back, no collection", 0, false, 12],
    ["back to back", 0, true, 12],
    ["after a 20 ms pause", 20, true, 4],
  ] as const) {
    const all = new Map(checkouts.map((c) => [c, [] as Steps[]]));
    // One more conversation first, not counted: the code's first runs.
    for (let k = 0; k <= conversations; k++)
      for (const c of checkouts) {
        const steps = await c.conversation(bodies, `bench-turn-${n++}`, pauseMs, idle);
        if (k > 0) all.get(c)!.push(...steps);
      }
    for (const c of checkouts) {
      const steps = all.get(c)!;
      const of = (f: (s: Steps) => number) => percentile(steps.map(f), 50).toFixed(0);
      const total = steps.map((s) => s.parse + s.session + s.scan);
      rows.push([
        label,
        c.name,
        steps.length,
        of((s) => s.parse),
        of((s) => s.session),
        of((s) => s.scan),
        percentile(total, 50).toFixed(0),
        percentile(total, 99).toFixed(0),
      ]);
    }
  }
  return [
    {
      title: "A turn's body in process: parse, session context, scan (µs)",
      columns: [
        "turns",
        "checkout",
        "counted",
        "parse p50",
        "session p50",
        "scan p50",
        "in all p50",
        "in all p99",
      ],
      rows,
      notes: [
        `${TURNS}-turn Claude Code conversations (${(bodies.at(-1)!.length / 1024).toFixed(0)} KB at the last turn); each conversation's first turn, and the first conversation, not counted.`,
      ],
    },
  ];
}

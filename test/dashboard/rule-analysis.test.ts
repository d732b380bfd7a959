/**
 * Rule analysis through the real dashboard: a hand-made rule set with a known duplicate, subset and
 * overlap is found with evidence that both rules really flag; the 202/409/status/since/dismiss flow;
 * results dropped when the rules change; and a run over every built-in rule finishes in the
 * background with no pair whose evidence one of its rules does not flag.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AnalysisResult, AnalysisStatus } from "../../src/dashboard/rule-analysis.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { compileRules } from "../../src/detect/compile.ts";
import { scanText } from "../../src/detect/matcher.ts";
import type { RulePair } from "../../src/detect/overlap.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";

type Pair = RulePair;
type Result = AnalysisResult & { reason?: string };
type Status = AnalysisStatus;

/** A client of one sluice's dashboard API, with its CSRF token. */
async function dashboard(s: InProcessSluice) {
  const base = s.dashboardUrl!;
  const session = (await (await fetch(`${base}/api/v1/auth/session`)).json()) as { csrf_token: string };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { "content-type": "application/json", "x-csrf-token": session.csrf_token },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return {
    call,
    /** Follows the status until the run is over; returns every log line seen. */
    async finished(): Promise<Status["log"]> {
      const lines: Status["log"] = [];
      let since = 0;
      for (;;) {
        const s = (await call("GET", `/rules/analysis/status?since=${since}`)).body as unknown as Status;
        for (const l of s.log) expect(l.n).toBeGreaterThan(since);
        lines.push(...s.log);
        since = s.next;
        if (!s.running) return lines;
        await new Promise((r) => setTimeout(r, 20)); // the run yields between slices; poll its status
      }
    },
  };
}

const RULES = [
  { name: "acme_token_a", pattern: "\\bacme_[a-f0-9]{32}\\b", severity: "high", action: "block" },
  { name: "acme_token_b", pattern: "\\bacme_[a-f0-9]{32}\\b", severity: "high", action: "block" },
  { name: "acme_any", pattern: "\\bacme_[a-z0-9]{32}\\b", severity: "high", action: "alert" },
  { name: "ticket_ref", pattern: "\\bTKT-[0-9]{4,6}\\b", severity: "info", action: "log" },
  { name: "ticket_num", pattern: "\\bTKT-[0-9]{5,8}\\b", severity: "info", action: "log" },
  { name: "lonely", pattern: "\\bzzq_[A-Z]{10}\\b", severity: "info", action: "log" },
];

describe("a hand-made rule set", () => {
  let s: InProcessSluice;
  let api: Awaited<ReturnType<typeof dashboard>>;
  beforeAll(async () => {
    s = await startSluice({ noDefaultRules: true, config: { custom_rules: RULES } });
    api = await dashboard(s);
  });
  afterAll(async () => {
    await s?.stop();
  });

  test("before a run nothing is cached; a run finds the duplicate, the subsets and the overlap with evidence", async () => {
    expect((await api.call("GET", "/rules/analysis")).body.available).toBe(false);
    const started = await api.call("POST", "/rules/analysis");
    expect(started.status).toBe(202);
    const log = await api.finished();
    expect(log.at(0)!.line).toContain("started: 6 enabled rules");
    expect(log.at(-1)!.line).toMatch(/^done in \d+ ms/);

    const r = (await api.call("GET", "/rules/analysis")).body as unknown as Result;
    expect(r.available).toBe(true);
    expect(r.rules).toBe(6);
    const names = (ps: Pair[]) => ps.map((p) => `${p.rule_a}|${p.rule_b}`).sort();
    expect(names(r.duplicates)).toEqual(["acme_token_a|acme_token_b"]);
    expect(r.duplicates[0]!.reason).toBe("identical pattern");
    expect(names(r.subsets)).toEqual(["acme_token_a|acme_any", "acme_token_b|acme_any"]);
    expect(names(r.overlaps)).toEqual(["ticket_num|ticket_ref"]);
    expect(r.clusters).toEqual([["acme_any", "acme_token_a", "acme_token_b"]]);
    const overlap = r.overlaps[0]!;
    expect(overlap.a_in_b).toBeGreaterThan(0);
    expect(overlap.a_in_b).toBeLessThan(1);
    // Every evidence string is flagged by both rules of its pair.
    const matcher = compileRules(
      RULES.map((x) => ({
        ...x,
        detector: "custom",
        enabled: true,
        tier: "custom",
        source: "config",
        description: "",
        tags: [],
      })) as never,
    );
    for (const p of [...r.duplicates, ...r.subsets, ...r.overlaps]) {
      expect(p.evidence.length).toBeGreaterThan(0);
      for (const e of p.evidence) {
        const flagged = new Set(scanText(matcher, e, { encoding: null }).map((m) => m.rule.name));
        expect({ e, a: flagged.has(p.rule_a), b: flagged.has(p.rule_b) }).toEqual({ e, a: true, b: true });
      }
    }
    expect(JSON.stringify(r)).not.toContain("lonely");
  });

  test("status since=<n> gives only later lines", async () => {
    const all = (await api.call("GET", "/rules/analysis/status?since=0")).body as unknown as Status;
    expect(all.log.length).toBeGreaterThanOrEqual(2);
    const later = (await api.call("GET", `/rules/analysis/status?since=${all.next - 1}`))
      .body as unknown as Status;
    expect(later.log.map((l) => l.n)).toEqual([all.next]);
    expect((await api.call("GET", "/rules/analysis/status?since=-1")).status).toBe(400);
  });

  test("a dismissed pair stays hidden, in this result and the next run's", async () => {
    expect(
      (await api.call("POST", "/rules/analysis/dismiss", { rule_a: "acme_token_b", rule_b: "acme_token_a" }))
        .status,
    ).toBe(200);
    let r = (await api.call("GET", "/rules/analysis")).body as unknown as Result;
    expect(r.duplicates).toEqual([]);
    expect(r.dismissed).toBe(1);
    expect((await api.call("POST", "/rules/analysis")).status).toBe(202);
    await api.finished();
    r = (await api.call("GET", "/rules/analysis")).body as unknown as Result;
    expect(r.duplicates).toEqual([]);
    expect(r.dismissed).toBe(1);
    expect(r.subsets).toHaveLength(2);
    const bad = await api.call("POST", "/rules/analysis/dismiss", { rule_a: "acme_token_a" });
    expect(bad.status).toBe(400);
    expect(String((bad.body.error as { message: string }).message)).toContain("rule_b");
    expect(
      (await api.call("POST", "/rules/analysis/dismiss", { rule_a: "acme_token_a", rule_b: "nope" })).status,
    ).toBe(404);
  });

  test("a rule change drops the result", async () => {
    expect((await api.call("GET", "/rules/analysis")).body.available).toBe(true);
    expect((await api.call("PUT", "/rules/lonely", { enabled: false })).status).toBe(200);
    const r = await api.call("GET", "/rules/analysis");
    expect(r.body.available).toBe(false);
    expect(String(r.body.reason)).toContain("rules last changed");
  });
});

test("every built-in rule: a second POST while it runs is 409, it finishes in the background, and each pair's evidence is flagged by both rules", async () => {
  await using s = await startSluice({});
  const api = await dashboard(s);
  const started = performance.now();
  expect((await api.call("POST", "/rules/analysis")).status).toBe(202);
  const again = await api.call("POST", "/rules/analysis");
  expect(again.status).toBe(409);
  expect((again.body.error as { code: string }).code).toBe("analysis_running");
  // The proxy answers while the run goes on.
  expect((await fetch(`${s.proxyUrl}/health`)).status).toBe(200);
  await api.finished();
  expect(performance.now() - started).toBeLessThan(60_000);
  const r = (await api.call("GET", "/rules/analysis")).body as unknown as Result;
  expect(r.available).toBe(true);
  expect(r.rules).toBeGreaterThan(300);
  const matcher = compileRules(loadBuiltinRules());
  for (const p of [...r.duplicates, ...r.subsets, ...r.overlaps]) {
    expect(p.evidence.length).toBeGreaterThan(0);
    for (const e of p.evidence) {
      const flagged = new Set(scanText(matcher, e, { encoding: null }).map((m) => m.rule.name));
      expect({ pair: `${p.rule_a}|${p.rule_b}`, a: flagged.has(p.rule_a), b: flagged.has(p.rule_b) }).toEqual(
        {
          pair: `${p.rule_a}|${p.rule_b}`,
          a: true,
          b: true,
        },
      );
    }
  }
  expect(r.duplicates).toEqual([]); // no two built-in rules flag exactly the same strings
}, 90_000);

/**
 * The rule analysis run behind `/api/v1/rules/analysis`: which enabled rules duplicate, contain or
 * overlap each other (detect/overlap.ts). One run at a time, in the background: the comparison is
 * a generator driven in slices of a few milliseconds, each followed by a turn of the event loop, so
 * proxied requests and the dashboard keep being served while it runs.
 *
 * The result is kept in memory until the rules change (any rule added, edited, enabled or removed
 * drops it). Dismissed pairs are kept in the store's settings, so they stay hidden across runs.
 */
import type { RuleDef } from "../core/types.ts";
import { compileRules } from "../detect/compile.ts";
import type { Matcher } from "../detect/matcher.ts";
import { compareRules, type OverlapReport, type RulePair } from "../detect/overlap.ts";
import type { Store } from "../store/index.ts";

/** How long one slice of the run may hold the event loop. */
const SLICE_MS = 4;
const DISMISSED_KEY = "rules.analysis.dismissed";
const MAX_LOG = 500;

export type Phase = "idle" | "sampling" | "comparing" | "done" | "failed";

export interface AnalysisResult extends OverlapReport {
  available: true;
  analyzed_at: string;
  duration_ms: number;
  /** Pairs hidden by a dismissal. */
  dismissed: number;
}

export interface AnalysisStatus {
  running: boolean;
  phase: Phase;
  progress: string;
  log: { n: number; ts: string; line: string }[];
  /** Pass as `since` to get only later lines. */
  next: number;
}

/** The key of an unordered pair of rule names. */
const pairKey = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);

export class RuleAnalysis {
  #running = false;
  #phase: Phase = "idle";
  #progress = "";
  #log: AnalysisStatus["log"] = [];
  #lines = 0;
  #result: Omit<AnalysisResult, "dismissed"> | null = null;
  /** Bumped by every rule change: a run that started before one is not kept. */
  #rulesGeneration = 0;
  /** The enabled rules compiled, for the rules generation it was made in: later runs skip compiling. */
  #matcher: { generation: number; matcher: Matcher } | null = null;

  constructor(private store: Pick<Store, "enabledRules" | "onRulesChanged" | "getSetting" | "setSetting">) {
    store.onRulesChanged(() => {
      this.#rulesGeneration++;
      if (this.#result) this.#say("rules changed: the last result no longer applies");
      this.#result = null;
    });
  }

  get running(): boolean {
    return this.#running;
  }

  /** Start a run; false when one is running already. */
  start(): boolean {
    if (this.#running) return false;
    this.#running = true;
    void this.#run(this.store.enabledRules());
    return true;
  }

  status(since = 0): AnalysisStatus {
    return {
      running: this.#running,
      phase: this.#phase,
      progress: this.#progress,
      log: this.#log.filter((l) => l.n > since),
      next: this.#lines,
    };
  }

  /** The last result without the dismissed pairs, or null when there is none for the current rules. */
  result(): AnalysisResult | null {
    if (!this.#result) return null;
    const hidden = this.#dismissed();
    const keep = (p: RulePair) => !hidden.has(pairKey(p.rule_a, p.rule_b));
    const r = this.#result;
    const shown = {
      duplicates: r.duplicates.filter(keep),
      subsets: r.subsets.filter(keep),
      overlaps: r.overlaps.filter(keep),
    };
    const dismissed =
      r.duplicates.length +
      r.subsets.length +
      r.overlaps.length -
      (shown.duplicates.length + shown.subsets.length + shown.overlaps.length);
    return { ...r, ...shown, dismissed };
  }

  /** Hide a pair from this and later results. */
  dismiss(a: string, b: string): void {
    const set = this.#dismissed();
    set.add(pairKey(a, b));
    this.store.setSetting(DISMISSED_KEY, JSON.stringify([...set].sort()));
    this.#say(`dismissed ${a} / ${b}`);
  }

  #dismissed(): Set<string> {
    try {
      const raw = JSON.parse(this.store.getSetting(DISMISSED_KEY) ?? "[]");
      return new Set(Array.isArray(raw) ? raw.filter((x): x is string => typeof x === "string") : []);
    } catch {
      return new Set();
    }
  }

  #say(line: string): void {
    this.#log.push({ n: ++this.#lines, ts: new Date().toISOString(), line });
    if (this.#log.length > MAX_LOG) this.#log.splice(0, this.#log.length - MAX_LOG);
  }

  async #run(rules: RuleDef[]): Promise<void> {
    const generation = this.#rulesGeneration;
    const started = performance.now();
    this.#phase = "sampling";
    this.#progress = `0 of ${rules.length} rules`;
    this.#say(`started: ${rules.length} enabled rules`);
    try {
      // A turn of the event loop first: the request that started the run gets its answer now.
      await turn();
      if (this.#matcher?.generation !== generation)
        this.#matcher = { generation, matcher: compileRules(rules.filter((r) => r.enabled)) };
      await turn();
      const steps = compareRules(rules, this.#matcher.matcher);
      let step = steps.next();
      while (!step.done) {
        const sliceEnd = performance.now() + SLICE_MS;
        while (!step.done && performance.now() < sliceEnd) step = steps.next();
        if (!step.done) {
          const { done, total } = step.value;
          this.#progress = `${done} of ${total} rules`;
          if (done % 50 === 0) this.#say(`sampled ${done} of ${total} rules`);
        } else this.#phase = "comparing";
        await turn();
      }
      const report = step.value;
      const duration = Math.round(performance.now() - started);
      if (generation !== this.#rulesGeneration) {
        this.#phase = "failed";
        this.#progress = "rules changed while it ran; run it again";
        this.#say(this.#progress);
        return;
      }
      this.#result = {
        available: true,
        analyzed_at: new Date().toISOString(),
        duration_ms: duration,
        ...report,
      };
      this.#phase = "done";
      this.#progress = `${report.duplicates.length} duplicates, ${report.subsets.length} subsets, ${report.overlaps.length} overlaps, ${report.clusters.length} clusters`;
      this.#say(`done in ${duration} ms over ${report.samples} samples: ${this.#progress}`);
    } catch (e) {
      this.#phase = "failed";
      this.#progress = `failed: ${(e as Error).message}`;
      this.#say(this.#progress);
    } finally {
      this.#running = false;
    }
  }
}

/** One turn of the event loop (timers and I/O run before the next slice). */
const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

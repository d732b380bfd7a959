/**
 * Rule analysis: run it, follow its progress, and read the groups it found (duplicates, subsets,
 * overlaps, clusters), each pair with the strings both rules flag, and act on a pair: disable one of
 * its rules, or dismiss the pair.
 */

import type { AnalysisResult, AnalysisStatus } from "../../src/dashboard/rule-analysis.ts";
import type { RulePair } from "../../src/detect/overlap.ts";
import { get, post, put } from "../api.ts";
import { h, mount, num, pageHead } from "../dom.ts";
import { attempt, toast } from "../feedback.ts";
import type { PageCtx } from "../state.ts";

type Pair = RulePair;
type Result = AnalysisResult | { available: false; reason: string };
type Status = AnalysisStatus;

const pct = (x: number) => `${Math.round(x * 100)}%`;

/** What a pair says, in words. */
function describe(p: Pair): string {
  if (p.kind === "duplicate") return `${p.rule_a} and ${p.rule_b} flag the same strings`;
  if (p.kind === "subset") return `${p.rule_b} flags everything ${p.rule_a} flags`;
  return `${p.rule_a} and ${p.rule_b} overlap (${pct(p.a_in_b)} / ${pct(p.b_in_a)} of each other's samples)`;
}

export async function ruleAnalysisPage(ctx: PageCtx) {
  const statusLine = h("p", { class: "muted", id: "analysis-status", role: "status", "aria-live": "polite" });
  const runBtn = h("button", { class: "btn primary", type: "button", id: "analysis-run" }, "Run analysis");
  const body = h("div", { id: "analysis-result" });
  let since = 0;

  async function load() {
    const r = await get<Result>("/rules/analysis");
    if (ctx.left()) return;
    if (!r.available) mount(body, h("p", { class: "muted" }, `No result: ${r.reason}.`));
    else mount(body, ...resultView(r, load));
  }

  async function follow() {
    for (;;) {
      const s = await get<Status>("/rules/analysis/status", { since });
      if (ctx.left()) return;
      since = s.next;
      statusLine.textContent = `${s.phase}${s.progress ? `: ${s.progress}` : ""}`;
      runBtn.toggleAttribute("disabled", s.running);
      if (!s.running) break;
      await new Promise((r) => setTimeout(r, 300));
    }
    await load();
  }

  runBtn.addEventListener("click", () =>
    attempt(async () => {
      await post("/rules/analysis");
      await follow();
    }),
  );

  mount(
    ctx.root,
    pageHead("Rule analysis", runBtn),
    h(
      "p",
      { class: "muted", style: "max-width:760px" },
      "Which enabled rules duplicate, contain or overlap each other: every rule's examples and strings generated from its pattern are scanned with all rules, and a pair is shown only with strings both rules flag.",
    ),
    statusLine,
    body,
  );
  await follow();
}

/** The groups of a finished run; `reload` reads the result again after acting on a pair. */
function resultView(r: AnalysisResult, reload: () => Promise<void>) {
  const group = (title: string, pairs: Pair[]) =>
    h(
      "section",
      { "aria-label": title },
      h("h2", null, `${title} (${num(pairs.length)})`),
      pairs.length ? pairs.map((p) => pairCard(p, reload)) : h("p", { class: "muted" }, "None."),
    );
  return [
    h(
      "p",
      { class: "muted" },
      `${num(r.rules)} enabled rules, ${num(r.samples)} samples, ${r.duration_ms} ms; ${num(r.dismissed)} dismissed pair(s) hidden.`,
    ),
    group("Duplicates", r.duplicates),
    group("Subsets", r.subsets),
    group("Overlaps", r.overlaps),
    h(
      "section",
      { "aria-label": "Clusters" },
      h("h2", null, `Clusters (${num(r.clusters.length)})`),
      r.clusters.length
        ? h(
            "ul",
            null,
            r.clusters.map((c) => h("li", null, c.join(", "))),
          )
        : h("p", { class: "muted" }, "None."),
    ),
    r.broad.length
      ? h(
          "p",
          { class: "muted" },
          `Broad rules (their pairs are counted, not listed): ${r.broad.map((b) => `${b.rule} overlaps ${b.overlaps}`).join("; ")}.`,
        )
      : null,
  ];
}

/** A pair with the strings both rules flag: disable either rule, or dismiss the pair. */
function pairCard(p: Pair, reload: () => Promise<void>): HTMLElement {
  const act = (label: string, fn: () => Promise<unknown>, said: string) =>
    h(
      "button",
      {
        class: "btn small",
        type: "button",
        onclick: () =>
          attempt(async () => {
            await fn();
            toast(said, "info");
            await reload();
          }),
      },
      label,
    );
  return h(
    "section",
    { class: "panel pair", dataset: { kind: p.kind, a: p.rule_a, b: p.rule_b } },
    h("h3", { style: "margin:0 0 6px" }, describe(p)),
    p.reason ? h("p", { class: "muted", style: "margin:0 0 6px" }, `Why: ${p.reason}`) : null,
    h("p", { class: "muted", style: "margin:0" }, "Strings both rules flag:"),
    h(
      "ul",
      { class: "evidence" },
      p.evidence.map((e) => h("li", null, h("code", null, e))),
    ),
    h(
      "div",
      { class: "row" },
      [p.rule_a, p.rule_b].map((name) =>
        act(
          `Disable ${name}`,
          () => put(`/rules/${encodeURIComponent(name)}`, { enabled: false }),
          `${name} disabled; run the analysis again for the new rule set.`,
        ),
      ),
      act(
        "Dismiss",
        () => post("/rules/analysis/dismiss", { rule_a: p.rule_a, rule_b: p.rule_b }),
        "Dismissed: this pair stays hidden in later runs.",
      ),
    ),
  );
}

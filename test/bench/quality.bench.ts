/**
 * `bun run bench quality`: how well detection works, measured on files as users scan them.
 *
 * 1. The labeled corpus (test/corpus: every kind in every context it fits, and hard negatives) is
 *    written one sample per file and scanned by `sluice scan --format json` and by secretlint
 *    (preset-recommend) in the same run. A labeled value counts as found when a finding overlaps
 *    it: by the kind's own rule (sluice only: secretlint's rule names differ) or by any rule of its
 *    family. Precision counts findings: those on no labeled value of their family are false.
 * 2. False positives on real code that holds no secret: the installed dependencies (node_modules),
 *    and this repository without rules/ and test/ (the rules' examples and the tests' planted
 *    values are there on purpose), per 10 MB scanned.
 *
 * sluice runs from source (`bun src/cli.ts`), or as `SLUICE_BENCH_CLI` (a binary or a .ts entry).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ScanFinding } from "../../src/scan/types.ts";
import {
  type Family,
  KINDS_BY_RULE,
  negatives,
  type Positive,
  positives,
  valueSpan,
} from "../corpus/corpus.ts";
import type { BenchTable } from "./index.ts";
import { runSecretlint } from "./scan.bench.ts";

const ROOT = resolve(import.meta.dir, "..", "..");
const FAMILIES: Family[] = ["secrets", "pii", "proprietary", "injection"];

/** The fields of a printed scan finding that the scores read. */
type Finding = Pick<
  ScanFinding,
  "file" | "line" | "column" | "end_line" | "end_column" | "rule" | "detector" | "preview"
>;

function sluiceCli(): string[] {
  const cli = process.env.SLUICE_BENCH_CLI;
  if (cli) return cli.endsWith(".ts") ? ["bun", cli] : [cli];
  return ["bun", join(ROOT, "src", "cli.ts")];
}

/** `sluice scan --format json` of `targets` in `cwd`: its findings and the bytes it scanned. */
async function scan(targets: string[], cwd: string): Promise<{ findings: Finding[]; bytes: number }> {
  const findings: Finding[] = [];
  let bytes = 0;
  // Batches keep argument lists within limits.
  for (let i = 0; i < targets.length; i += 2000) {
    const proc = Bun.spawn(
      [...sluiceCli(), "scan", "--format", "json", "--no-color", ...targets.slice(i, i + 2000)],
      {
        cwd,
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, NO_COLOR: "1" },
      },
    );
    const [out] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    const j = JSON.parse(out) as { findings: Finding[]; summary: { bytes_scanned: number } };
    findings.push(...j.findings);
    bytes += j.summary.bytes_scanned;
  }
  return { findings, bytes };
}

/** Offsets of a finding in its file's text (line and column are 1-based, the end exclusive). */
function offsets(text: string, f: Finding): [number, number] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return [starts[f.line - 1]! + f.column - 1, starts[f.end_line - 1]! + f.end_column - 1];
}

const pct = (a: number, b: number) => (b === 0 ? "n/a" : (a / b).toFixed(3));

interface Sample {
  file: string;
  pos: Positive | null;
  text: string;
  span: [number, number] | null;
  /** Lines (1-based) the labeled value spans, for secretlint's line-level findings. */
  lines: [number, number] | null;
}

function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

async function corpusTables(tmp: string): Promise<BenchTable[]> {
  const dir = join(tmp, "corpus");
  mkdirSync(dir);
  const samples: Sample[] = [];
  positives().forEach((p, i) => {
    const file = `pos-${String(i).padStart(4, "0")}-${p.rule}-${p.context}.txt`;
    const span = valueSpan(p);
    samples.push({
      file,
      pos: p,
      text: p.text,
      span,
      lines: [lineOf(p.text, span[0]), lineOf(p.text, span[1])],
    });
  });
  negatives().forEach((n, i) => {
    samples.push({
      file: `neg-${String(i).padStart(3, "0")}.txt`,
      pos: null,
      text: n.text,
      span: null,
      lines: null,
    });
  });
  for (const s of samples) writeFileSync(join(dir, s.file), s.text);
  const files = samples.map((s) => s.file);
  const t0 = performance.now();
  const { findings } = await scan(["."], dir);
  const sluiceSeconds = (performance.now() - t0) / 1000;
  const lint = await runSecretlint(files, dir);

  const byFile = new Map(samples.map((s) => [s.file, s]));
  // Per sample: the findings that overlap its labeled value.
  const hits = new Map<string, Finding[]>();
  const fp = new Map<string, Finding[]>(); // by family
  const ruleStats = new Map<string, { tp: number; fp: number }>();
  const stat = (rule: string) => ruleStats.get(rule) ?? ruleStats.set(rule, { tp: 0, fp: 0 }).get(rule)!;
  let tpByFamily = Object.fromEntries(FAMILIES.map((f) => [f, 0])) as Record<Family, number>;
  for (const f of findings) {
    const s = byFile.get(f.file.replace(/^\.\//, ""));
    if (!s) continue;
    const [a, b] = offsets(s.text, f);
    const onValue = s.span !== null && a < s.span[1] && b > s.span[0] && s.pos!.family === f.detector;
    if (onValue) {
      hits.set(s.file, [...(hits.get(s.file) ?? []), f]);
      tpByFamily = { ...tpByFamily, [f.detector]: (tpByFamily[f.detector as Family] ?? 0) + 1 };
      if (f.rule === s.pos!.rule) stat(f.rule).tp++;
    } else {
      fp.set(f.detector, [...(fp.get(f.detector) ?? []), { ...f, file: s.file }]);
      stat(f.rule).fp++;
    }
  }
  const lintHit = (s: Sample) => {
    if (!s.lines) return false;
    for (let l = s.lines[0]; l <= s.lines[1]; l++) if (lint.found.has(`${s.file}:${l}`)) return true;
    return false;
  };
  const own = (s: Sample) => (hits.get(s.file) ?? []).some((f) => f.rule === s.pos!.rule);
  const any = (s: Sample) => (hits.get(s.file) ?? []).length > 0;
  const pos = samples.filter((s) => s.pos);
  const neg = samples.filter((s) => !s.pos);

  const group = (key: (s: Sample) => string) => {
    const m = new Map<string, Sample[]>();
    for (const s of pos) m.set(key(s), [...(m.get(key(s)) ?? []), s]);
    return [...m].sort((a, b) => a[0].localeCompare(b[0]));
  };
  const recallRow = (label: string, ss: Sample[]) => [
    label,
    new Set(ss.map((s) => s.pos!.rule)).size,
    ss.length,
    pct(ss.filter(own).length, ss.length),
    pct(ss.filter(any).length, ss.length),
    pct(ss.filter(lintHit).length, ss.length),
  ];

  const familyRows = FAMILIES.map((fam) => {
    const ss = pos.filter((s) => s.pos!.family === fam);
    const tp = tpByFamily[fam];
    const wrong = fp.get(fam) ?? [];
    return [...recallRow(fam, ss), pct(tp, tp + wrong.length), wrong.length];
  });
  const lintNeg = neg.filter((s) => [...lint.found].some((x) => x.startsWith(`${s.file}:`))).length;
  const sluiceNeg = neg.filter((s) => findings.some((f) => f.file.replace(/^\.\//, "") === s.file)).length;
  const missedKinds = group((s) => s.pos!.rule)
    .map(([rule, ss]) => [rule, ss.filter((s) => !own(s)).map((s) => s.pos!.context)] as const)
    .filter(([, miss]) => miss.length > 0);
  const falseList = [...fp.values()].flat().map((f) => `${f.rule} in ${f.file} (${f.preview})`);

  const kindRows = group((s) => s.pos!.rule).map(([rule, ss]) => {
    const st = ruleStats.get(rule) ?? { tp: 0, fp: 0 };
    const k = KINDS_BY_RULE.get(rule)!;
    return [
      rule,
      k.category,
      ss.length,
      pct(ss.filter(own).length, ss.length),
      pct(st.tp, st.tp + st.fp),
      pct(ss.filter(lintHit).length, ss.length),
    ];
  });
  // Phone numbers: their own rules over their samples (26 countries' formats in developer contexts).
  const phoneRules = [...KINDS_BY_RULE.keys()].filter((r) => r.startsWith("phone_number"));
  const phoneRows = phoneRules.map((rule) => {
    const ss = pos.filter((s) => s.pos!.rule === rule);
    const st = ruleStats.get(rule) ?? { tp: 0, fp: 0 };
    return [rule, ss.length, pct(ss.filter(own).length, ss.length), pct(st.tp, st.tp + st.fp), st.fp];
  });
  const phoneAll = pos.filter((s) => phoneRules.includes(s.pos!.rule));
  const phoneTp = phoneRules.reduce((n, r) => n + (ruleStats.get(r)?.tp ?? 0), 0);
  const phoneFp = phoneRules.reduce((n, r) => n + (ruleStats.get(r)?.fp ?? 0), 0);
  phoneRows.push([
    "all phone rules",
    phoneAll.length,
    pct(phoneAll.filter(own).length, phoneAll.length),
    pct(phoneTp, phoneTp + phoneFp),
    phoneFp,
  ]);
  return [
    {
      title: "Detection quality on the labeled corpus, per family (sluice scan vs secretlint, same files)",
      columns: [
        "family",
        "kinds",
        "samples",
        "recall (own rule)",
        "recall (any rule of the family)",
        "secretlint recall",
        "precision",
        "false findings",
      ],
      rows: familyRows,
      notes: [
        `${pos.length} positive files (${KINDS_BY_RULE.size} kinds in up to 9 contexts), ${neg.length} negative files. sluice scan took ${sluiceSeconds.toFixed(2)} s, secretlint ${lint.seconds.toFixed(2)} s.`,
        `Negative files with any finding: sluice ${sluiceNeg}/${neg.length}, secretlint ${lintNeg}/${neg.length}.`,
        `False findings: ${falseList.join("; ") || "none"}.`,
        `Missed (rule: contexts): ${missedKinds.map(([r, c]) => `${r}: ${c.join(", ")}`).join("; ") || "none"}.`,
      ],
    },
    {
      title: "Phone numbers: recall and precision of the phone rules on their samples",
      columns: ["rule", "samples", "recall", "precision", "false findings"],
      rows: phoneRows,
      notes: [
        "Samples: numbers of 26 countries (national, international and E.164 forms) in a JSON user record, a YAML fixture, a log line, prose, a .env file and the shared contexts, and CJK documents; negatives hold phone words next to versions, dates, addresses, ids, fiction-range numbers and phone code.",
      ],
    },
    {
      title: "Recall per category (own rule; any rule of the family; secretlint)",
      columns: ["category", "kinds", "samples", "recall (own rule)", "recall (family)", "secretlint recall"],
      rows: group((s) => s.pos!.category).map(([c, ss]) => recallRow(c, ss)),
    },
    {
      title: "Recall per context",
      columns: ["context", "kinds", "samples", "recall (own rule)", "recall (family)", "secretlint recall"],
      rows: group((s) => s.pos!.context).map(([c, ss]) => recallRow(c, ss)),
    },
    {
      title: "Per kind: recall and precision of its rule",
      columns: ["rule", "category", "samples", "recall", "precision", "secretlint recall"],
      rows: kindRows,
    },
  ];
}

/** Files of this repository that are not rule data or tests (which hold examples on purpose). */
function repoFiles(): string[] {
  const r = Bun.spawnSync(["git", "ls-files", "-z"], { cwd: ROOT, stdout: "pipe" });
  return r.stdout
    .toString()
    .split("\0")
    .filter((f) => f && !f.startsWith("rules/") && !f.startsWith("test/"))
    .filter((f) => {
      try {
        return statSync(join(ROOT, f)).isFile();
      } catch {
        return false;
      }
    });
}

async function realCodeTable(): Promise<BenchTable> {
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  for (const [label, targets, cwd] of [
    ["node_modules (installed dependencies)", ["node_modules"], ROOT],
    ["this repository without rules/ and test/", repoFiles(), ROOT],
  ] as const) {
    const t0 = performance.now();
    const { findings, bytes } = await scan([...targets], cwd);
    const seconds = (performance.now() - t0) / 1000;
    const per10 = (n: number) => ((n / bytes) * 1e7).toFixed(2);
    const fam = (f: string) => findings.filter((x) => x.detector === f);
    rows.push([
      label,
      (bytes / 1e6).toFixed(1),
      seconds.toFixed(2),
      fam("secrets").length,
      per10(fam("secrets").length),
      fam("pii").length,
      per10(fam("pii").length),
      fam("proprietary").length,
      fam("injection").length,
    ]);
    const byRule = new Map<string, Finding[]>();
    for (const f of fam("secrets")) byRule.set(f.rule, [...(byRule.get(f.rule) ?? []), f]);
    notes.push(
      `${label}: secret findings by rule: ${
        [...byRule]
          .sort((a, b) => b[1].length - a[1].length)
          .map(([r, fs]) => `${r} ${fs.length} (e.g. ${fs[0]!.preview} in ${fs[0]!.file})`)
          .join("; ") || "none"
      }.`,
    );
    const pii = new Map<string, number>();
    for (const f of fam("pii")) pii.set(f.rule, (pii.get(f.rule) ?? 0) + 1);
    notes.push(
      `${label}: pii findings by rule: ${[...pii].map(([r, n]) => `${r} ${n}`).join(", ") || "none"}.`,
    );
  }
  return {
    title: "False positives on real code (no secrets planted): findings per 10 MB",
    columns: [
      "input",
      "MB scanned",
      "seconds",
      "secret findings",
      "secrets per 10 MB",
      "pii findings",
      "pii per 10 MB",
      "proprietary findings",
      "injection findings",
    ],
    rows,
    notes: [
      ...notes,
      "Every finding here is counted as false: these files hold no credential of anyone's (documentation values such as AKIAIOSFODNN7EXAMPLE and tutorial URLs are the usual cause). rules/ and test/ are left out of this repository's row because they hold rule examples and planted test values on purpose.",
    ],
  };
}

export async function run(): Promise<BenchTable[]> {
  const tmp = mkdtempSync(join(tmpdir(), "sluice-quality-bench-"));
  try {
    return [...(await corpusTables(tmp)), await realCodeTable()];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

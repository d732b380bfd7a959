/**
 * The result of one `sluice scan` run and its text and JSON renderings. The JSON shape
 * (`schema: "sluice.scan/v1"`) is documented in the README and only grows, never changes.
 */
import {
  ACTION_RANK,
  type Action,
  actionSourceLabel,
  findingVerdict,
  type RuleDef,
  SEVERITIES,
  type Severity,
} from "../core/types.ts";
import { exitCodeFor, type FileResult, type ScanFinding } from "./types.ts";

export interface ScanReport {
  mode: "files" | "diff" | "stdin";
  findings: ScanFinding[];
  files: FileResult[];
  suppressed: number;
  durationMs: number;
  /** Rules in force (SARIF lists the ones that matched). */
  rules: RuleDef[];
  version: string;
  /** Working directory the file paths are relative to. */
  cwd: string;
  /** Worker threads used (0: scanned on the main thread). */
  workers: number;
}

export function strongestAction(findings: ScanFinding[]): Action {
  let best: Action = "pass";
  for (const f of findings) if (ACTION_RANK[f.action] > ACTION_RANK[best]) best = f.action;
  return best;
}

export function reportExitCode(r: ScanReport): number {
  return exitCodeFor(strongestAction(r.findings));
}

export function summary(r: ScanReport) {
  const scanned = r.files.filter((f) => f.skipped === null);
  const by_action: Record<string, number> = {};
  const by_severity: Record<string, number> = {};
  for (const f of r.findings) {
    by_action[f.action] = (by_action[f.action] ?? 0) + 1;
    by_severity[f.severity] = (by_severity[f.severity] ?? 0) + 1;
  }
  return {
    files_scanned: scanned.length,
    bytes_scanned: scanned.reduce((n, f) => n + f.bytes, 0),
    files_skipped_binary: r.files.filter((f) => f.skipped === "binary").length,
    findings: r.findings.length,
    suppressed_by_baseline: r.suppressed,
    by_action,
    by_severity,
    duration_ms: Math.round(r.durationMs),
    workers: r.workers,
  };
}

/** A finding as printed in JSON (no hashes of the value). */
export function publicFinding(f: ScanFinding) {
  return {
    file: f.file,
    line: f.line,
    column: f.column,
    end_line: f.end_line,
    end_column: f.end_column,
    ...findingVerdict(f),
    fingerprint: f.fingerprint,
  };
}

export function renderJson(r: ScanReport): string {
  const action = strongestAction(r.findings);
  return `${JSON.stringify(
    {
      schema: "sluice.scan/v1",
      tool: { name: "sluice", version: r.version },
      mode: r.mode,
      action,
      exit_code: exitCodeFor(action),
      summary: summary(r),
      findings: r.findings.map(publicFinding),
      errors: r.files.filter((f) => f.error).map((f) => ({ file: f.file, message: f.skipped })),
    },
    null,
    2,
  )}\n`;
}

/**
 * SGR styles, applied only when colour is on. A style's own closing code inside the text (a nested
 * style) is followed by its opening code again, so the outer style carries on after it. Local rather
 * than picocolors: loading that module looks at process.stdout, whose stream costs ~1 ms to create,
 * and `--format json` never needs it.
 */
type Paint = (s: string) => string;
function style(open: number, close: number): Paint {
  const o = `\x1b[${open}m`;
  const c = `\x1b[${close}m`;
  return (s) => `${o}${s.includes(c) ? s.replaceAll(c, c + o) : s}${c}`;
}
const ANSI = {
  bold: style(1, 22),
  dim: style(2, 22),
  red: style(31, 39),
  green: style(32, 39),
  yellow: style(33, 39),
  blue: style(34, 39),
  magenta: style(35, 39),
  cyan: style(36, 39),
};
const PLAIN: typeof ANSI = Object.fromEntries(
  Object.keys(ANSI).map((k) => [k, (s: string) => s]),
) as typeof ANSI;
const colors = (on: boolean) => (on ? ANSI : PLAIN);

const SEVERITY_COLOR: Record<Severity, Paint> = {
  critical: (s) => ANSI.bold(ANSI.red(s)),
  high: ANSI.red,
  warning: ANSI.yellow,
  info: ANSI.blue,
};
const ACTION_COLOR: Record<Action, Paint> = {
  block: (s) => ANSI.bold(ANSI.red(s)),
  redact: ANSI.magenta,
  alert: ANSI.yellow,
  log: ANSI.dim,
  pass: ANSI.green,
};

/** One line per finding: `file:line:column  severity  rule  action (where it came from)  preview`. */
export function renderText(r: ScanReport, color: boolean): string {
  const c = colors(color);
  const sev = (s: Severity) => (color ? SEVERITY_COLOR[s](s.padEnd(8)) : s.padEnd(8));
  const act = (a: Action) => (color ? ACTION_COLOR[a](a) : a);
  const lines = r.findings.map(
    (f) =>
      `${c.bold(`${f.file}:${f.line}:${f.column}`)}  ${sev(f.severity)}  ${c.cyan(f.rule)}  ${act(f.action)} ${c.dim(`(${actionSourceLabel(f.action_source, f.detector)})`)}  ${f.preview}${f.decoded ? c.dim(` (decoded: ${f.decoded})`) : ""}`,
  );
  return lines.length ? `${lines.join("\n")}\n` : "";
}

/** The closing line, printed to stderr in text mode. */
export function renderSummaryLine(r: ScanReport, color: boolean): string {
  const c = colors(color);
  const s = summary(r);
  const parts = SEVERITIES.filter((k) => s.by_severity[k]).map((k) => `${s.by_severity[k]} ${k}`);
  const head =
    s.findings === 0
      ? c.green("no findings")
      : c.bold(`${s.findings} finding${s.findings === 1 ? "" : "s"}`) + ` (${parts.join(", ")})`;
  const mb = (s.bytes_scanned / 1e6).toFixed(s.bytes_scanned < 1e6 ? 3 : 1);
  const extra = [
    s.suppressed_by_baseline ? `${s.suppressed_by_baseline} suppressed by baseline` : "",
    s.files_skipped_binary ? `${s.files_skipped_binary} binary skipped` : "",
    s.workers ? `${s.workers} workers` : "",
  ].filter(Boolean);
  return `sluice scan: ${head} in ${s.files_scanned} file${s.files_scanned === 1 ? "" : "s"} (${mb} MB, ${(s.duration_ms / 1000).toFixed(2)} s)${extra.length ? `; ${extra.join(", ")}` : ""}; action ${strongestAction(r.findings)}\n`;
}

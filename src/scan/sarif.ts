/**
 * SARIF 2.1.0 output for GitHub code scanning (`github/codeql-action/upload-sarif`). Levels follow the
 * action policy chose (block/redact: error, alert: warning, log: note); `security-severity` follows
 * the rule's severity so GitHub ranks the alerts.
 */
import { pathToFileURL } from "node:url";
import { type Action, actionSourceLabel, type RuleDef, type Severity } from "../core/types.ts";
import type { ScanReport } from "./report.ts";

export const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";

const LEVEL: Record<Action, "error" | "warning" | "note" | "none"> = {
  block: "error",
  redact: "error",
  alert: "warning",
  log: "note",
  pass: "none",
};
/** GitHub code scanning limits (uploads over them are rejected). */
export const MAX_RESULTS = 25_000;
const MAX_TAGS = 20;
const MAX_TEXT = 1024;

const SECURITY_SEVERITY: Record<Severity, string> = {
  critical: "9.5",
  high: "8.0",
  warning: "5.0",
  info: "2.0",
};

/** File paths as relative URIs (percent-encoded segments), as GitHub expects with `%SRCROOT%`. */
export function toUri(file: string): string {
  return file
    .split("/")
    .map((seg) => encodeURIComponent(seg))
    .join("/");
}

/** A finding's SARIF level ("none" is shown as a note). */
const levelOf = (f: ScanReport["findings"][number]) =>
  LEVEL[f.action] === "none" ? "note" : LEVEL[f.action];

/** One `reportingDescriptor` per rule that found something, in the order of first finding. */
function sarifRules(r: ScanReport, ruleIds: string[]) {
  const known = new Map<string, RuleDef>(r.rules.map((x) => [x.name, x]));
  return ruleIds.map((id) => {
    const def = known.get(id);
    const f = r.findings.find((x) => x.rule === id)!;
    const severity = def?.severity ?? f.severity;
    const description = def?.description || f.description || `${f.detector} finding: ${f.finding_type}`;
    return {
      id,
      name: id,
      shortDescription: { text: description.split("\n")[0]!.slice(0, MAX_TEXT) },
      fullDescription: { text: description.slice(0, MAX_TEXT) },
      help: {
        text: `sluice found a ${f.detector} match of rule ${id}. Remove the value from the file (and rotate it if it is a credential), or add it to the baseline if it is known and accepted.`,
      },
      defaultConfiguration: { level: levelOf(f) },
      properties: {
        tags: [...new Set(["security", f.detector, ...(def?.tags ?? [])])].slice(0, MAX_TAGS),
        "security-severity": SECURITY_SEVERITY[severity],
        precision: "high",
      },
    };
  });
}

/** One `result` per finding shown, with its location and a fingerprint that survives line moves. */
function sarifResults(shown: ScanReport["findings"], index: Map<string, number>) {
  const occurrences = new Map<string, number>();
  return shown.map((f) => ({
    ruleId: f.rule,
    ruleIndex: index.get(f.rule)!,
    level: levelOf(f),
    message: {
      text: `${f.severity} ${f.detector} finding (${f.finding_type}) matched by rule ${f.rule}: ${f.preview}. Action: ${f.action} (${actionSourceLabel(f.action_source, f.detector)}).`,
    },
    locations: [
      {
        physicalLocation: {
          artifactLocation: { uri: toUri(f.file), uriBaseId: "%SRCROOT%" },
          region: {
            startLine: f.line,
            startColumn: f.column,
            endLine: f.end_line,
            endColumn: Math.max(f.end_column, f.end_line === f.line ? f.column + 1 : 1),
          },
        },
      },
    ],
    partialFingerprints: {
      // Stable across line moves: rule, file and masked preview, numbered when repeated in a file.
      primaryLocationLineHash: `${f.fingerprint.slice(0, 16)}:${occurrence(occurrences, f.fingerprint)}`,
      "sluiceFindingHash/v1": f.fingerprint,
    },
    properties: {
      severity: f.severity,
      action: f.action,
      action_source: f.action_source,
      matched_rules: f.matched_rules,
      detector: f.detector,
    },
  }));
}

/** Files that could not be read, and findings left out over GitHub's limit, as warnings. */
function sarifNotifications(r: ScanReport, shown: number) {
  const notifications = r.files
    .filter((f) => f.error)
    .map((f) => ({ level: "warning", message: { text: `${f.file}: ${f.skipped}` } }));
  if (r.findings.length > shown)
    notifications.push({
      level: "warning",
      message: {
        text: `${r.findings.length - shown} findings left out (GitHub accepts ${MAX_RESULTS} per run)`,
      },
    });
  return notifications;
}

export function renderSarif(r: ScanReport): string {
  const ruleIds: string[] = [];
  const index = new Map<string, number>();
  for (const f of r.findings) {
    if (!index.has(f.rule)) {
      index.set(f.rule, ruleIds.length);
      ruleIds.push(f.rule);
    }
  }
  const shown = r.findings.slice(0, MAX_RESULTS);
  const root = pathToFileURL(r.cwd).href.replace(/\/?$/, "/");
  const sarif = {
    $schema: SARIF_SCHEMA,
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: "sluice",
            version: r.version,
            semanticVersion: r.version.replace(/[^0-9A-Za-z.+-].*$/, ""),
            rules: sarifRules(r, ruleIds),
          },
        },
        originalUriBaseIds: { "%SRCROOT%": { uri: root } },
        invocations: [
          {
            executionSuccessful: true,
            workingDirectory: { uri: root },
            toolExecutionNotifications: sarifNotifications(r, shown.length),
          },
        ],
        results: sarifResults(shown, index),
        columnKind: "utf16CodeUnits",
      },
    ],
  };
  return `${JSON.stringify(sarif, null, 2)}\n`;
}

function occurrence(seen: Map<string, number>, key: string): number {
  const n = (seen.get(key) ?? 0) + 1;
  seen.set(key, n);
  return n;
}

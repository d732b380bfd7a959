import { describe, expect, test } from "bun:test";
import {
  renderJson,
  renderSummaryLine,
  renderText,
  reportExitCode,
  type ScanReport,
} from "../../src/scan/report.ts";
import { renderSarif, toUri } from "../../src/scan/sarif.ts";
import type { FileResult } from "../../src/scan/types.ts";
import { WindowScanner } from "../../src/scan/window.ts";
import { validateSarif } from "./_sarif.ts";
import { regexScanner, type TestRule } from "./_scanner.ts";

const KEY = "AKIAIOSFODNN7EXAMPLQ";
const RULES: TestRule[] = [
  { name: "aws", pattern: /AKIA[0-9A-Z]{16}/, action: "block", severity: "critical" },
  { name: "email", pattern: /[a-z]+@example\.com/, action: "alert", severity: "warning" },
  { name: "todo", pattern: /TODO-SECRET-\d+/, action: "log", severity: "info" },
];

function report(files: Record<string, string>, rules = RULES): ScanReport {
  const res: FileResult[] = Object.entries(files).map(([file, text]) => {
    const w = new WindowScanner(regexScanner(rules), file);
    w.push(text);
    return { file, bytes: text.length, skipped: null, findings: w.finish() };
  });
  return {
    mode: "files",
    files: res,
    findings: res.flatMap((f) => f.findings),
    suppressed: 0,
    durationMs: 12,
    rules: [],
    version: "0.1.0",
    cwd: "/work/repo",
    workers: 0,
  };
}

describe("exit codes follow the strongest action", () => {
  test.each([
    [{ a: "nothing" }, 0],
    [{ a: `x ${KEY}` }, 1],
    [{ a: "bob@example.com" }, 2],
    [{ a: "TODO-SECRET-1" }, 3],
    [{ a: "TODO-SECRET-1 bob@example.com" }, 2],
    [{ a: "TODO-SECRET-1", b: `${KEY} bob@example.com` }, 1],
  ] as [Record<string, string>, number][])("%j -> %d", (files, code) => {
    expect(reportExitCode(report(files))).toBe(code);
  });

  test("redact fails CI like block", () => {
    const r = report({ a: KEY }, [{ name: "aws", pattern: /AKIA[0-9A-Z]{16}/, action: "redact" }]);
    expect(reportExitCode(r)).toBe(1);
  });
});

describe("text", () => {
  test("file:line:column, severity, rule, action, masked preview; no colour when off", () => {
    const out = renderText(report({ "src/a.ts": `const k =\n  "${KEY}";\n` }), false);
    expect(out).toBe("src/a.ts:2:4  critical  aws  block (set on the rule)  AKIA****MPLQ\n");
    expect(out).not.toContain(KEY);
    expect(out).not.toContain("\x1b[");
  });
  test("colour when on", () => {
    expect(renderText(report({ a: KEY }), true)).toContain("\x1b[");
  });
  test("summary line", () => {
    const line = renderSummaryLine(report({ a: `${KEY} bob@example.com`, b: "" }), false);
    expect(line).toContain("2 findings (1 critical, 1 warning) in 2 files");
    expect(line).toContain("action block");
  });
});

describe("json", () => {
  test("stable schema and no raw value or value hash", () => {
    const r = report({ "a.txt": `one\n${KEY}\n` });
    const out = renderJson(r);
    const j = JSON.parse(out);
    expect(Object.keys(j)).toEqual([
      "schema",
      "tool",
      "mode",
      "action",
      "exit_code",
      "summary",
      "findings",
      "errors",
    ]);
    expect(j.schema).toBe("sluice.scan/v1");
    expect(j.exit_code).toBe(1);
    expect(j.summary).toMatchObject({
      files_scanned: 1,
      findings: 1,
      suppressed_by_baseline: 0,
      by_action: { block: 1 },
    });
    expect(Object.keys(j.findings[0])).toEqual([
      "file",
      "line",
      "column",
      "end_line",
      "end_column",
      "rule",
      "detector",
      "finding_type",
      "severity",
      "action",
      "action_source",
      "matched_rules",
      "preview",
      "description",
      "decoded",
      "fingerprint",
    ]);
    expect(j.findings[0]).toMatchObject({
      file: "a.txt",
      line: 2,
      column: 1,
      end_column: 21,
      preview: "AKIA****MPLQ",
    });
    expect(out).not.toContain(KEY);
    expect(out).not.toContain(r.findings[0]!.content_hash);
  });
});

describe("sarif", () => {
  test("valid SARIF 2.1.0 for GitHub code scanning", () => {
    const r = report({ "src/a b.ts": `${KEY}\n${KEY}\nbob@example.com TODO-SECRET-9`, "ok.ts": "" });
    r.files.push({
      file: "unreadable.txt",
      bytes: 0,
      skipped: "cannot read: EACCES",
      error: true,
      findings: [],
    });
    const out = renderSarif(r);
    const log = JSON.parse(out);
    expect(validateSarif(log)).toEqual([]);
    const run = log.runs[0];
    expect(run.tool.driver.rules.map((x: { id: string }) => x.id)).toEqual(["aws", "email", "todo"]);
    expect(run.tool.driver.version).toBe(r.version);
    for (const rule of run.tool.driver.rules) expect(rule.help.text).not.toContain("conversation");
    expect(run.results.map((x: { level: string }) => x.level)).toEqual(["error", "error", "warning", "note"]);
    expect(run.results[0].locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: "src/a%20b.ts", uriBaseId: "%SRCROOT%" },
      region: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 21 },
    });
    // The same value twice in a file gets distinct, stable fingerprints.
    const fps = run.results.map(
      (x: { partialFingerprints: { primaryLocationLineHash: string } }) =>
        x.partialFingerprints.primaryLocationLineHash,
    );
    expect(new Set(fps).size).toBe(fps.length);
    expect(fps[0].replace(/:\d+$/, "")).toBe(fps[1].replace(/:\d+$/, ""));
    expect(run.originalUriBaseIds["%SRCROOT%"].uri).toBe("file:///work/repo/");
    expect(run.invocations[0].toolExecutionNotifications[0].message.text).toContain("unreadable.txt");
    expect(out).not.toContain(KEY);
  });

  test("an empty scan is valid too", () => {
    expect(validateSarif(JSON.parse(renderSarif(report({ a: "clean" }))))).toEqual([]);
  });

  test("the validator catches what GitHub rejects", () => {
    const bad = JSON.parse(renderSarif(report({ a: KEY })));
    bad.version = "2.0.0";
    bad.runs[0].results[0].locations[0].physicalLocation.region.startLine = 0;
    bad.runs[0].results[0].extra = 1;
    delete bad.runs[0].tool.driver.rules[0].help;
    const problems = validateSarif(bad);
    expect(problems.join("\n")).toContain("must be 2.1.0");
    expect(problems.join("\n")).toContain("startLine");
    expect(problems.join("\n")).toContain('"extra" is not allowed');
    expect(problems.join("\n")).toContain("help is required");
  });

  test("uris are percent-encoded relative references", () => {
    expect(toUri("dir/ä #1.txt")).toBe("dir/%C3%A4%20%231.txt");
  });
});

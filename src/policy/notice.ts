/**
 * What sluice tells the user about findings: which finding types, where (the JSON path), which rule,
 * and which setting gave the action (so the user knows what to change); never a value. Built here once; each transport renders the block notice in its own shape (a
 * provider's 403 error, a JSON-RPC error, a WebSocket error event and close reason).
 */
import { actionSourceLabel, type Finding } from "../core/types.ts";

/** Distinct findings named in a message; the rest are counted. */
const MAX_NAMED = 10;
/** Longest path shown in a message; a longer one (deeply nested data) keeps its start and end. */
const MAX_PATH = 200;

/** `path` cut to at most `max` characters: its first 40% and its end, joined by "…". */
export function shortPath(path: string, max: number): string {
  if (path.length <= max) return path;
  const head = Math.floor(max * 0.4);
  return `${path.slice(0, head)}…${path.slice(path.length - (max - head - 1))}`;
}

const shown = (path: string) => shortPath(path, MAX_PATH);

/** `aws_access_key_id at messages[0].content (rule aws_access_key_id; block: the rule's default); …` */
export function describeFindings(findings: Finding[], max = MAX_NAMED): string {
  const parts = new Set<string>();
  for (const f of findings)
    parts.add(
      f.action_source === "system"
        ? // What sluice decided about the payload itself says why in its description (never a value).
          `${f.finding_type} at ${shown(f.path) || "(body)"}: ${f.description}`
        : `${f.finding_type} at ${shown(f.path) || "(body)"} (rule ${f.rule}; ${f.action}: ${actionSourceLabel(f.action_source, f.detector)})`,
    );
  const all = [...parts];
  const more = all.length > max ? `; and ${all.length - max} more` : "";
  return all.slice(0, max).join("; ") + more;
}

export interface BlockNotice {
  /** One line for the user: what sluice blocked, what it found where, what to do. */
  message: string;
  /** What it found where, for log lines: `describeFindings` of the findings the message names. */
  found: string;
  /** Every finding of the payload, for shapes that carry data (the JSON-RPC error's `data`). */
  findings: {
    type: string;
    rule: string;
    path: string;
    severity: string;
    action: string;
    action_source: string;
  }[];
}

/**
 * The rules that decided a payload's action: those of its findings whose action is the payload's
 * (comma-separated, sorted), or null when none is (a pass, or an action no finding gave).
 * @example decidingRules(findings, "block") // "aws_access_key_id,github_pat"
 */
export function decidingRules(findings: Finding[], action: string): string | null {
  return listOf(findings, action, (f) => f.rule);
}

/** Where the action of `decidingRules` came from: their findings' `action_source`s, or null. */
export function decidingSource(findings: Finding[], action: string): string | null {
  return listOf(findings, action, (f) => f.action_source);
}

function listOf(findings: Finding[], action: string, field: (f: Finding) => string): string | null {
  const values = [...new Set(findings.filter((f) => f.action === action).map(field))].sort();
  return values.length > 0 ? values.join(",") : null;
}

/** Where the user can see a block's findings and allow a false positive: the running dashboard. */
export interface NoticeLinks {
  /** The dashboard's base URL (`http://127.0.0.1:8081`). */
  dashboard: string;
  /** The session the findings were stored under. */
  session: string | null;
}

/** What to do about a block: remove the value, or allowlist a false positive (with links when there is a dashboard). */
function nextSteps(blocking: Finding[], links: NoticeLinks | null): string {
  if (!links) return "Remove the sensitive content or ask your administrator to adjust the rule.";
  const q = new URLSearchParams();
  if (links.session) q.set("session_id", links.session);
  const rules = [...new Set(blocking.map((f) => f.rule))];
  if (rules.length === 1) q.set("rule", rules[0]!);
  const type = blocking.every((f) => f.detector === "pii") ? "pii" : "secrets";
  return `Remove the sensitive content; if it is a false positive, allow it with \`sluice allowlist add '<the value>' --type ${type}\` or at ${links.dashboard}/#/allowlists. Findings: ${links.dashboard}/#/findings?${q}`;
}

/**
 * Why `subject` ("this request", "tools/call write_file", …) was blocked: the message names the
 * findings whose action is block (all of them when none is), what to do, and (with `links`) where
 * the findings are and where a false positive is allowed; the list holds every finding.
 */
export function blockNotice(
  subject: string,
  findings: Finding[],
  links: NoticeLinks | null = null,
): BlockNotice {
  const blocking = findings.filter((f) => f.action === "block");
  const named = blocking.length > 0 ? blocking : findings;
  const found = describeFindings(named);
  return {
    message: `sluice blocked ${subject}: ${found}. ${nextSteps(named, links)}`,
    found,
    findings: findings.map((f) => ({
      type: f.finding_type,
      rule: f.rule,
      path: shown(f.path),
      severity: f.severity,
      action: f.action,
      action_source: f.action_source,
    })),
  };
}

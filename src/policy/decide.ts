/**
 * Policy: matches → findings → one action. The matches of one segment that overlap are one place;
 * each match is checked against the allowlists and given its action by precedence (`resolveAction`),
 * and the strongest match decides the place: one finding names the deciding rule and keeps every rule
 * that matched there. A finding is masked (preview and hashes; the raw value goes no further) and,
 * when its action is `redact`, turned into an edit that puts a typed placeholder over the whole place.
 * The payload takes the strongest action of its findings.
 */
import type { Config } from "../config/schema.ts";
import {
  ACTION_RANK,
  type Action,
  type ActionSource,
  type Finding,
  type RuleDef,
  SEVERITIES,
  strongest,
} from "../core/types.ts";
import { type Matcher, scanText } from "../detect/matcher.ts";
import type { SegmentTexts } from "../payload/extract.ts";
import { placeholder, type RedactEdit } from "../payload/redact.ts";
import { isAllowlisted } from "./allowlist.ts";
import type { CachedMatch } from "./dedup.ts";
import { contentHash, maskValue, valueHash } from "./mask.ts";
import { shortPath } from "./notice.ts";

export interface ResolvedAction {
  action: Action;
  source: ActionSource;
}

/** Whether the rule's action is one the user chose (any rule not shipped, or a shipped one they changed). */
export function userSetAction(rule: RuleDef): boolean {
  return rule.action !== "" && (rule.source !== "builtin" || rule.action_by_user === true);
}

/**
 * The action of one match, strongest source first: an action the user set on the rule, then
 * `detectors.<name>.action`, then the rule's shipped default, then `pipeline.default_action`.
 */
export function resolveAction(rule: RuleDef, cfg: Config): ResolvedAction {
  if (userSetAction(rule)) return { action: rule.action as Action, source: "rule" };
  const det = cfg.detectors[rule.detector]?.action;
  if (det) return { action: det, source: "detector" };
  if (rule.action) return { action: rule.action, source: "rule_default" };
  return { action: cfg.pipeline.default_action, source: "default" };
}

/**
 * Longest path a finding carries (stored, shown, exported): a string nested a million levels deep
 * has a path of megabytes. Allowlists and redaction still use the whole path.
 */
const MAX_FINDING_PATH = 1024;

/** A path with a key that is not a plain short name: `a["x y"]`, or a name of 16+ characters. */
const ODD_KEY = /\["|[A-Za-z0-9_$]{16}/;

/**
 * A JSON path as it may be reported: object keys are part of it and are not scanned as text, so a
 * key that matches a rule (a token used as a key) is masked like any matched value.
 */
export function maskKeysInPath(matcher: Matcher, path: string): string {
  if (!ODD_KEY.test(path)) return path;
  const found = scanText(matcher, path, { encoding: null }).sort((a, b) => a.start - b.start);
  if (found.length === 0) return path;
  let out = "";
  let at = 0;
  for (let k = 0; k < found.length; k++) {
    const start = Math.max(at, found[k]!.start);
    let end = found[k]!.end;
    while (k + 1 < found.length && found[k + 1]!.start < end) end = Math.max(end, found[++k]!.end);
    if (end <= start) continue;
    out += path.slice(at, start) + maskValue(path.slice(start, end));
    at = end;
  }
  return out + path.slice(at);
}

const SEVERITY_RANK = Object.fromEntries(SEVERITIES.map((s, i) => [s, SEVERITIES.length - i])) as Record<
  RuleDef["severity"],
  number
>;

/** A match that reached policy, with its action. */
interface Ranked {
  m: CachedMatch;
  resolved: ResolvedAction;
}

/**
 * Whether `a` beats `b` at one place: the stronger action, then a rule that names the kind of value
 * over a generic one (a Bugsnag key stays a Bugsnag key when it is also assigned to `api_key`), then
 * the higher severity, then the longer match.
 */
function beats(a: Ranked, b: Ranked): boolean {
  const byAction = ACTION_RANK[a.resolved.action] - ACTION_RANK[b.resolved.action];
  if (byAction !== 0) return byAction > 0;
  const byKind = Number(b.m.rule.tags.includes("generic")) - Number(a.m.rule.tags.includes("generic"));
  if (byKind !== 0) return byKind > 0;
  const bySeverity = SEVERITY_RANK[a.m.rule.severity] - SEVERITY_RANK[b.m.rule.severity];
  if (bySeverity !== 0) return bySeverity > 0;
  return a.m.end - a.m.start > b.m.end - b.m.start;
}

/** The finding of the place `group` (its matches, the deciding one first) at `shown`. */
function toFinding(group: Ranked[], shown: string, cfg: Config, hmacKey: Uint8Array | null): Finding {
  const { m, resolved } = group[0]!;
  // Hashed once per match: a remembered match is reported again in later turns.
  m.hashes ??= {
    content: contentHash(m.value, hmacKey),
    value: hmacKey ? valueHash(m.value, hmacKey) : null,
    preview: maskValue(m.value),
  };
  const matched = [m.rule.name];
  for (let k = 1; k < group.length; k++) {
    const name = group[k]!.m.rule.name;
    if (!matched.includes(name)) matched.push(name);
  }
  return {
    rule: m.rule.name,
    detector: m.rule.detector,
    finding_type: m.rule.name,
    severity: m.rule.severity,
    action: resolved.action,
    action_source: resolved.source,
    matched_rules: matched,
    path: shown,
    start: m.start,
    end: m.end,
    preview: m.hashes.preview,
    content_hash: m.hashes.content,
    value_hash: cfg.analytics.hash_secrets ? m.hashes.value : null,
    decoded: m.decoded,
    description: m.rule.description,
  };
}

export interface Decision {
  action: Action;
  findings: Finding[];
  /** One placeholder per place whose action is `redact`, over the whole place. */
  edits: RedactEdit[];
}

/**
 * Findings, edits and the strongest action of the matches of every segment. `path` is where a value
 * was found (allowlists match it); the path reported has keys that match a rule masked.
 */
export function decide(
  segments: SegmentTexts,
  per: CachedMatch[][],
  matcher: Matcher,
  cfg: Config,
  hmacKey: Uint8Array | null,
): Decision {
  const findings: Finding[] = [];
  const edits: RedactEdit[] = [];
  let action: Action = "pass";
  for (let i = 0; i < per.length; i++) {
    const matches = per[i]!;
    if (matches.length === 0) continue;
    const path = segments.path(i);
    let kept: Ranked[] = [];
    for (const m of matches)
      if (!isAllowlisted(cfg.allowlists, m.rule.detector, m.value, [path]))
        kept.push({ m, resolved: resolveAction(m.rule, cfg) });
    if (kept.length === 0) continue;
    if (kept.length > 1) kept = kept.sort((a, b) => a.m.start - b.m.start || b.m.end - a.m.end);
    const shown = maskKeysInPath(matcher, shortPath(path, MAX_FINDING_PATH));
    // Places: runs of matches that overlap, in order of their start.
    for (let k = 0; k < kept.length; ) {
      let end = kept[k]!.m.end;
      let best = k;
      let j = k + 1;
      for (; j < kept.length && kept[j]!.m.start < end; j++) {
        if (kept[j]!.m.end > end) end = kept[j]!.m.end;
        if (beats(kept[j]!, kept[best]!)) best = j;
      }
      const group =
        j - k === 1 ? [kept[k]!] : [kept[best]!, ...kept.slice(k, j).filter((_, x) => x + k !== best)];
      const f = toFinding(group, shown, cfg, hmacKey);
      findings.push(f);
      action = strongest(action, f.action);
      if (f.action === "redact")
        edits.push({ path, start: kept[k]!.m.start, end, replacement: placeholder(f.finding_type) });
      k = j;
    }
  }
  return { action, findings, edits };
}

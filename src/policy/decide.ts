/**
 * Policy: matches → findings → one action. Each match is checked against the allowlists, given its
 * action (the rule's, else its detector's, else the pipeline default), masked (preview and hashes;
 * the raw value goes no further) and, when its action is `redact`, turned into an edit that puts a
 * typed placeholder in its place. The payload takes the strongest action of its findings.
 */
import type { Config } from "../config/schema.ts";
import { type Action, type Finding, type RuleDef, strongest } from "../core/types.ts";
import { type Matcher, scanText } from "../detect/matcher.ts";
import type { SegmentTexts } from "../payload/extract.ts";
import { placeholder, type RedactEdit } from "../payload/redact.ts";
import { isAllowlisted } from "./allowlist.ts";
import type { CachedMatch } from "./dedup.ts";
import { contentHash, maskValue, valueHash } from "./mask.ts";
import { shortPath } from "./notice.ts";

/** The action of one finding: the rule's, else its detector's, else the pipeline default. */
export function resolveAction(rule: RuleDef, cfg: Config): Action {
  if (rule.action) return rule.action;
  const det = cfg.detectors[rule.detector]?.action;
  if (det) return det;
  return cfg.pipeline.default_action;
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

/**
 * The finding of one match, or null when an allowlist lets it be. `path` is where the value was
 * found (allowlists match it); `shown` is the path reported.
 */
export function toFinding(
  m: CachedMatch,
  path: string,
  shown: string,
  cfg: Config,
  hmacKey: Uint8Array | null,
): Finding | null {
  if (isAllowlisted(cfg.allowlists, m.rule.detector, m.value, [path])) return null;
  // Hashed once per match: a remembered match is reported again in later turns.
  m.hashes ??= {
    content: contentHash(m.value, hmacKey),
    value: hmacKey ? valueHash(m.value, hmacKey) : null,
    preview: maskValue(m.value),
  };
  return {
    rule: m.rule.name,
    detector: m.rule.detector,
    finding_type: m.rule.name,
    severity: m.rule.severity,
    action: resolveAction(m.rule, cfg),
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
  /** One placeholder per finding whose action is `redact`. */
  edits: RedactEdit[];
}

/** Findings, edits and the strongest action of the matches of every segment. */
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
    if (per[i]!.length === 0) continue;
    const path = segments.path(i);
    const shown = maskKeysInPath(matcher, shortPath(path, MAX_FINDING_PATH));
    for (const m of per[i]!) {
      const f = toFinding(m, path, shown, cfg, hmacKey);
      if (!f) continue;
      findings.push(f);
      action = strongest(action, f.action);
      if (f.action === "redact")
        edits.push({ path, start: m.start, end: m.end, replacement: placeholder(f.finding_type) });
    }
  }
  return { action, findings, edits };
}

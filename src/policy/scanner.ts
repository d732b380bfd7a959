/**
 * The scanner behind the request-scanning hook: payload adapters → detection engine → policy.
 * SEAM (owned by detection): `createScanner` keeps its signature.
 *
 * Per request: decode the body, extract segments (payload/), look each segment's fingerprint up in
 * the session cache and scan only the new ones in one batch (detect/), then turn every match — new
 * or remembered — into a Finding (allowlists, action, masked preview, hashes) and resolve the
 * strongest action. For `redact` the body is rebuilt with typed placeholders. Raw values never leave.
 */
import type { Config } from "../config/schema.ts";
import type { RequestHook, ScanRequest, Verdict } from "../core/hook.ts";
import { type Action, type Finding, type RuleDef, strongest } from "../core/types.ts";
import {
  type EncodingOptions,
  type Engine,
  MAX_MATCHES_PER_RULE,
  type RawMatch,
  scanText,
} from "../detect/engine.ts";
import { checkUserPattern } from "../detect/pattern.ts";
import { compileEngine } from "../detect/snapshot.ts";
import { extractTexts, TEXT_PATH } from "../payload/extract.ts";
import { parseJsonBody } from "../payload/json-source.ts";
import { placeholder, type RedactEdit, redactJson, redactText } from "../payload/redact.ts";
import { isAllowlisted } from "./allowlist.ts";
import { type CachedMatch, fingerprint, SegmentCache } from "./dedup.ts";
import { contentHash, copyString, maskValue, valueHash } from "./mask.ts";

export interface ScannerOptions {
  /** The configuration in force (read on every request, so reloads apply at once). */
  config: () => Config;
  /** The enabled rules in force, and a version that changes whenever they change. */
  rules: () => RuleDef[];
  rulesVersion: () => number;
  /**
   * Per-installation HMAC key: keys `content_hash`, and `value_hash` when `analytics.hash_secrets`.
   * Null only where findings are never stored (`sluice scan`): plain content hashes, no value hashes.
   */
  hmacKey: Uint8Array | null;
}

export interface Scanner {
  /** The proxy/WebSocket/MCP hook. Never throws for a scanning fault: callers still wrap it. */
  hook: RequestHook;
  /** Scan plain text (the `scan` command, MCP tool results). `path` is reported as the finding path. */
  scanText(text: string, path?: string): Finding[];
  /** Counters: segments scanned vs. answered from the session cache, and what the cache holds. */
  stats?(): ScannerStats;
}

export interface ScannerStats {
  segments_scanned: number;
  segments_cached: number;
  chars_scanned: number;
  sessions: number;
  fingerprints: number;
}

/** Segments shorter than this are scanned every time rather than remembered. */
const MIN_CACHED = 16;
/** The result of a segment without findings: most segments share this one frozen list. */
const NO_MATCHES: CachedMatch[] = Object.freeze([]) as unknown as CachedMatch[];
/** Segments at least this long are scanned by themselves, not copied into the batch. */
const SCAN_ALONE = 2048;
/** Joins segments for one batched scan; no rule matches across it. */
const SEP = "\n\u0000\n";

const patternChecks = new Map<string, boolean>();
function userPatternOk(pattern: string): boolean {
  let ok = patternChecks.get(pattern);
  if (ok === undefined) {
    ok = checkUserPattern(pattern).ok;
    if (patternChecks.size > 10_000) patternChecks.clear();
    patternChecks.set(pattern, ok);
  }
  return ok;
}

/**
 * Whether a scan stopped early for some rule: the engine keeps at most MAX_MATCHES_PER_RULE matches
 * of a rule per call, so later ones were not reported.
 */
function hitCap(matches: RawMatch[]): boolean {
  if (matches.length < MAX_MATCHES_PER_RULE) return false;
  const counts = new Map<RuleDef, number>();
  for (const m of matches) {
    const n = (counts.get(m.rule) ?? 0) + 1;
    if (n >= MAX_MATCHES_PER_RULE) return true;
    counts.set(m.rule, n);
  }
  return false;
}

/** A path with a key that is not a plain short name: `a["x y"]`, or a name of 16+ characters. */
const ODD_KEY = /\["|[A-Za-z0-9_$]{16}/;

/**
 * A JSON path as it may be reported: object keys are part of it and are not scanned as text, so a
 * key that matches a rule (a token used as a key) is masked like any matched value.
 */
function maskPath(engine: Engine, path: string): string {
  if (!ODD_KEY.test(path)) return path;
  const found = scanText(engine, path, { encoding: null }).sort((a, b) => a.start - b.start);
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

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function globToRe(glob: string): string {
  return glob
    .split(/(\*\*|\*|\?)/)
    .map((p) =>
      p === "**" ? "[\\w./-]{0,256}" : p === "*" ? "[\\w.-]{0,64}" : p === "?" ? "[\\w.-]" : escapeRe(p),
    )
    .join("");
}

/** Rules that come from the configuration itself: proprietary keywords and file patterns, custom_rules. */
export function configRules(cfg: Config, existing: Set<string>): RuleDef[] {
  const out: RuleDef[] = [];
  const base = { enabled: true, tier: "custom" as const, source: "config" as const, tags: [] as string[] };
  const kws = cfg.proprietary.keywords.filter((k) => k.trim().length > 0);
  if (kws.length > 0 && !existing.has("proprietary_keyword"))
    out.push({
      ...base,
      name: "proprietary_keyword",
      pattern: `(?i)(?<![\\w])(${kws.map((k) => escapeRe(k.trim()).replace(/\s+/g, "\\s{1,4}")).join("|")})(?![\\w])`,
      detector: "proprietary",
      severity: "warning",
      action: "",
      description: "A keyword listed in proprietary.keywords",
      tags: ["proprietary", "keyword"],
    });
  const files = cfg.proprietary.file_patterns.filter((f) => f.trim().length > 0);
  if (files.length > 0 && !existing.has("proprietary_file_pattern"))
    out.push({
      ...base,
      name: "proprietary_file_pattern",
      pattern: `(?<![\\w.-])((?:[\\w.-]{1,64}/){0,4}(?:${files.map((f) => globToRe(f.trim())).join("|")}))(?![\\w.-])`,
      detector: "proprietary",
      severity: "warning",
      action: "",
      description: "A file name matching proprietary.file_patterns",
      tags: ["proprietary", "file"],
    });
  for (const c of cfg.custom_rules) {
    if (existing.has(c.name)) continue;
    out.push({
      ...base,
      name: c.name,
      pattern: c.pattern,
      detector: c.detector,
      severity: c.severity,
      action: c.action,
      description: c.description,
      tags: c.tags,
      validator: c.validator ?? null,
      keywords: c.keywords ?? null,
    });
  }
  return out;
}

function encodingOf(cfg: Config): EncodingOptions | null {
  if (!cfg.pipeline.stages.encoding_decode.enabled) return null;
  const e = cfg.pipeline.encoding;
  if (e.max_depth === 0 || !(e.base64 || e.hex || e.url || e.unicode)) return null;
  return { ...e };
}

/** The action of one finding: the rule's, else its detector's, else the pipeline default. */
export function resolveAction(rule: RuleDef, cfg: Config): Action {
  if (rule.action) return rule.action;
  const det = cfg.detectors[rule.detector]?.action;
  if (det) return det;
  return cfg.pipeline.default_action;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });
const encoder = new TextEncoder();

export function createScanner(opts: ScannerOptions): Scanner {
  const cache = new SegmentCache();
  const counters = { segments_scanned: 0, segments_cached: 0, chars_scanned: 0 };
  let compiled: { key: string; engine: Engine } | null = null;

  function engineFor(cfg: Config): Engine {
    const key = JSON.stringify([
      opts.rulesVersion(),
      Object.entries(cfg.detectors).map(([k, v]) => [k, v.enabled]),
      cfg.proprietary,
      cfg.custom_rules,
    ]);
    if (compiled?.key === key) return compiled.engine;
    const defs = opts
      .rules()
      .filter((r) => r.enabled !== false)
      .filter((r) => r.source === "builtin" || userPatternOk(r.pattern));
    const all = [...defs, ...configRules(cfg, new Set(defs.map((r) => r.name)))].filter(
      (r) =>
        cfg.detectors[r.detector]?.enabled !== false && (r.source === "builtin" || userPatternOk(r.pattern)),
    );
    const engine = compileEngine(all);
    compiled = { key, engine };
    return engine;
  }

  /** `path` is where the value was found (allowlists match it); `shown` is the path reported. */
  function toFinding(m: CachedMatch, path: string, cfg: Config, shown = path): Finding | null {
    if (isAllowlisted(cfg.allowlists, m.rule.detector, m.value, [path])) return null;
    if (!m.hashes) {
      m.hashes = {
        content: contentHash(m.value, opts.hmacKey),
        value: opts.hmacKey ? valueHash(m.value, opts.hmacKey) : null,
        preview: maskValue(m.value),
      };
    }
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

  /**
   * Matches per segment, from the session cache or one batched scan of the new segments. `capped`:
   * a segment whose scan hit the per-rule match cap (its list is incomplete; it is not remembered).
   */
  function matchSegments(
    texts: string[],
    engine: Engine,
    enc: EncodingOptions | null,
    sessionId: string | null,
    cfg: Config,
  ) {
    const per: CachedMatch[][] = new Array(texts.length);
    const cappedAt = new Set<number>();
    const conv = sessionId ? cache.session(sessionId, cfg.dedup) : null;
    const fps: (bigint | number | null)[] = new Array(texts.length).fill(null);
    const todo: number[] = [];
    for (let i = 0; i < texts.length; i++) {
      const t = texts[i]!;
      if (conv && t.length >= MIN_CACHED) {
        const fp = fingerprint(t);
        const hit = conv.segments.get(fp);
        if (hit) {
          per[i] = hit;
          counters.segments_cached++;
          continue;
        }
        fps[i] = fp;
      }
      todo.push(i);
    }
    if (todo.length > 0) {
      // Large segments are scanned in place; joining them would copy every byte into a new string
      // (after an idle collection that is fresh memory, ~0.6 ms per MB). Small ones are batched:
      // one scan of a few thousand tiny segments costs less than a call for each.
      const parts: string[] = [];
      const bounds: number[] = [];
      const batched: number[] = [];
      let at = 0;
      for (const i of todo) {
        const t = texts[i]!;
        per[i] = NO_MATCHES;
        counters.segments_scanned++;
        counters.chars_scanned += t.length;
        if (t.length >= SCAN_ALONE) {
          scanAlone(i);
          continue;
        }
        bounds.push(at, at + t.length);
        parts.push(t);
        batched.push(i);
        at += t.length + SEP.length;
      }
      const joined = parts.length === 1 ? parts[0]! : parts.join(SEP);
      let found = batched.length > 0 ? scanText(engine, joined, { encoding: enc, bounds }) : [];
      if (batched.length > 1 && hitCap(found)) {
        // The cap counts matches of the whole batch: scan each segment by itself so that findings
        // do not depend on batching (and no segment is remembered as clean for want of room).
        for (const i of batched) scanAlone(i);
        found = [];
      }
      for (const m of found) {
        let lo = 0;
        let hi = batched.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (bounds[mid * 2]! <= m.start) lo = mid;
          else hi = mid - 1;
        }
        const k = lo;
        const base = bounds[k * 2]!;
        if (m.end > bounds[k * 2 + 1]!) continue;
        const i = batched[k]!;
        if (per[i] === NO_MATCHES) per[i] = [];
        // The session cache keeps matches for many turns: the value is copied so that it does not
        // keep the joined text of this request (a slice would reference all of it) alive.
        per[i]!.push({ ...m, value: copyString(m.value), start: m.start - base, end: m.end - base });
      }
      if (found.length > 0 && hitCap(found)) for (const i of batched) cappedAt.add(i);
      if (conv)
        for (const i of todo)
          if (fps[i] !== null && !cappedAt.has(i)) cache.remember(conv, fps[i]!, per[i]!, cfg.dedup);
    }
    return { per, capped: cappedAt.size > 0 };

    function scanAlone(i: number) {
      const found = scanText(engine, texts[i]!, { encoding: enc });
      for (const m of found) {
        if (per[i] === NO_MATCHES) per[i] = [];
        per[i]!.push({ ...m, value: copyString(m.value) });
      }
      if (hitCap(found)) cappedAt.add(i);
    }
  }

  const epochOf = (cfg: Config) => `${compiled?.key}|${JSON.stringify(encodingOf(cfg))}`;

  const hook: RequestHook = (req: ScanRequest): Verdict => {
    const cfg = opts.config();
    if (!cfg.pipeline.stages.outbound_dlp.enabled)
      return {
        action: "pass",
        findings: [],
        scanned_bytes: 0,
        skipped: "pipeline stage outbound_dlp is disabled",
      };
    if (req.body.length > cfg.proxy.max_body_size)
      return {
        action: "pass",
        findings: [],
        scanned_bytes: 0,
        skipped: "body larger than proxy.max_body_size",
      };
    if (req.body.length === 0) return { action: "pass", findings: [], scanned_bytes: 0 };
    const engine = engineFor(cfg);
    const enc = encodingOf(cfg);
    cache.setEpoch(epochOf(cfg));
    // The proxy usually parsed the body already; the text is then only needed to redact.
    let rawText: string | null = null;
    const rawOf = () => (rawText ??= utf8.decode(req.body));
    let json: unknown = req.json;
    let isJson = json !== undefined;
    if (!isJson) {
      json = parseJsonBody(req.body, rawOf);
      isJson = json !== undefined;
    }
    const segments = isJson ? extractTexts(json, req.provider) : { texts: [rawOf()], path: () => TEXT_PATH };
    const { per, capped } = matchSegments(
      segments.texts,
      engine,
      enc,
      req.session?.session_id ? `${req.transport}:${req.session.session_id}` : null,
      cfg,
    );
    const findings: Finding[] = [];
    const edits: RedactEdit[] = [];
    let action: Action = "pass";
    for (let i = 0; i < per.length; i++) {
      if (per[i]!.length === 0) continue;
      const path = segments.path(i);
      const shown = maskPath(engine, path);
      for (const m of per[i]!) {
        const f = toFinding(m, path, cfg, shown);
        if (!f) continue;
        findings.push(f);
        action = strongest(action, f.action);
        if (f.action === "redact")
          edits.push({ path, start: m.start, end: m.end, replacement: placeholder(f.finding_type) });
      }
    }
    const verdict: Verdict = { action, findings, scanned_bytes: req.body.length };
    if (action === "redact" && capped) {
      // Matches past the engine's per-rule cap were not reported, so they cannot be redacted.
      verdict.action = "block";
      verdict.skipped = `more than ${MAX_MATCHES_PER_RULE} matches of a rule; blocked instead of redacted`;
    } else if (action === "redact") {
      try {
        const out = isJson
          ? redactJson(rawOf(), edits, () => {
              throw new Error("a match is not inside a string of the body");
            })
          : redactText(rawOf(), edits);
        verdict.body = encoder.encode(out);
      } catch (err) {
        // The body could not be rebuilt: never forward the unredacted value.
        verdict.action = "block";
        verdict.skipped = `redaction failed (${(err as Error).message}); blocked instead`;
      }
    }
    return verdict;
  };

  // The engine and decoding settings of the last plain-text scan: `sluice scan` calls once a file
  // with the same configuration object, and recomputing engineFor's key and encodingOf cost ~10 us
  // a call. A reload replaces the configuration object (and a rules change bumps the version).
  let plain: { cfg: Config; version: number; engine: Engine; enc: EncodingOptions | null } | null = null;

  function scanPlainText(text: string, path = "text"): Finding[] {
    const cfg = opts.config();
    if (!cfg.pipeline.stages.outbound_dlp.enabled) return [];
    const version = opts.rulesVersion();
    if (plain?.cfg !== cfg || plain.version !== version)
      plain = { cfg, version, engine: engineFor(cfg), enc: encodingOf(cfg) };
    const { engine, enc } = plain;
    const matches: RawMatch[] = scanText(engine, text, { encoding: enc });
    const out: Finding[] = [];
    let shown: string | undefined;
    for (const m of matches) {
      shown ??= maskPath(engine, path);
      const f = toFinding(m as CachedMatch, path, cfg, shown);
      if (f) out.push(f);
    }
    return out;
  }

  return { hook, scanText: scanPlainText, stats: () => ({ ...counters, ...cache.stats() }) };
}

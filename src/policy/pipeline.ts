/**
 * The payload pipeline: the one path from outbound text to a verdict, for every transport. An HTTP
 * request body, a WebSocket frame, an MCP message and a file read by `sluice scan` each become a
 * `Payload` (segments with their paths); `inspect` turns it into findings, one action and the edits
 * that redact it:
 *
 *   size and stage checks → segments (payload/) → matches, remembered per session (match.ts,
 *   detect/) → findings: allowlists, action, masking (decide.ts) → redaction (payload/redact.ts),
 *   or block when it cannot be done → on any fault: forward unscanned with a `scan_error`.
 *
 * `hook` is the same path behind the request-scanning hook contract (core/hook.ts): the proxy, the
 * WebSocket tunnels and the MCP proxy call it with raw bytes. A change of policy, matching or
 * redaction is made here once and holds for all of them.
 */
import type { Config } from "../config/schema.ts";
import type { RequestHook, ScanRequest, Transport, Verdict } from "../core/hook.ts";
import type { Action, Finding, RuleDef } from "../core/types.ts";
import { MAX_MATCHES_PER_RULE } from "../detect/matcher.ts";
import { type DuplicateKey, findDuplicateKey } from "../payload/duplicate-keys.ts";
import { extractTexts, type SegmentTexts, TEXT_PATH } from "../payload/extract.ts";
import { parseJsonSource } from "../payload/json-source.ts";
import { type RedactEdit, redactJson, redactText } from "../payload/redact.ts";
import { type CompiledRules, RuleCompiler } from "./compile.ts";
import { decide } from "./decide.ts";
import type { CachedMatch } from "./dedup.ts";
import { type Junctions, nextJunctions, placeable, withJunctions } from "./junctions.ts";
import { type MatchStats, SegmentMatcher, type SegmentMatches } from "./match.ts";
import { ambiguousJsonFinding, rawScanFinding, scanErrorFinding } from "./system-finding.ts";
import { type Changed, CleanPayloads } from "./unchanged.ts";

export interface PipelineOptions {
  /** The configuration in force (read on every payload, so reloads apply at once). */
  config: () => Config;
  /** The enabled rules in force, and a version that changes whenever they change. */
  rules: () => RuleDef[];
  rulesVersion: () => number;
  /**
   * Per-installation HMAC key: keys `content_hash`, and `value_hash` when `analytics.hash_secrets`.
   * Null only where findings are never stored (`sluice scan`): plain content hashes, no value hashes.
   */
  hmacKey: Uint8Array | null;
  /**
   * Scan only what differs from one of a session's last payloads that was clean (unchanged.ts).
   * Default true; false scans every payload in full (tests compare the two).
   */
  reuseClean?: boolean;
}

/** What one call of the pipeline scans. */
export interface Payload {
  /** Where it comes from; a file (`sluice scan`) is scanned whatever its size, in windows. */
  source: Transport | "file";
  /** Bytes of a body (checked against `proxy.max_body_size`), characters of a text. */
  size: number;
  /** The session memory to use (`http:<session id>`): segments seen there before are not scanned again. */
  scope: string | null;
  /** Where it is, for a `scan_error` finding: `http:/v1/messages`, `mcp:tools/call write_file`. */
  where: string;
  /** The segments to scan, with their paths. Called inside the pipeline: a fault here fails open too. */
  segments(): SegmentTexts;
  /** The payload with these edits applied; throws when one cannot be placed. Absent: report only. */
  redact?(edits: RedactEdit[]): string;
  /**
   * The payload as plain text, when it has a structure (JSON) that is scanned field by field: what
   * is scanned instead when that fails, or when the structure is ambiguous.
   */
  raw?(): string;
  /** A key that one object of the payload's JSON holds twice (only with `raw`). */
  duplicateKey?(): DuplicateKey | null;
}

/** What the pipeline made of a payload. */
export interface Inspection {
  /** The strongest action of the findings, after the checks below ("pass" when none). */
  action: Action;
  /** Every finding that reached policy (including ones remembered from earlier in the session). */
  findings: Finding[];
  /** The redactions of the findings whose action is redact. */
  edits: RedactEdit[];
  /** The payload with the edits applied, when the action is redact. */
  redacted?: string;
  /** Bytes (characters for a text) scanned; 0 when skipped. */
  scanned: number;
  /** Why the payload was not scanned, or why its action was raised to block. */
  skipped?: string;
  /** Set when scanning failed: the payload goes out unscanned and `findings` holds its `scan_error`. */
  error?: string;
}

export interface Pipeline {
  /** The one path from a payload to findings, action and edits. Never throws. */
  inspect(payload: Payload): Inspection;
  /** `inspect` over a raw body, as the request-scanning hook. Never throws. */
  hook: RequestHook;
  /** Segments scanned vs. answered from session memory, and what that memory holds. */
  stats(): MatchStats;
  /** Drop what the session memories hold for `req`'s scope (its session on its transport). */
  forget(req: Pick<ScanRequest, "transport" | "session">): void;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });
const encoder = new TextEncoder();
/** The matches of a text that has none. */
const NONE: CachedMatch[] = Object.freeze([]) as unknown as CachedMatch[];

/** The session memory a request's payloads share (`http:<session id>`), or null when it names no session. */
const scopeOf = (req: Pick<ScanRequest, "transport" | "session">): string | null =>
  req.session?.session_id ? `${req.transport}:${req.session.session_id}` : null;

/** Where a request is, for findings about it as a whole: `http:/v1/messages`. */
export const whereOf = (req: ScanRequest): string => `${req.transport}:${req.path.split("?")[0]}`;

/**
 * A raw body as a payload: parsed as JSON (unless the caller did), every string a segment (only
 * those under `req.select` when given), redacted in place; a body that is not JSON is one segment.
 */
export function bodyPayload(req: ScanRequest): Payload {
  let rawText: string | null = null;
  const raw = () => (rawText ??= utf8.decode(req.body));
  let json: unknown = req.json;
  let source = req.jsonSource;
  const isJson = () => {
    if (json === undefined) {
      const parsed = parseJsonSource(req.body, raw);
      json = parsed?.json;
      source = parsed?.source;
    }
    return json !== undefined;
  };
  return {
    source: req.transport,
    size: req.body.length,
    scope: scopeOf(req),
    where: whereOf(req),
    segments: () => {
      if (!isJson()) return { texts: [raw()], path: () => TEXT_PATH };
      if (!req.texts || req.select) return extractTexts(json, req.provider, req.select);
      let paths: SegmentTexts | null = null;
      return { texts: req.texts, path: (i) => (paths ??= extractTexts(json, req.provider)).path(i) };
    },
    redact: (edits) =>
      isJson()
        ? redactJson(raw(), edits, () => {
            throw new Error("a match is not inside a string of the body");
          })
        : redactText(raw(), edits),
    raw,
    duplicateKey: () => (req.uniqueKeys ? null : isJson() ? findDuplicateKey(source ?? raw()) : null),
  };
}

/** A payload's raw text as one segment: what is scanned when its structure could not be. */
function rawTextPayload(p: Payload, raw: () => string): Payload {
  return {
    source: p.source,
    size: p.size,
    scope: null,
    where: p.where,
    segments: () => ({ texts: [raw()], path: () => TEXT_PATH }),
    redact: (edits) => redactText(raw(), edits),
  };
}

/** A text (a file, or a window of one) as a payload: one segment at `path`, reported, not redacted. */
export function textPayload(text: string, path: string): Payload {
  return {
    source: "file",
    size: text.length,
    scope: null,
    where: `file:${path}`,
    segments: () => ({ texts: [text], path: () => path }),
  };
}

const nothing = (skipped?: string): Inspection => ({
  action: "pass",
  findings: [],
  edits: [],
  scanned: 0,
  ...(skipped ? { skipped } : {}),
});

/** The one payload pipeline: its state (rules, session memories, kept payloads) and the steps that share it, in one closure. */
export function createPipeline(opts: PipelineOptions): Pipeline {
  const compiler = new RuleCompiler(opts.rules, opts.rulesVersion);
  const matcher = new SegmentMatcher();
  const clean = new CleanPayloads();
  const reuse = opts.reuseClean !== false;

  /**
   * Matches of the changed texts and of the junctions they make; the other texts matched nothing in
   * the kept payload they are from. Their per-text lists in `own`'s order, then the junctions' (as
   * `match`).
   */
  function matchChanged(
    own: SegmentTexts,
    changed: Changed,
    rules: CompiledRules,
    scope: string,
    cfg: Config,
    found: (junctions: Junctions) => void,
  ): SegmentMatches {
    // Which text the session's memory held last, before the new ones are remembered.
    const { lastCached, session } = matcher.lastCached(own.texts, rules, scope, cfg.dedup);
    const junctions = nextJunctions(own, lastCached, session, changed);
    found(junctions);
    const fresh = matcher.match(
      own.texts.slice(changed.from, changed.to),
      rules,
      scope,
      cfg.dedup,
      () => junctions.texts,
    );
    const n = own.texts.length;
    const width = changed.to - changed.from;
    const per: CachedMatch[][] = new Array(n).fill(NONE);
    for (let i = changed.from; i < changed.to; i++) per[i] = fresh.per[i - changed.from]!;
    for (let k = width; k < fresh.per.length; k++) per.push(fresh.per[k]!);
    matcher.reused(n - width);
    return { per, capped: fresh.capped, lastCached };
  }

  function scan(p: Payload, cfg: Config): Inspection {
    if (!cfg.pipeline.stages.outbound_dlp.enabled) return nothing("pipeline stage outbound_dlp is disabled");
    if (p.source !== "file" && p.size > cfg.proxy.max_body_size)
      return nothing("body larger than proxy.max_body_size");
    if (p.size === 0) return nothing();
    const dup = p.raw ? p.duplicateKey?.() : null;
    if (dup && p.raw) {
      // JSON.parse kept one value of the key and dropped the others, and an upstream may keep
      // another: refused as ambiguous, or, where allowed, scanned as raw text, which holds them all.
      if (!cfg.proxy.allow_duplicate_keys) {
        const finding = ambiguousJsonFinding(dup.key, dup.path, p.where);
        return { action: "block", findings: [finding], edits: [], scanned: 0, skipped: finding.description };
      }
      p = rawTextPayload(p, p.raw);
    }
    const rules = compiler.for(cfg);
    const own = p.segments();
    // Only what differs from one of the session's last payloads, when that was clean and the
    // session's segment memory is the one it left (unchanged.ts).
    const before = p.scope && reuse ? matcher.memoryMark(rules, p.scope, cfg.dedup) : null;
    const changed = before ? clean.changed(p.scope!, own.texts, rules, cfg, before) : null;
    // The junctions of neighbouring segments are scanned in the same batch as the segments.
    let junctions: Junctions = { texts: [], joins: [] };
    const matched = changed
      ? matchChanged(own, changed, rules, p.scope!, cfg, (j) => (junctions = j))
      : matcher.match(own.texts, rules, p.scope, cfg.dedup, (lastCached, session) => {
          junctions = nextJunctions(own, lastCached, session);
          return junctions.texts;
        });
    const capped = matched.capped;
    const { segments, per } = withJunctions(own, junctions, matched.per);
    if (p.scope && before) {
      const after = matcher.memoryMark(rules, p.scope, cfg.dedup);
      const nothingMatched = !capped && per.every((m) => m.length === 0);
      clean.record(p.scope, own.texts, rules, cfg, nothingMatched, before, after, changed);
    }
    const d = decide(segments, per, rules.matcher, cfg, opts.hmacKey);
    const out: Inspection = { action: d.action, findings: d.findings, edits: d.edits, scanned: p.size };
    if (out.action !== "redact" || !p.redact) return out;
    const unplaceable = out.edits.find((e) => !placeable(e.path));
    if (unplaceable) {
      // The value is in no one string of the payload as it was sent: never forward it unredacted.
      out.action = "block";
      out.skipped = `a value at ${unplaceable.path} cannot be redacted in place; blocked instead`;
      return out;
    }
    if (capped) {
      // Matches past the matcher's per-rule cap were not reported, so they cannot be redacted.
      out.action = "block";
      out.skipped = `more than ${MAX_MATCHES_PER_RULE} matches of a rule; blocked instead of redacted`;
      return out;
    }
    try {
      out.redacted = p.redact(out.edits);
    } catch (err) {
      // The payload could not be rebuilt: never forward the unredacted value.
      out.action = "block";
      out.skipped = `redaction failed (${(err as Error).message}); blocked instead`;
    }
    return out;
  }

  function inspect(p: Payload): Inspection {
    try {
      return scan(p, opts.config());
    } catch (err) {
      if (p.scope) clean.forget(p.scope);
      // Scanning field by field failed: the raw text is scanned with the same rules instead, and
      // what it finds is enforced. The scan_error still says what failed.
      if (p.raw) {
        try {
          const r = scan(rawTextPayload(p, p.raw), opts.config());
          return { ...r, findings: [rawScanFinding(err, p.where), ...r.findings] };
        } catch {
          /* the raw scan failed as well: fail open, below */
        }
      }
      // Fail open: a fault inside sluice must not break the user's tool. The payload goes out
      // unscanned and the scan_error says so.
      return { ...nothing(), findings: [scanErrorFinding(err, p.where)], error: messageOf(err) };
    }
  }

  const hook: RequestHook = (req) => {
    const r = inspect(bodyPayload(req));
    const verdict: Verdict = { action: r.action, findings: r.findings, scanned_bytes: r.scanned };
    if (r.redacted !== undefined) verdict.body = encoder.encode(r.redacted);
    if (r.skipped) verdict.skipped = r.skipped;
    if (r.error) verdict.error = r.error;
    return verdict;
  };

  const forget = (req: Pick<ScanRequest, "transport" | "session">) => {
    const scope = scopeOf(req);
    if (scope === null) return;
    clean.forget(scope);
    matcher.forget(scope);
  };

  return { inspect, hook, stats: () => matcher.stats(), forget };
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Call a request hook (the pipeline's, or one a test or an embedder put in its place) so that it
 * never throws and never returns something unusable: a fault gives a pass verdict with a
 * `scan_error` finding and `error` set. A hook that answers at once (the pipeline's) is answered at
 * once, with no promise between the scan and what the caller does next.
 */
export function callHook(hook: RequestHook, req: ScanRequest): Verdict | Promise<Verdict> {
  let answer: Verdict | PromiseLike<Verdict>;
  try {
    answer = hook(req);
    if (!isThenable(answer)) return usable(answer);
  } catch (err) {
    return faulted(err, req);
  }
  return Promise.resolve(answer)
    .then(usable)
    .catch((err: unknown) => faulted(err, req));
}

const isThenable = (x: unknown): x is PromiseLike<Verdict> =>
  x !== null && typeof x === "object" && typeof (x as { then?: unknown }).then === "function";

/** A hook's verdict, checked: a throw here is the hook's fault. */
function usable(verdict: Verdict): Verdict {
  if (!verdict || typeof verdict.action !== "string" || !Array.isArray(verdict.findings))
    throw new Error("the scanner returned no verdict");
  if (verdict.action === "redact" && !(verdict.body instanceof Uint8Array))
    throw new Error("the scanner chose redact without a body");
  return verdict;
}

function faulted(err: unknown, req: ScanRequest): Verdict {
  return {
    action: "pass",
    findings: [scanErrorFinding(err, whereOf(req))],
    scanned_bytes: 0,
    error: messageOf(err),
  };
}

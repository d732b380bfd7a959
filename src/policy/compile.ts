/**
 * The rules in force for a configuration, compiled: the enabled rules given (built-in, store,
 * imports) plus the rules the configuration itself makes (proprietary keywords and file patterns,
 * `custom_rules`), without those of a disabled detector or with an unsafe user pattern. Compiled
 * once and kept until the rules or the settings they depend on change.
 */
import { customRuleDef } from "../config/custom-rule.ts";
import type { Config } from "../config/schema.ts";
import type { RuleDef } from "../core/types.ts";
import type { EncodingOptions, Matcher } from "../detect/matcher.ts";
import { checkUserPattern } from "../detect/pattern.ts";
import { compileMatcher } from "../detect/snapshot.ts";

/** What one configuration scans with. */
export interface CompiledRules {
  matcher: Matcher;
  /** Decoding of base64/hex/URL/unicode spans, or null when decoding is off. */
  encoding: EncodingOptions | null;
  /**
   * Changes whenever the rules or the decoding change: matches remembered under another epoch
   * are stale.
   */
  epoch: string;
}

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
  for (const c of cfg.custom_rules) if (!existing.has(c.name)) out.push(customRuleDef(c));
  return out;
}

function encodingOf(cfg: Config): EncodingOptions | null {
  if (!cfg.pipeline.stages.encoding_decode.enabled) return null;
  const e = cfg.pipeline.encoding;
  if (e.max_depth === 0 || !(e.base64 || e.hex || e.url || e.unicode)) return null;
  return { ...e };
}

/**
 * Compiles the rules in force for each configuration it is asked about, and keeps the last result.
 * A configuration object is never changed in place (a reload replaces it whole), so the same object
 * with the same rules version is answered without looking further: `sluice scan` asks once a file.
 */
export class RuleCompiler {
  #last: { cfg: Config; version: number; compiled: CompiledRules } | null = null;
  #key = "";

  constructor(
    private readonly rules: () => RuleDef[],
    private readonly rulesVersion: () => number,
  ) {}

  for(cfg: Config): CompiledRules {
    const version = this.rulesVersion();
    if (this.#last?.cfg === cfg && this.#last.version === version) return this.#last.compiled;
    const key = JSON.stringify([
      version,
      Object.entries(cfg.detectors).map(([k, v]) => [k, v.enabled]),
      cfg.proprietary,
      cfg.custom_rules,
    ]);
    const encoding = encodingOf(cfg);
    const epoch = `${key}|${JSON.stringify(encoding)}`;
    let compiled = this.#last?.compiled;
    if (!compiled || key !== this.#key) {
      const defs = this.rules().filter(
        (r) => r.enabled !== false && (r.source === "builtin" || userPatternOk(r.pattern)),
      );
      const all = [...defs, ...configRules(cfg, new Set(defs.map((r) => r.name)))].filter(
        (r) =>
          cfg.detectors[r.detector]?.enabled !== false &&
          (r.source === "builtin" || userPatternOk(r.pattern)),
      );
      compiled = { matcher: compileMatcher(all), encoding, epoch };
      this.#key = key;
    } else if (compiled.epoch !== epoch) compiled = { ...compiled, encoding, epoch };
    this.#last = { cfg, version, compiled };
    return compiled;
  }
}

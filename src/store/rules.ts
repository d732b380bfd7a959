/**
 * The rules table: every rule in force and its hit count (community rules imported once, YAML
 * `custom_rules` reconciled at each load, dashboard and imported rules). Lists are stored as JSON.
 */
import type { Database } from "bun:sqlite";
import type { RuleDef } from "../core/types.ts";
import { loadBuiltinRules } from "../detect/builtin.ts";
import type { RuleRecord } from "./records.ts";
import type { SettingsRepo } from "./settings.ts";
import { countOf, equalities, insertSql, jsonOrNull, likeEscape, type Named, type Row } from "./sql.ts";

/** The setting that says the community rules were imported. */
const IMPORTED = "rules.default_imported";

export interface RuleFilter {
  search?: string;
  detector?: string;
  tier?: string;
  severity?: string;
  enabled?: boolean;
  tag?: string;
  source?: string;
}

export function ruleFromRow(r: Row): RuleRecord {
  const rule: RuleRecord = {
    name: r.name as string,
    pattern: r.pattern as string,
    detector: r.detector as RuleDef["detector"],
    severity: r.severity as RuleDef["severity"],
    action: r.action as RuleDef["action"],
    action_by_user: r.action_by_user === 1,
    enabled: r.enabled === 1,
    tier: r.tier as RuleDef["tier"],
    source: r.source as RuleDef["source"],
    description: r.description as string,
    tags: jsonOrNull<string[]>(r.tags) ?? [],
    validator: (r.validator as RuleDef["validator"]) ?? null,
    keywords: jsonOrNull<string[]>(r.keywords),
    entropy: (r.entropy as number | null) ?? null,
    hit_count: r.hit_count as number,
    created_at: r.created_at as string,
    updated_at: r.updated_at as string,
  };
  const ex = jsonOrNull<string[]>(r.examples);
  if (ex) rule.examples = ex;
  const nex = jsonOrNull<string[]>(r.negative_examples);
  if (nex) rule.negative_examples = nex;
  return rule;
}

/** The columns of the fields a rule (or a patch) sets, lists as JSON. */
function ruleRow(r: Partial<RuleDef>): Named {
  const out: Named = {};
  const list = (v: string[] | null | undefined) => (v ? JSON.stringify(v) : null);
  if (r.name !== undefined) out.name = r.name;
  if (r.pattern !== undefined) out.pattern = r.pattern;
  if (r.detector !== undefined) out.detector = r.detector;
  if (r.severity !== undefined) out.severity = r.severity;
  if (r.action !== undefined) out.action = r.action;
  if (r.action_by_user !== undefined) out.action_by_user = r.action_by_user ? 1 : 0;
  if (r.enabled !== undefined) out.enabled = r.enabled ? 1 : 0;
  if (r.tier !== undefined) out.tier = r.tier;
  if (r.source !== undefined) out.source = r.source;
  if (r.description !== undefined) out.description = r.description;
  if (r.tags !== undefined) out.tags = JSON.stringify(r.tags);
  if (r.validator !== undefined) out.validator = r.validator;
  if (r.keywords !== undefined) out.keywords = list(r.keywords);
  if (r.entropy !== undefined) out.entropy = r.entropy;
  if (r.examples !== undefined) out.examples = list(r.examples);
  if (r.negative_examples !== undefined) out.negative_examples = list(r.negative_examples);
  return out;
}

/**
 * A change the user asked for (the dashboard API, a rules import) as the patch to store: an action
 * given is the user's, so it beats `detectors.<name>.action`; an empty action on a shipped rule gives
 * the choice back, and the rule its shipped default.
 */
export function userPatch(existing: RuleDef, patch: Partial<RuleDef>): Partial<RuleDef> {
  if (patch.action === undefined) return patch;
  if (patch.action === "" && existing.source === "builtin") {
    const shipped = loadBuiltinRules().find((r) => r.name === existing.name);
    return { ...patch, action: shipped?.action ?? "", action_by_user: false };
  }
  return { ...patch, action_by_user: patch.action !== "" };
}

export class RulesRepo {
  #enabled: RuleDef[] | null = null;
  #listeners = new Set<() => void>();
  constructor(private db: Database) {}

  onChanged(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Invalidate caches and tell listeners (the runtime bumps its rules version). */
  changed(): void {
    this.#enabled = null;
    for (const fn of this.#listeners) {
      try {
        fn();
      } catch {
        /* a listener never breaks a rule edit */
      }
    }
  }

  enabled(): RuleDef[] {
    if (!this.#enabled)
      this.#enabled = (
        this.db.query("SELECT * FROM rules WHERE enabled = 1 ORDER BY name").all() as Row[]
      ).map(ruleFromRow);
    return this.#enabled;
  }

  all(): RuleRecord[] {
    return (this.db.query("SELECT * FROM rules ORDER BY name").all() as Row[]).map(ruleFromRow);
  }

  list(f: RuleFilter, limit: number, offset: number): { rules: RuleRecord[]; total: number } {
    const { parts, params } = equalities(f, ["detector", "tier", "severity", "source"]);
    if (f.enabled !== undefined) {
      parts.push("enabled = ?");
      params.push(f.enabled ? 1 : 0);
    }
    if (f.tag !== undefined) {
      parts.push("EXISTS (SELECT 1 FROM json_each(rules.tags) WHERE json_each.value = ?)");
      params.push(f.tag);
    }
    const terms = (f.search ?? "")
      .split(",")
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean);
    if (terms.length) {
      parts.push(
        `(${terms.map(() => "(lower(name) LIKE ? ESCAPE '\\' OR lower(description) LIKE ? ESCAPE '\\')").join(" OR ")})`,
      );
      for (const t of terms) {
        const like = `%${likeEscape(t)}%`;
        params.push(like, like);
      }
    }
    const where = parts.length ? `WHERE ${parts.join(" AND ")}` : "";
    const total = countOf(this.db, `rules ${where}`, params);
    const rules = (
      this.db
        .query(`SELECT * FROM rules ${where} ORDER BY name LIMIT ? OFFSET ?`)
        .all(...params, limit, offset) as Row[]
    ).map(ruleFromRow);
    return { rules, total };
  }

  get(name: string): RuleRecord | null {
    const r = this.db.query("SELECT * FROM rules WHERE name = ?").get(name) as Row | null;
    return r ? ruleFromRow(r) : null;
  }

  /** Insert a rule; returns false when the name exists. Does not notify (callers batch). */
  insert(rule: RuleDef): boolean {
    const now = new Date().toISOString();
    const byUser = rule.action_by_user ?? (rule.source !== "builtin" && rule.action !== "");
    const row = {
      ...ruleRow({ ...rule, action_by_user: byUser }),
      hit_count: rule.hit_count ?? 0,
      created_at: now,
      updated_at: now,
    };
    return (
      this.db.query(insertSql("rules", Object.keys(row)).replace("INSERT", "INSERT OR IGNORE")).run(row)
        .changes > 0
    );
  }

  /** Apply a partial update (already validated). Returns false when the rule does not exist. */
  update(name: string, patch: Partial<RuleDef>): boolean {
    const { name: _name, ...fields } = ruleRow(patch);
    const row: Named = { ...fields, updated_at: new Date().toISOString() };
    const set = Object.keys(row).map((c) => `${c} = $${c}`);
    return (
      this.db.query(`UPDATE rules SET ${set.join(", ")} WHERE name = $name`).run({ ...row, name }).changes > 0
    );
  }

  /**
   * Insert the community rules the first time only, so that a rule a user deleted or changed stays
   * so (the setting remembers it was done). Returns how many were inserted (0 after the first time).
   */
  importOnce(defs: RuleDef[], settings: SettingsRepo): number {
    if (settings.get(IMPORTED) !== null) return 0;
    let n = 0;
    this.transaction(() => {
      for (const r of defs) if (this.insert({ ...r, tier: r.tier ?? "community", source: "builtin" })) n++;
      settings.set(IMPORTED, new Date().toISOString());
    });
    if (n > 0) this.changed();
    return n;
  }

  /**
   * Make the config-sourced rules those of `wanted` (YAML `custom_rules`, as rules): add new ones,
   * update changed ones (keeping whether each is enabled), delete those no longer listed. A rule of
   * the same name from elsewhere is kept, and `onKept` told.
   */
  reconcileConfig(wanted: RuleDef[], onKept: (name: string, source: RuleDef["source"]) => void): void {
    let changed = false;
    const names = new Set(wanted.map((r) => r.name));
    this.transaction(() => {
      for (const want of wanted) {
        const existing = this.get(want.name);
        const def: RuleDef = { ...want, enabled: existing?.enabled ?? true };
        if (!existing) {
          this.insert(def);
          changed = true;
        } else if (existing.source !== "config") onKept(want.name, existing.source);
        else if (!sameRule(existing, def)) {
          this.update(want.name, def);
          changed = true;
        }
      }
      for (const r of this.all())
        if (r.source === "config" && !names.has(r.name)) {
          this.delete(r.name);
          changed = true;
        }
    });
    if (changed) this.changed();
  }

  delete(name: string): boolean {
    return this.db.query("DELETE FROM rules WHERE name = ?").run(name).changes > 0;
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  addHits(hits: Map<string, number>): void {
    const q = this.db.query("UPDATE rules SET hit_count = hit_count + ? WHERE name = ?");
    this.db.transaction(() => {
      for (const [name, n] of hits) q.run(n, name);
    })();
  }

  stats() {
    const rules = this.all();
    const count = (key: (r: RuleRecord) => string) => {
      const out: Record<string, number> = {};
      for (const r of rules) out[key(r)] = (out[key(r)] ?? 0) + 1;
      return out;
    };
    const tags = new Map<string, number>();
    for (const r of rules) for (const t of r.tags) tags.set(t, (tags.get(t) ?? 0) + 1);
    const enabled = rules.filter((r) => r.enabled).length;
    return {
      total: rules.length,
      enabled,
      disabled: rules.length - enabled,
      by_tier: count((r) => r.tier),
      by_detector: count((r) => r.detector),
      by_severity: count((r) => r.severity),
      by_source: count((r) => r.source),
      tags: [...tags]
        .map(([tag, count]) => ({ tag, count }))
        .sort((a, b) => b.count - a.count || (a.tag < b.tag ? -1 : 1)),
    };
  }
}

/** Whether a stored rule already says what `def` says (the fields a `custom_rules` entry sets). */
function sameRule(existing: RuleDef, def: RuleDef): boolean {
  return (
    existing.pattern === def.pattern &&
    existing.detector === def.detector &&
    existing.severity === def.severity &&
    existing.action === def.action &&
    existing.description === def.description &&
    JSON.stringify(existing.tags) === JSON.stringify(def.tags) &&
    (existing.validator ?? null) === (def.validator ?? null) &&
    JSON.stringify(existing.keywords ?? null) === JSON.stringify(def.keywords ?? null)
  );
}

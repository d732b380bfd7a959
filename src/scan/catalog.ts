/**
 * The rule set `sluice rules list|export|import` work on: the rule store (`{config_dir}/sluice.db`,
 * what `serve` enforces) when it exists, else the built-in rules and the config's `custom_rules`
 * (what `serve` would import on first start). Filters match `GET /api/v1/rules`.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/schema.ts";
import { Bus } from "../core/bus.ts";
import { Logger } from "../core/log.ts";
import type { RuleDef } from "../core/types.ts";
import type { RuleFilter } from "../store/rules.ts";
import { rulesInForce } from "./setup.ts";

/** The API's filter semantics in memory: comma-separated search terms match name or description (OR). */
export function filterRules(rules: RuleDef[], f: RuleFilter): RuleDef[] {
  const terms = (f.search ?? "")
    .split(",")
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  return rules
    .filter(
      (r) =>
        (f.detector === undefined || r.detector === f.detector) &&
        (f.tier === undefined || r.tier === f.tier) &&
        (f.severity === undefined || r.severity === f.severity) &&
        (f.source === undefined || r.source === f.source) &&
        (f.enabled === undefined || r.enabled === f.enabled) &&
        (f.tag === undefined || r.tags.includes(f.tag)) &&
        (terms.length === 0 ||
          terms.some((t) => r.name.toLowerCase().includes(t) || r.description.toLowerCase().includes(t))),
    )
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export interface Catalog {
  /** "store" or "builtin+config". */
  origin: "store" | "builtin+config";
  where: string;
  list(f: RuleFilter): RuleDef[];
  close(): Promise<void>;
}

export function storePath(configDir: string): string {
  return join(configDir, "sluice.db");
}

async function openRuleStore(configDir: string) {
  const { openStore } = await import("../store/index.ts");
  return openStore({ configDir, bus: new Bus(), log: new Logger({ stderr: false }) });
}

export async function openCatalog(config: Config, configDir: string): Promise<Catalog> {
  const db = storePath(configDir);
  if (existsSync(db)) {
    const store = await openRuleStore(configDir);
    return {
      origin: "store",
      where: db,
      list: (f) => store.rules.list(f, 1_000_000, 0).rules,
      close: () => store.close(),
    };
  }
  const rules = rulesInForce(config);
  return {
    origin: "builtin+config",
    where: "built-in rules and config custom_rules",
    list: (f) => filterRules(rules, f),
    close: async () => {},
  };
}

export interface ImportOutcome {
  added: string[];
  updated: string[];
  skipped: string[];
}

/** Add rules to the store (creating it when needed). Existing names are skipped unless `replace`. */
export async function importRules(
  configDir: string,
  rules: RuleDef[],
  replace: boolean,
): Promise<ImportOutcome> {
  const store = await openRuleStore(configDir);
  const out: ImportOutcome = { added: [], updated: [], skipped: [] };
  try {
    store.db.transaction(() => {
      for (const r of rules) {
        if (store.rules.insert(r)) out.added.push(r.name);
        else if (replace) {
          const { name: _n, hit_count: _h, ...patch } = r;
          store.rules.update(r.name, { ...patch, action_by_user: patch.action !== "" });
          out.updated.push(r.name);
        } else out.skipped.push(r.name);
      }
    })();
    store.rules.changed();
  } finally {
    await store.close();
  }
  return out;
}

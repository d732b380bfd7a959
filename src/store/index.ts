/**
 * The store: SQLite at `{config_dir}/sluice.db`. Subscribes to the bus and writes off the request path.
 * SEAM (owned by store/dashboard): the Store members below are what the runtime relies on; more may be added.
 */
import type { CustomRuleConfig } from "../config/schema.ts";
import type { Bus } from "../core/bus.ts";
import type { Logger } from "../core/log.ts";
import type { RuleDef } from "../core/types.ts";

export interface StoreOptions {
  configDir: string;
  bus: Bus;
  log: Logger;
  /** Database file; default `{configDir}/sluice.db`. ":memory:" for tests. */
  path?: string;
  /** Audit JSONL directory; default `{configDir}/audit`. */
  auditDir?: string;
}

export interface Store {
  /** Enabled rules in force: imported community rules, YAML custom_rules and dashboard rules. */
  enabledRules(): RuleDef[];
  /** Imports the community rules the first time only (returns how many were imported; 0 after). */
  importDefaultRules(rules: RuleDef[]): number;
  /** YAML `custom_rules` are authoritative: add, update, and remove stale config-sourced rules. */
  reconcileConfigRules(rules: CustomRuleConfig[]): void;
  /** Called whenever the rule set changes (API edits, imports); the runtime bumps its rules version. */
  onRulesChanged(fn: () => void): void;
  getSetting(key: string): string | null;
  setSetting(key: string, value: string): void;
  /** Write everything queued. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function openStore(_opts: StoreOptions): Store {
  const settings = new Map<string, string>();
  return {
    enabledRules: () => [],
    importDefaultRules: () => 0,
    reconcileConfigRules: () => {},
    onRulesChanged: () => {},
    getSetting: (k) => settings.get(k) ?? null,
    setSetting: (k, v) => void settings.set(k, v),
    flush: async () => {},
    close: async () => {},
  };
}

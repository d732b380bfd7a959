/**
 * What a running `sluice serve` shares between its parts (proxy, store, dashboard, MCP events).
 * Implemented in src/runtime/; the dashboard and store receive it rather than reaching for globals.
 */

import type { Config } from "../config/schema.ts";
import type { Bus } from "../core/bus.ts";
import type { Logger } from "../core/log.ts";
import type { RuleDef } from "../core/types.ts";
import type { Notifications } from "../notify/service.ts";

export type ProxyMode = "active" | "passthrough";

export interface ReloadResult {
  ok: boolean;
  /** `key: old -> new` lines. */
  changes: string[];
  /** Why the new configuration was refused (the old one stays). */
  error?: string;
  warnings: string[];
}

export interface Runtime {
  readonly configDir: string;
  readonly bus: Bus;
  readonly log: Logger;
  readonly startedAt: Date;
  /** The running build's version: the release's, or `<package version>-dev` from source. */
  readonly version: string;
  /** The configuration in force; replaced whole on reload. */
  config(): Config;
  /** The notification channels and their dispatch; null until the runtime has started them. */
  notifications(): Notifications | null;
  mode(): ProxyMode;
  /** Switch mode, record `mode_changed`, emit `mode-changed`, persist. */
  setMode(mode: ProxyMode, source: string): void;
  /**
   * Re-read the files (SIGHUP) or apply flat keys over them (`PUT /api/v1/config`), validate, swap
   * whole or keep the old config. Flat keys from the API are persisted to `{config_dir}/config.yaml`.
   */
  reload(patch?: Record<string, unknown>, source?: "sighup" | "api"): Promise<ReloadResult>;
  /** The rule set in force; the scanner recompiles when `rulesVersion()` changes. */
  rules(): RuleDef[];
  rulesVersion(): number;
  /** Tell the runtime the rule store changed (API edits): rules take effect on the next request. */
  rulesChanged(): void;
  /** Counters for /health, /api/v1/status and the shutdown summary. */
  stats(): { requests: number; active_requests: number; findings: number; by_action: Record<string, number> };
  /** The `content_hash` this installation stores for a value (keyed; see src/policy/mask.ts). */
  contentHash(value: string): string;
  /** Where the proxy actually listens. */
  proxyAddress(): { host: string; port: number };
  /** Clients that extensions add to the catalog. */
  extensionClients(): {
    id: string;
    display_name: string;
    setup: string;
    website?: string;
    ua_prefixes?: string[];
  }[];
}

/**
 * The scanner behind the request-scanning hook: payload adapters → detection engine → policy.
 * SEAM (owned by detection): the signature is fixed; the body is filled in by the detection work.
 */
import type { Config } from "../config/schema.ts";
import type { RequestHook } from "../core/hook.ts";
import type { Finding, RuleDef } from "../core/types.ts";

export interface ScannerOptions {
  /** The configuration in force (read on every request, so reloads apply at once). */
  config: () => Config;
  /** The enabled rules in force, and a version that changes whenever they change. */
  rules: () => RuleDef[];
  rulesVersion: () => number;
  /** Per-installation HMAC key for `value_hash`; null disables value hashes. */
  hmacKey: Uint8Array | null;
}

export interface Scanner {
  /** The proxy/WebSocket/MCP hook. Never throws for a scanning fault: callers still wrap it. */
  hook: RequestHook;
  /** Scan plain text (the `scan` command, MCP tool results). `path` is reported as the finding path. */
  scanText(text: string, path?: string): Finding[];
}

export function createScanner(_opts: ScannerOptions): Scanner {
  return {
    hook: () => ({ action: "pass", findings: [], scanned_bytes: 0 }),
    scanText: () => [],
  };
}

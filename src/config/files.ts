/**
 * Which configuration files apply, and the configuration when none does. This module loads neither
 * the schema (zod) nor the YAML parser: `sluice scan` with no config file, the common case, needs
 * neither. load.ts does the rest (reading, merging, validating).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "./schema.ts";

/** A configuration problem a user can fix. Its message names the key, the value and what is allowed. */
export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(
    message: string,
    readonly key?: string,
  ) {
    super(message);
  }
}

/** `$SLUICE_HOME`, else `$XDG_CONFIG_HOME/sluice`, else `~/.config/sluice`. */
export function configDir(env: Record<string, string | undefined> = process.env): string {
  if (env.SLUICE_HOME) return resolve(env.SLUICE_HOME);
  if (env.XDG_CONFIG_HOME) return join(resolve(env.XDG_CONFIG_HOME), "sluice");
  // node:os only without $HOME: loading it costs ~0.4 ms at every start.
  return join(env.HOME || (require("node:os") as typeof import("node:os")).homedir(), ".config", "sluice");
}

export interface LoadOptions {
  /** Explicit `--config` path; it must exist. Default `{config_dir}/config.yaml`, optional. */
  configPath?: string;
  /** Directory searched for `.sluice.yaml`; default the working directory. null disables. */
  projectDir?: string | null;
  env?: Record<string, string | undefined>;
  /**
   * Refuse a `custom_rules` pattern that could backtrack catastrophically (default true). Off only
   * for `sluice rules validate`, which reports every problem of every rule with its line.
   */
  checkPatterns?: boolean;
}

export interface LoadedConfig {
  config: Config;
  /** Files that were read, in merge order. */
  files: string[];
  warnings: string[];
  configDir: string;
}

/**
 * The config files to merge, in order: `{config_dir}/config.yaml` (or `--config`, which must exist),
 * then `.sluice.yaml` of the project directory unless it is the same file.
 */
export function configFiles(opts: LoadOptions = {}): { dir: string; files: string[] } {
  const dir = configDir(opts.env ?? process.env);
  const files: string[] = [];
  const globalPath = opts.configPath ? resolve(opts.configPath) : join(dir, "config.yaml");
  if (opts.configPath && !existsSync(globalPath))
    throw new ConfigError(`config file ${globalPath} does not exist`);
  if (existsSync(globalPath)) files.push(globalPath);
  const projectDir = opts.projectDir === undefined ? process.cwd() : opts.projectDir;
  if (projectDir) {
    const projectPath = join(projectDir, ".sluice.yaml");
    if (existsSync(projectPath) && resolve(projectPath) !== globalPath) files.push(projectPath);
  }
  return { dir, files };
}

/**
 * `configSchema.parse({})` written out, so that it needs no zod (test/config asserts that the two
 * are equal): one line per key, hence its length. A new object on every call: callers may change it.
 */
export function defaults(): Config {
  return {
    port: 8080,
    bind: "127.0.0.1",
    proxy: {
      timeout: 120,
      retries: 1,
      max_connections: 10,
      drain_timeout: 30,
      ca_bundle: null,
      verify_ssl: true,
      max_body_size: 52428800,
      mode: "active",
      allow_unknown_encoding: false,
      allow_duplicate_keys: false,
      reuse_stream_connections: true,
      warm_connections: true,
      upstream_http2: false,
      warm_up: true,
    },
    providers: {
      anthropic: {
        upstream: "https://api.anthropic.com",
      },
      openai: {
        upstream: "https://api.openai.com",
      },
      gemini: {
        upstream: "https://generativelanguage.googleapis.com",
      },
      chatgpt: {
        upstream: "https://chatgpt.com",
      },
      code_assist: {
        upstream: "https://cloudcode-pa.googleapis.com",
      },
    },
    detectors: {
      secrets: {
        enabled: true,
        action: "",
      },
      pii: {
        enabled: true,
        action: "",
      },
      proprietary: {
        enabled: true,
        action: "",
      },
      custom: {
        enabled: true,
        action: "",
      },
      injection: {
        enabled: true,
        action: "",
      },
    },
    proprietary: {
      keywords: [],
      file_patterns: [],
    },
    pipeline: {
      default_action: "log",
      parallel_batching: false,
      stages: {
        outbound_dlp: {
          enabled: true,
        },
        encoding_decode: {
          enabled: true,
        },
      },
      encoding: {
        base64: true,
        hex: true,
        url: true,
        unicode: true,
        max_depth: 2,
        min_decoded_length: 8,
        max_decoded_length: 10000,
      },
    },
    custom_rules: [],
    allowlists: {
      secrets: [],
      pii: [],
      paths: [],
    },
    dashboard: {
      port: 8081,
      enabled: true,
      password: null,
      session_ttl_minutes: 720,
    },
    analytics: {
      hash_secrets: true,
    },
    dedup: {
      conversation_ttl_minutes: 60,
      finding_ttl_minutes: 60,
      max_conversations: 1000,
      max_hashes_per_conversation: 50000,
    },
    mcp: {
      request_tracking: true,
      unsolicited_response_action: "warn",
      scan_tool_descriptions: true,
      detect_drift: true,
      drift_action: "warn",
      session_binding: false,
      unknown_tool_action: "block",
      env_filter: true,
      env_allowlist: [],
    },
    rules: {
      auto_import: true,
    },
    websocket: {
      allowed_origins: [],
      allowed_private_targets: [],
      forward_credentials: false,
    },
    relay: {
      port: 8080,
      fail_mode: "open",
      engine_url: "http://localhost:8090",
      health_check_interval: 2,
      health_check_timeout: 1,
      queue_on_startup: 2,
      timeout: 150,
    },
    engine: {
      port: 8090,
    },
    store: {
      retention_days: 90,
    },
    logging: {
      level: "warning",
      format: "text",
      dir: null,
      max_file_bytes: 10485760,
      max_files: 5,
    },
    extensions: [],
    extension_timeout_ms: 500,
    tracing: {
      enabled: false,
      endpoint: null,
      service_name: "sluice",
    },
    notifications: {
      channels: [],
    },
  };
}

/**
 * loadConfig, without loading the schema or YAML parser when there is nothing to read: no config
 * file and no `SLUICE_DASHBOARD_PASSWORD`. Otherwise it is load.ts's loadConfig.
 */
export async function loadConfigQuick(opts: LoadOptions = {}): Promise<LoadedConfig> {
  const env = opts.env ?? process.env;
  const { dir, files } = configFiles(opts);
  if (files.length === 0 && !env.SLUICE_DASHBOARD_PASSWORD)
    return { config: defaults(), files, warnings: [], configDir: dir };
  const { loadConfig } = await import("./load.ts");
  return loadConfig(opts);
}

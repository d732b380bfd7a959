/**
 * The one schema of sluice's configuration.
 * The file loader, `PUT /api/v1/config` and `sluice rules validate` all check against it.
 */
import { z } from "zod";
import { CUSTOM_RULE_FIELDS, type RuleFields, readRuleFields } from "../core/rule.ts";
import { RULE_ACTIONS, SEVERITIES } from "../core/types.ts";
import { channelSchema } from "../notify/channel-schema.ts";

const int = (min: number, max: number, def: number) => z.number().int().min(min).max(max).default(def);
const seconds = (min: number, max: number, def: number) => z.number().min(min).max(max).default(def);

export const ruleActionSchema = z.enum(RULE_ACTIONS);
export const severitySchema = z.enum(SEVERITIES);

const upstream = (def: string) =>
  z
    .object({
      upstream: z
        .string()
        .url()
        .refine((u) => /^https?:\/\//.test(u), { message: "must be an http:// or https:// URL" })
        .default(def),
    })
    .prefault({});

const detector = z
  .object({
    enabled: z.boolean().default(true),
    action: ruleActionSchema.default(""),
  })
  .prefault({});

type CustomFields = Pick<RuleFields, (typeof CUSTOM_RULE_FIELDS)[number]>;
/** A `custom_rules` entry (`validator` and `keywords` may be left out when it is built in code). */
export type CustomRuleConfig = Omit<CustomFields, "validator" | "keywords"> &
  Partial<Pick<CustomFields, "validator" | "keywords">>;

/** A `custom_rules` entry: the rule fields it may have, read as every rule is read (core/rule.ts). */
export const customRuleSchema = z.record(z.string(), z.unknown()).transform((raw, ctx): CustomRuleConfig => {
  const rule = readRuleFields(raw, CUSTOM_RULE_FIELDS, (field, problem) =>
    ctx.addIssue({ code: "custom", path: field ? [field] : [], message: problem, input: raw }),
  );
  return rule ?? z.NEVER;
});

export { customRuleDef } from "./custom-rule.ts";

const stringList = z.array(z.string()).default([]);

export const configSchema = z.object({
  port: int(1, 65535, 8080),
  bind: z.string().default("127.0.0.1"),
  proxy: z
    .object({
      timeout: seconds(1, 300, 120),
      retries: int(0, 5, 1),
      max_connections: int(1, 100, 10),
      drain_timeout: seconds(0, 300, 30),
      ca_bundle: z.string().nullable().default(null),
      verify_ssl: z.boolean().default(true),
      max_body_size: int(1024, 1024 * 1024 * 1024, 52428800),
      mode: z.enum(["active", "passthrough"]).default("active"),
      /**
       * Forward bodies in a Content-Encoding or charset sluice cannot read (their bytes scanned as
       * text) instead of refusing them with 415.
       */
      allow_unknown_encoding: z.boolean().default(false),
      /**
       * Forward JSON with a key repeated in one object (every value scanned) instead of blocking it
       * as ambiguous: sluice and the upstream could each read a different one of the values.
       */
      allow_duplicate_keys: z.boolean().default(false),
      /** A stream that ends cleanly leaves its upstream connection for the next request (false: closed after use). */
      reuse_stream_connections: z.boolean().default(true),
      /** Keep a connection open to each upstream with recent traffic (at start and after idle eviction). */
      warm_connections: z.boolean().default(true),
      /** HTTP/2 to upstreams that offer it, instead of keep-alive HTTP/1.1 (docs/upstream-connections.md). */
      upstream_http2: z.boolean().default(false),
      /** At start, run synthetic turns through the request path so its code is compiled before real ones come (src/proxy/warm-up.ts). */
      warm_up: z.boolean().default(true),
    })
    .prefault({}),
  providers: z
    .object({
      anthropic: upstream("https://api.anthropic.com"),
      openai: upstream("https://api.openai.com"),
      gemini: upstream("https://generativelanguage.googleapis.com"),
      /** Codex signed in with ChatGPT; request paths keep their `/backend-api/…` prefix. */
      chatgpt: upstream("https://chatgpt.com"),
      /** Gemini CLI signed in with Google (the Code Assist server). */
      code_assist: upstream("https://cloudcode-pa.googleapis.com"),
    })
    .prefault({}),
  detectors: z
    .object({
      secrets: detector,
      pii: detector,
      proprietary: detector,
      custom: detector,
      injection: detector,
    })
    .prefault({}),
  proprietary: z
    .object({
      /** Extra keywords flagged as proprietary (case-insensitive, whole word). */
      keywords: stringList,
      /** Extra file-name globs flagged when seen as paths in the conversation. */
      file_patterns: stringList,
    })
    .prefault({}),
  pipeline: z
    .object({
      default_action: z.enum(["log", "alert", "redact", "block"]).default("log"),
      parallel_batching: z.boolean().default(false),
      stages: z
        .object({
          outbound_dlp: z.object({ enabled: z.boolean().default(true) }).prefault({}),
          encoding_decode: z.object({ enabled: z.boolean().default(true) }).prefault({}),
        })
        .prefault({}),
      encoding: z
        .object({
          base64: z.boolean().default(true),
          hex: z.boolean().default(true),
          url: z.boolean().default(true),
          unicode: z.boolean().default(true),
          max_depth: int(0, 5, 2),
          min_decoded_length: int(1, 1000, 8),
          max_decoded_length: int(8, 10_000_000, 10000),
        })
        .prefault({}),
    })
    .prefault({}),
  custom_rules: z.array(customRuleSchema).default([]),
  allowlists: z
    .object({
      secrets: stringList,
      pii: stringList,
      paths: stringList,
    })
    .prefault({}),
  dashboard: z
    .object({
      port: int(1, 65535, 8081),
      enabled: z.boolean().default(true),
      password: z.string().min(1).nullable().default(null),
      session_ttl_minutes: int(1, 10080, 720),
    })
    .prefault({}),
  analytics: z.object({ hash_secrets: z.boolean().default(true) }).prefault({}),
  dedup: z
    .object({
      conversation_ttl_minutes: int(1, 10080, 60),
      finding_ttl_minutes: int(1, 10080, 60),
      max_conversations: int(1, 100000, 1000),
      max_hashes_per_conversation: int(1, 10_000_000, 50000),
    })
    .prefault({}),
  mcp: z
    .object({
      request_tracking: z.boolean().default(true),
      unsolicited_response_action: z.enum(["warn", "block"]).default("warn"),
      scan_tool_descriptions: z.boolean().default(true),
      detect_drift: z.boolean().default(true),
      drift_action: z.enum(["warn", "block"]).default("warn"),
      session_binding: z.boolean().default(false),
      unknown_tool_action: z.enum(["warn", "block"]).default("block"),
      env_filter: z.boolean().default(true),
      env_allowlist: stringList,
    })
    .prefault({}),
  rules: z.object({ auto_import: z.boolean().default(true) }).prefault({}),
  websocket: z
    .object({
      allowed_origins: stringList,
      allowed_private_targets: stringList,
      forward_credentials: z.boolean().default(false),
    })
    .prefault({}),
  relay: z
    .object({
      port: int(1, 65535, 8080),
      fail_mode: z.enum(["open", "closed"]).default("open"),
      engine_url: z.string().url().default("http://localhost:8090"),
      health_check_interval: seconds(0.1, 300, 2),
      health_check_timeout: seconds(0.1, 300, 1),
      queue_on_startup: seconds(0, 300, 2),
      timeout: seconds(1, 600, 150),
    })
    .prefault({}),
  engine: z.object({ port: int(1, 65535, 8090) }).prefault({}),
  store: z
    .object({
      /** Findings, audit entries and WebSocket records older than this are deleted. 0 keeps everything. */
      retention_days: int(0, 3650, 90),
    })
    .prefault({}),
  logging: z
    .object({
      level: z.enum(["debug", "info", "warning", "error"]).default("warning"),
      format: z.enum(["text", "json"]).default("text"),
      /** Audit log directory; null means `{config_dir}/audit`. */
      dir: z.string().nullable().default(null),
      max_file_bytes: int(1024, 1024 * 1024 * 1024, 10 * 1024 * 1024),
      max_files: int(1, 100, 5),
    })
    .prefault({}),
  /** Plugin files (TypeScript or JavaScript), relative to the config directory; see docs/extensions.md. */
  extensions: stringList,
  /** How long an extension hook that decides (pre_request, evaluate) may take before it is ignored. */
  extension_timeout_ms: int(1, 60_000, 500),
  /** Spans of proxied requests over OTLP/HTTP; off unless enabled. */
  tracing: z
    .object({
      enabled: z.boolean().default(false),
      /** The OTLP traces URL; null: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, or localhost:4318. */
      endpoint: z.string().url().nullable().default(null),
      service_name: z.string().min(1).default("sluice"),
    })
    .prefault({}),
  /** Channels from the file are read-only in the dashboard except enable/disable and test. */
  notifications: z
    .object({
      channels: z
        .array(channelSchema)
        .default([])
        .refine((cs) => new Set(cs.map((c) => c.name)).size === cs.length, {
          message: "channel names must be unique",
        }),
    })
    .prefault({}),
});

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;

/** The configuration with every default filled in. */
export function defaultConfig(): Config {
  return configSchema.parse({});
}

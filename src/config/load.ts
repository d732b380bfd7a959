/**
 * Loading the configuration: `{config_dir}/config.yaml` (or `--config`) merged with `.sluice.yaml`
 * of the working directory, checked against the schema. Startup and reload both come through here.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseDocument } from "yaml";
import type { z } from "zod";
import { checkUserPattern } from "../detect/pattern.ts";
import { ConfigError, configFiles, type LoadedConfig, type LoadOptions } from "./files.ts";
import { type Config, configSchema } from "./schema.ts";

export type { LoadedConfig, LoadOptions } from "./files.ts";
export { ConfigError, configDir } from "./files.ts";

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);

/** Deep merge: objects merge key by key, everything else (arrays included) is replaced by `over`. */
export function mergeConfig(base: Plain, over: Plain): Plain {
  const out: Plain = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isPlain(b) && isPlain(v) ? mergeConfig(b, v) : v;
  }
  return out;
}

function readYaml(path: string): Plain {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as Error).message}`);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const line = err.linePos?.[0]?.line;
    throw new ConfigError(`${path}${line ? `:${line}` : ""}: invalid YAML: ${err.message.split("\n")[0]}`);
  }
  const value = doc.toJS() as unknown;
  if (value === null || value === undefined) return {};
  if (!isPlain(value)) throw new ConfigError(`${path}: the top level must be a mapping of keys`);
  return value;
}

/** Every key of `input` that the schema does not know, as dotted paths. */
export function unknownKeys(input: unknown, schema: z.ZodType = configSchema, prefix = ""): string[] {
  const shape = objectShape(schema);
  if (!shape || !isPlain(input)) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(input)) {
    const path = prefix ? `${prefix}.${k}` : k;
    const sub = shape[k];
    if (!sub) out.push(path);
    else out.push(...unknownKeys(v, sub, path));
  }
  return out;
}

function objectShape(schema: z.ZodType): Record<string, z.ZodType> | null {
  // Unwrap default/prefault/optional/nullable wrappers down to an object, if any.
  let s: unknown = schema;
  for (let i = 0; i < 8 && s; i++) {
    const def = (s as { _zod?: { def?: { type?: string; innerType?: unknown; shape?: unknown } } })._zod?.def;
    if (!def) return null;
    if (def.type === "object") return def.shape as Record<string, z.ZodType>;
    s = def.innerType;
  }
  return null;
}

/** Turn a zod issue into "key: value is … (allowed …)". */
export function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const key = issue.path.map(String).join(".") || "(top level)";
  let value: unknown = input;
  for (const p of issue.path)
    value = isPlain(value) || Array.isArray(value) ? (value as Plain)[p as string] : undefined;
  const shown = value === undefined ? "missing" : JSON.stringify(value);
  let allowed = issue.message;
  const i = issue as unknown as Record<string, unknown>;
  if (issue.code === "too_small" || issue.code === "too_big") {
    const fieldSchema = findSchema(issue.path);
    const range = fieldSchema ? numericRange(fieldSchema) : null;
    if (range) allowed = `allowed range ${range[0]} to ${range[1]}`;
    else allowed = `must be ${issue.code === "too_small" ? ">=" : "<="} ${String(i.minimum ?? i.maximum)}`;
  } else if (issue.code === "invalid_value" && Array.isArray(i.values)) {
    allowed = `allowed values: ${(i.values as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
  } else if (issue.code === "invalid_type") {
    allowed = `expected ${String(i.expected)}`;
  }
  return `${key} = ${shown} is invalid: ${allowed}`;
}

function findSchema(path: PropertyKey[]): z.ZodType | null {
  let s: z.ZodType | null = configSchema;
  for (const p of path) {
    if (!s) return null;
    const shape = objectShape(s);
    if (shape && typeof p === "string") {
      s = shape[p] ?? null;
      continue;
    }
    const def = (
      s as unknown as { _zod: { def: { type: string; element?: z.ZodType; innerType?: z.ZodType } } }
    )._zod.def;
    let d = def;
    while (d && d.type !== "array" && d.innerType)
      d = (d.innerType as unknown as { _zod: { def: typeof def } })._zod.def;
    s = d?.element ?? null;
  }
  return s;
}

function numericRange(schema: z.ZodType): [number, number] | null {
  let s: unknown = schema;
  for (let i = 0; i < 8 && s; i++) {
    const z4 = s as {
      minValue?: number | null;
      maxValue?: number | null;
      _zod?: { def?: { innerType?: unknown; type?: string } };
    };
    if (z4._zod?.def?.type === "number") {
      if (typeof z4.minValue === "number" && typeof z4.maxValue === "number")
        return [z4.minValue, z4.maxValue];
      return null;
    }
    s = z4._zod?.def?.innerType;
  }
  return null;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Checks the schema cannot express: loopback bind, a readable CA bundle. */
export function checkSemantics(config: Config, opts: { checkPatterns?: boolean } = {}): void {
  if (!isLoopback(config.bind)) {
    throw new ConfigError(
      `bind = ${JSON.stringify(config.bind)} is invalid: sluice listens on loopback only (127.0.0.1, ::1 or localhost)`,
      "bind",
    );
  }
  // The same check as `sluice rules validate` and the rules API: a pattern that could stall every
  // request is refused where it enters, not skipped by the scanner later without a word.
  for (const [i, rule] of opts.checkPatterns === false ? [] : config.custom_rules.entries()) {
    const check = checkUserPattern(rule.pattern);
    if (!check.ok)
      throw new ConfigError(`custom_rules[${i}] (${rule.name}): ${check.error}`, `custom_rules.${i}.pattern`);
  }
  if (config.proxy.ca_bundle) {
    const certs = readCaBundle(config.proxy.ca_bundle);
    if (certs.length === 0) {
      throw new ConfigError(
        `proxy.ca_bundle = ${JSON.stringify(config.proxy.ca_bundle)} is invalid: no PEM certificate found there`,
        "proxy.ca_bundle",
      );
    }
  }
}

/** TLS settings for upstream connections (proxy, WebSocket tunnels, MCP): `proxy.ca_bundle`, `proxy.verify_ssl`. */
export interface UpstreamTls {
  ca?: string[];
  rejectUnauthorized: boolean;
}

/** The upstream TLS settings of a configuration (reads the CA bundle). Throws ConfigError when unreadable. */
export function upstreamTls(config: Config): UpstreamTls {
  const tls: UpstreamTls = { rejectUnauthorized: config.proxy.verify_ssl };
  if (config.proxy.ca_bundle) tls.ca = readCaBundle(config.proxy.ca_bundle);
  return tls;
}

/** The PEM certificates of a bundle file or of every file in a directory. Throws ConfigError when unreadable. */
export function readCaBundle(path: string): string[] {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    throw new ConfigError(
      `proxy.ca_bundle = ${JSON.stringify(path)} is invalid: no such file or directory`,
      "proxy.ca_bundle",
    );
  }
  const files = st.isDirectory()
    ? readdirSync(path)
        .sort()
        .map((f) => join(path, f))
        .filter((f) => statSync(f).isFile())
    : [path];
  const certs: string[] = [];
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f, "utf8");
    } catch (e) {
      throw new ConfigError(`proxy.ca_bundle: cannot read ${f}: ${(e as Error).message}`, "proxy.ca_bundle");
    }
    for (const m of text.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g))
      certs.push(m[0]);
  }
  return certs;
}

/** Validate an already-merged raw object. Used by the loader and by `PUT /api/v1/config`. */
export function validateConfig(
  raw: Plain,
  opts: { checkPatterns?: boolean } = {},
): { config: Config; warnings: string[] } {
  const warnings = unknownKeys(raw).map((k) => `unknown config key "${k}" is ignored`);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const msgs = parsed.error.issues.map((iss) => describeIssue(iss, raw));
    throw new ConfigError(msgs.join("; "), parsed.error.issues[0]?.path.join("."));
  }
  checkSemantics(parsed.data, opts);
  return { config: parsed.data, warnings };
}

/** Load, merge and validate. Throws ConfigError with a readable message. */
export function loadConfig(opts: LoadOptions = {}): LoadedConfig {
  const env = opts.env ?? process.env;
  const { dir, files } = configFiles(opts);
  let raw: Plain = {};
  for (const file of files) raw = mergeConfig(raw, readYaml(file));
  const password = env.SLUICE_DASHBOARD_PASSWORD;
  if (password) raw = mergeConfig(raw, { dashboard: { password } });
  const where = files.length ? ` (in ${files.join(", ")})` : "";
  try {
    const { config, warnings } = validateConfig(raw, { checkPatterns: opts.checkPatterns });
    if (!config.proxy.verify_ssl)
      warnings.push("proxy.verify_ssl is false: upstream TLS certificates are NOT verified");
    return { config, files, warnings: warnings.map((w) => w + where), configDir: dir };
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(`invalid configuration${where}: ${e.message}`, e.key);
    throw e;
  }
}

/** Read a dotted key out of a config object (`proxy.timeout`). */
export function getKey(obj: unknown, key: string): unknown {
  let v: unknown = obj;
  for (const p of key.split(".")) v = isPlain(v) ? v[p] : undefined;
  return v;
}

/** Turn flat dotted keys (`{"proxy.mode": "passthrough"}`) into a nested object. */
export function unflatten(flat: Record<string, unknown>): Plain {
  const out: Plain = {};
  for (const [key, value] of Object.entries(flat)) {
    const parts = key.split(".");
    let cur = out;
    for (const p of parts.slice(0, -1)) {
      if (!isPlain(cur[p])) cur[p] = {};
      cur = cur[p] as Plain;
    }
    cur[parts[parts.length - 1]!] = value;
  }
  return out;
}

/** Flat list of `key: old -> new` for a reload log line. Secrets (dashboard.password) are masked. */
export function diffConfig(a: unknown, b: unknown, prefix = ""): string[] {
  if (isPlain(a) && isPlain(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => diffConfig(a[k], b[k], prefix ? `${prefix}.${k}` : k));
  }
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  const show = (v: unknown) =>
    prefix === "dashboard.password" ? (v ? '"****"' : "null") : JSON.stringify(v);
  return [`${prefix}: ${show(a)} -> ${show(b)}`];
}

/** The configuration with secrets removed, for `GET /api/v1/config` and logs. */
export function sanitizeConfig(config: Config): Plain {
  const copy = structuredClone(config) as unknown as Plain;
  const dash = copy.dashboard as Plain;
  dash.password_set = !!dash.password;
  delete dash.password;
  return copy;
}

/**
 * Two listeners of one sluice on the same port: the proxy (`port`), the dashboard (`dashboard.port`,
 * when enabled) and, in combined split mode, the engine (`engine.port`). Port 0 (any free port) never
 * clashes. Returns the message naming both keys, or null.
 */
export function listenerClash(c: Config, opts: { combined: boolean }): string | null {
  const ports: [string, number][] = [["port", c.port]];
  if (c.dashboard.enabled) ports.push(["dashboard.port", c.dashboard.port]);
  if (opts.combined) ports.push(["engine.port", c.engine.port]);
  for (let i = 0; i < ports.length; i++)
    for (let j = i + 1; j < ports.length; j++) {
      const [a, pa] = ports[i]!;
      const [b, pb] = ports[j]!;
      if (pa !== 0 && pa === pb)
        return `${a} and ${b} are both ${pa}: the proxy, the dashboard and the engine each need a port of their own`;
    }
  return null;
}

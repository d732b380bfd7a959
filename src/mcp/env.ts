/**
 * The environment filter for stdio servers: the child gets only variables
 * that carry no credentials (PATH, HOME, locale, terminal, temp dirs…), plus `mcp.env_allowlist`
 * names from the parent and `--env KEY=VALUE` pairs. `--no-env-filter` / `mcp.env_filter: false`
 * pass the parent's environment whole.
 */

/** Names passed by default. `LC_*` and `XDG_*_DIR(S)`/`XDG_*_HOME` patterns are matched below. */
export const SAFE_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "COLORTERM",
  "TERM_PROGRAM",
  "NO_COLOR",
  "FORCE_COLOR",
  "TMPDIR",
  "TMP",
  "TEMP",
  "TZ",
  "PWD",
  "HOSTNAME",
  "DISPLAY",
  "WAYLAND_DISPLAY",
  // Trust stores (paths to public certificates, needed behind corporate TLS inspection).
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  // Windows essentials (no secrets in them).
  "SYSTEMROOT",
  "SYSTEMDRIVE",
  "WINDIR",
  "COMSPEC",
  "PATHEXT",
  "APPDATA",
  "LOCALAPPDATA",
  "PROGRAMDATA",
  "PROGRAMFILES",
  "USERPROFILE",
  "USERNAME",
  "PROCESSOR_ARCHITECTURE",
];

const SAFE_PATTERNS = [/^LC_[A-Z]+$/, /^XDG_[A-Z_]+_(HOME|DIR|DIRS)$/];

export interface EnvFilterOptions {
  /** false passes the parent's environment whole (`--no-env-filter`, `mcp.env_filter: false`). */
  filter: boolean;
  /** Extra names to pass from the parent (`mcp.env_allowlist`); a trailing `*` matches a prefix. */
  allowlist: string[];
  /** `--env KEY=VALUE` pairs (`--env KEY` alone passes the parent's value of KEY). */
  extra: string[];
}

export interface FilteredEnv {
  env: Record<string, string>;
  /** Names of parent variables that were withheld (names only, never values). */
  withheld: string[];
}

export function isSafeEnvName(name: string): boolean {
  const upper = process.platform === "win32" ? name.toUpperCase() : name;
  return SAFE_ENV.includes(upper) || SAFE_PATTERNS.some((p) => p.test(upper));
}

function allowed(name: string, allowlist: string[]): boolean {
  return allowlist.some((a) => (a.endsWith("*") ? name.startsWith(a.slice(0, -1)) : a === name));
}

/** Parse `--env` values. Throws on an empty or malformed name. */
export function parseEnvPairs(
  pairs: string[],
  parent: Record<string, string | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf("=");
    const name = eq === -1 ? p : p.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new Error(`--env ${JSON.stringify(p)}: expected KEY=VALUE`);
    if (eq === -1) {
      const v = parent[name];
      if (v !== undefined) out[name] = v;
    } else out[name] = p.slice(eq + 1);
  }
  return out;
}

export function filterEnv(parent: Record<string, string | undefined>, opts: EnvFilterOptions): FilteredEnv {
  const env: Record<string, string> = {};
  const withheld: string[] = [];
  for (const [k, v] of Object.entries(parent)) {
    if (v === undefined) continue;
    // Exported shell functions are code, not configuration.
    const keep = !opts.filter || ((isSafeEnvName(k) || allowed(k, opts.allowlist)) && !v.startsWith("()"));
    if (keep) env[k] = v;
    else withheld.push(k);
  }
  const extra = parseEnvPairs(opts.extra, parent);
  for (const [k, v] of Object.entries(extra)) {
    env[k] = v;
    const i = withheld.indexOf(k);
    if (i !== -1) withheld.splice(i, 1);
  }
  return { env, withheld: withheld.sort() };
}

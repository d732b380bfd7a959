/**
 * The places developers put a credential, as templates: a code assignment, a call argument, YAML,
 * JSON, a .env line, a URL query, an HTTP header in a curl command, prose in a chat, and the line of
 * a configuration file as it is (for shapes that are themselves a file: .npmrc, NuGet.config). Each
 * kind of the corpus (kinds/*.ts) is written into each context that fits it; `file` only when the
 * kind asks for it.
 */
import type { Gen } from "./gen.ts";

export const CONTEXTS = [
  "assignment",
  "call",
  "yaml",
  "json",
  "env",
  "url",
  "header",
  "prose",
  "file",
] as const;
export type Context = (typeof CONTEXTS)[number];
/** The contexts of a kind that names none: all but `file`. */
export const DEFAULT_CONTEXTS: readonly Context[] = CONTEXTS.filter((c) => c !== "file");
/** Where a credential that is not sent as a bearer token is found: code, config and chat, not a URL or header. */
export const AT_REST: readonly Context[] = ["assignment", "call", "yaml", "json", "env", "prose"];
/** Code and configuration only: not a URL, a header or prose. */
export const IN_CODE: readonly Context[] = ["assignment", "call", "yaml", "json", "env"];
/** Text a person writes or pastes: an assignment, YAML, JSON, a .env line or prose; no call or URL. */
export const TEXTUAL: readonly Context[] = ["assignment", "yaml", "json", "env", "prose"];

export type Family = "secrets" | "pii" | "proprietary" | "injection";

/** One kind of value a rule must find, with how it is written (see kinds/*.ts). */
export interface Kind {
  /** The rule that must report it. */
  rule: string;
  family: Family;
  /** Provider group, for the per-category counts (ai, cloud, vcs, registry, …). */
  category: string;
  /** The provider's name as written in prose ("Mapbox"). */
  label: string;
  /** The setting it is stored under (`MAPBOX_SECRET_TOKEN`), used as variable, key and header name. */
  env: string;
  /** The API host it is sent to, for the URL and header contexts. */
  host: string;
  /** Header that carries it, when not `Authorization: Bearer`. */
  header?: string;
  /** A fresh value in the documented format. */
  value: (g: Gen) => string;
  /** The contexts it is written in (default: all that fit the value). */
  contexts: readonly Context[];
  /** Whole documents for shapes no context template writes (a Kubernetes Secret manifest). */
  documents?: (g: Gen) => { text: string; value: string }[];
}

/**
 * The constructor of one category's table of secret kinds: `kind(rule, label, env, host, value,
 * contexts?, header?)`, contexts defaulting to all but `file`.
 */
export function kindsOf(category: string) {
  return (
    rule: string,
    label: string,
    env: string,
    host: string,
    value: (g: Gen) => string,
    contexts?: readonly Context[],
    header?: string,
  ): Kind => ({
    rule,
    family: "secrets",
    category,
    label,
    env,
    host,
    value,
    contexts: contexts ?? DEFAULT_CONTEXTS,
    header,
  });
}

const camel = (env: string) =>
  env.toLowerCase().replace(/[_-]([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** A value as a double-quoted string of code or JSON (newlines escaped, as in real config). */
const q = (v: string) => JSON.stringify(v);

/** The text of `value` written in `ctx` for `kind`. `g` varies the language and wording. */
export function render(ctx: Context, kind: Kind, value: string, g: Gen): string {
  const key = kind.env.toLowerCase();
  switch (ctx) {
    case "assignment":
      return g.pick([
        () => `const ${camel(kind.env)} = ${q(value)};`,
        () => `${key} = ${q(value)}`,
        () => `\t${camel(kind.env)} := ${q(value)}`,
        () => `os.environ[${q(kind.env)}] = ${q(value)}`,
      ])();
    case "call":
      return g.pick([
        () => `System.setProperty(${q(kind.env)}, ${q(value)});`,
        () => `client = configure(${key}=${q(value)}, timeout=30)`,
        () => `process.env.${kind.env} ??= ${q(value)};`,
        () => `settings.set(${q(key)}, ${q(value)})`,
      ])();
    case "yaml": {
      const section = kind.label.toLowerCase().replace(/[^a-z0-9]+/g, "_");
      const scalar = value.includes("\n")
        ? `|\n${value
            .split("\n")
            .map((l) => `    ${l}`)
            .join("\n")}`
        : /^[\w./+=~-]+$/.test(value)
          ? value
          : q(value);
      return `${section}:\n  ${key}: ${scalar}\n  timeout: 30\n`;
    }
    case "json":
      return `{\n  ${q(key)}: ${q(value)},\n  "region": "eu-west-1"\n}`;
    case "env":
      if (/^[\w./+=~:@-]+$/.test(value)) return `${kind.env}=${value}`;
      // dotenv: single quotes keep `$` literal; double quotes carry escaped newlines.
      return value.includes("$") && !value.includes("'") && !value.includes("\n")
        ? `${kind.env}='${value}'`
        : `${kind.env}=${q(value)}`;
    case "url": {
      const param = g.pick(["api_key", "token", "access_token", "key"]);
      const v = /^[\w.~-]+$/.test(value) ? value : encodeURIComponent(value);
      return `GET https://${kind.host}/v1/status?${param}=${v}&verbose=1`;
    }
    case "header": {
      const h = kind.header ?? "Authorization: Bearer";
      return `curl -sS https://${kind.host}/v1/me -H "${h} ${value}" -H "Accept: application/json"`;
    }
    case "file":
      return value;
    case "prose":
      return g.pick([
        () =>
          `Here is the ${kind.label} credential I used yesterday: ${value} - can you see why it returns 401?`,
        () => `my ${kind.label} key is ${value}, please put it in the deploy script`,
        () => `Logs show the ${kind.label} token ${value} was rejected at 03:12 UTC.`,
      ])();
  }
}

/** Contexts a value fits: a URL or multi-line value is not put in a query string or header. */
export function fits(ctx: Context, value: string): boolean {
  if (ctx === "url" || ctx === "header")
    return !value.includes("\n") && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value);
  return true;
}

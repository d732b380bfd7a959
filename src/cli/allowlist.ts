/**
 * `sluice allowlist`: list, add and remove allowlist entries of the running sluice, through its
 * dashboard API (the same entries the Allowlists page shows), so that a false positive named in a
 * block message is allowed at once, without a restart. With a dashboard password, it is read from
 * SLUICE_DASHBOARD_PASSWORD. Patterns are exact values or globs (`*`, `?`); the pattern is sent to
 * the local dashboard only and is never printed back in full.
 */
import { defineCommand } from "citty";
import { type Fail, failer, readConfig } from "./_flags.ts";

const fail: Fail = failer("allowlist");
const TYPES = ["secrets", "pii", "paths"] as const;

const common = {
  dashboard: {
    type: "string",
    description: "The running sluice's dashboard (default http://127.0.0.1:<dashboard.port>)",
  },
  config: { type: "string", alias: "c", description: "Config file (default {config_dir}/config.yaml)" },
} as const;

/** A client of the running dashboard's API, logged in when a password is set. */
async function dashboardApi(args: { dashboard?: string; config?: string }) {
  let base = args.dashboard;
  if (!base) {
    const loaded = await readConfig(fail, args.config);
    base = `http://127.0.0.1:${loaded.config.dashboard.port}`;
  }
  base = base.replace(/\/+$/, "");
  const headers: Record<string, string> = { origin: base };
  const call = async (method: string, path: string, body?: unknown): Promise<Response> => {
    try {
      return await fetch(`${base}/api/v1${path}`, {
        method,
        headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      return fail(
        `no sluice dashboard answers at ${base} (${(e as { code?: string }).code ?? (e as Error).message}); start sluice with \`sluice serve\`, or name it with --dashboard`,
      );
    }
  };
  const session = (await (await call("GET", "/auth/session")).json().catch(() => ({}))) as {
    csrf_token?: string | null;
  };
  let csrf = session.csrf_token;
  if (!csrf) {
    const password = process.env.SLUICE_DASHBOARD_PASSWORD;
    if (!password) fail(`the dashboard at ${base} has a password: set SLUICE_DASHBOARD_PASSWORD to log in`);
    const login = await call("POST", "/auth/login", { password });
    if (!login.ok) fail(`logging in to the dashboard at ${base} failed (${await errorOf(login)})`);
    headers.cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(";")[0]!)
      .join("; ");
    csrf = ((await login.json()) as { csrf_token: string }).csrf_token;
  }
  headers["x-csrf-token"] = csrf;
  return { base, call };
}

async function errorOf(res: Response): Promise<string> {
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  return `${res.status}: ${body?.error?.message ?? res.statusText}`;
}

/**
 * A pattern as printed: a path glob whole; a value masked to its first characters, since a secret's
 * pattern is the secret and terminals end up in logs.
 */
function shown(type: string, pattern: string): string {
  if (type === "paths") return pattern;
  const keep = pattern.length > 12 ? 4 : 1;
  return `${pattern.slice(0, keep)}${"*".repeat(Math.min(8, pattern.length - keep))} (${pattern.length} characters)`;
}

interface Entry {
  id?: number;
  pattern: string;
  source: "config" | "api";
}

const list = defineCommand({
  meta: { name: "list", description: "List the allowlist entries in force (config file and dashboard)" },
  args: { ...common, json: { type: "boolean", description: "Print the entries as JSON" } },
  async run({ args }) {
    const api = await dashboardApi(args);
    const res = await api.call("GET", "/allowlists");
    if (!res.ok) fail(`listing allowlists failed (${await errorOf(res)})`);
    const lists = (await res.json()) as Record<string, Entry[]>;
    if (args.json) {
      const out: Record<string, Entry[]> = {};
      for (const t of TYPES) out[t] = lists[t] ?? [];
      console.log(JSON.stringify(out, null, 2));
      return;
    }
    let n = 0;
    for (const t of TYPES)
      for (const e of lists[t] ?? []) {
        n++;
        console.log(`${t}\t${e.source === "api" ? `#${e.id}` : "config"}\t${shown(t, e.pattern)}`);
      }
    if (n === 0) console.log("no allowlist entries");
  },
});

const add = defineCommand({
  meta: {
    name: "add",
    description:
      "Allow a value (or a glob of values, or of paths with --type paths) that sluice found but should not: it applies at once",
  },
  args: {
    pattern: { type: "positional", required: true, description: "The exact value, or a glob with * and ?" },
    type: { type: "string", alias: "t", description: "secrets, pii or paths (default secrets)" },
    ...common,
  },
  async run({ args }) {
    const type = args.type ?? "secrets";
    if (!(TYPES as readonly string[]).includes(type))
      fail(`--type = ${JSON.stringify(type)} is invalid: allowed values: "secrets", "pii", "paths"`);
    const api = await dashboardApi(args);
    const res = await api.call("POST", "/allowlists", { type, pattern: args.pattern });
    if (res.status === 409) {
      console.log(`already allowed (${type}): ${shown(type, args.pattern)}`);
      return;
    }
    if (!res.ok) fail(`adding to the ${type} allowlist failed (${await errorOf(res)})`);
    const entry = (await res.json()) as { id: number };
    console.log(
      `allowed (${type}, #${entry.id}): ${shown(type, args.pattern)}; remove with: sluice allowlist remove ${entry.id}`,
    );
  },
});

const remove = defineCommand({
  meta: { name: "remove", description: "Remove an entry added here or on the dashboard, by its number" },
  args: {
    id: {
      type: "positional",
      required: true,
      description: "The entry's number (see `sluice allowlist list`)",
    },
    ...common,
  },
  async run({ args }) {
    const id = String(args.id).replace(/^#/, "");
    if (!/^\d+$/.test(id)) fail(`"${args.id}" is not an entry number (see \`sluice allowlist list\`)`);
    const api = await dashboardApi(args);
    const res = await api.call("DELETE", `/allowlists/${id}`);
    if (!res.ok) fail(`removing entry #${id} failed (${await errorOf(res)})`);
    console.log(`removed allowlist entry #${id}`);
  },
});

export default defineCommand({
  meta: { name: "allowlist", description: "Allow false positives: list, add and remove allowlist entries" },
  subCommands: { list, add, remove },
});

/**
 * `sluice doctor`: for each installed tool, whether its settings route it through sluice for the
 * sign-in mode it uses, when sluice last saw its traffic, and what of its traffic sluice forwarded but
 * could not read. Nothing is sent anywhere, and no credential is read beyond which kind it is.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import type { ClientTrafficRow, ClientUnscannedRow } from "../store/client-traffic.ts";
import { type ConnectEnv, jsonValue, shellProfile } from "./apply.ts";
import { claudeConfigDir, codexHome, type Setting, type Tool } from "./tools.ts";

export interface DoctorEnv extends ConnectEnv {
  /** The environment of the shell doctor runs in. */
  vars: Record<string, string | undefined>;
}

export interface ToolCheck {
  id: string;
  name: string;
  installed: boolean;
  /** The sign-in mode its files show, when they show one. */
  login: string | null;
  routed: boolean;
  /** What is missing or wrong, one line each. */
  problems: string[];
  /** The command that fixes it. */
  fix: string | null;
  /** Settings that route it, set in the shell profile but not in this shell: new shells have them. */
  new_shells_only: string[];
  seen: { login: string; last_seen: string; requests: number }[];
  unscanned: { reason: string; count: number; last_seen: string }[];
}

/** Whether a configured URL is this sluice (localhost and 127.0.0.1 are the same machine). */
function isSluice(url: string | undefined, proxy: string): boolean {
  if (!url) return false;
  const norm = (u: string) => u.replace("://localhost", "://127.0.0.1").replace(/\/+$/, "");
  return norm(url).startsWith(norm(proxy));
}

function readJson(file: string): Record<string, unknown> | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** The sign-in mode of a tool, from which credential files exist and which kind they hold. */
function loginOf(tool: Tool, env: DoctorEnv): string | null {
  const h = env.home;
  if (tool.id === "claude") {
    if (existsSync(join(claudeConfigDir(env.vars, h), ".credentials.json"))) return "subscription (OAuth)";
    if (env.vars.ANTHROPIC_AUTH_TOKEN || env.vars.ANTHROPIC_API_KEY) return "api key";
  }
  if (tool.id === "codex") {
    const auth = readJson(join(codexHome(env.vars, h), "auth.json"));
    const mode = String(auth?.auth_mode ?? "").toLowerCase();
    if (mode === "chatgpt" || (auth?.tokens && !auth?.OPENAI_API_KEY)) return "signed in with ChatGPT";
    if (mode === "apikey" || auth?.OPENAI_API_KEY || env.vars.OPENAI_API_KEY) return "api key";
  }
  if (tool.id === "gemini") {
    const s = readJson(join(h, ".gemini/settings.json"));
    const sec = (s?.security as { auth?: { selectedType?: string } } | undefined)?.auth?.selectedType;
    const t = String(sec ?? s?.selectedAuthType ?? "");
    if (t === "oauth-personal" || t === "cloud-shell") return "signed in with Google";
    if (t === "gemini-api-key" || env.vars.GEMINI_API_KEY) return "api key";
  }
  return null;
}

const PROFILE = "the shell profile (new shells)";

/** The value a setting has now: the shell's environment, else the sluice block of the profile, else the TOML file. */
function currentValue(
  s: Setting,
  env: DoctorEnv,
  profileText: string,
): { value: string | undefined; from: string } {
  if (s.kind === "env") {
    if (env.vars[s.name]) return { value: env.vars[s.name], from: "this shell" };
    const m = profileText.match(new RegExp(`(?:export |set -gx )${s.name}[= ](\\S+)`));
    return { value: m?.[1], from: PROFILE };
  }
  const file = s.file.replace(/^~(?=\/)/, env.home);
  try {
    const text = readFileSync(file, "utf8");
    const v =
      s.kind === "json"
        ? jsonValue(JSON.parse(text), s.key)
        : (parseToml(text) as Record<string, unknown>)[s.key];
    return { value: typeof v === "string" ? v : undefined, from: s.file };
  } catch {
    return { value: undefined, from: s.file };
  }
}

export function checkTools(
  all: Tool[],
  proxy: string,
  env: DoctorEnv,
  store: { traffic: ClientTrafficRow[]; unscanned: ClientUnscannedRow[] } | null,
): ToolCheck[] {
  const profile = shellProfile(env);
  const profileText = existsSync(profile.file) ? readFileSync(profile.file, "utf8") : "";
  const path = env.vars.PATH ?? "";
  return all
    .filter((t) => t.commands.length > 0)
    .map((tool) => {
      const installed = tool.commands.some((c) => Bun.which(c, { PATH: path }) !== null);
      const login = loginOf(tool, env);
      // The settings for the mode in use; all of them when the mode is not known.
      const needed = tool.settings.filter((s) => !login || s.modes.includes(login) || s.modes.length > 1);
      const problems: string[] = [];
      const newShellsOnly: string[] = [];
      for (const s of needed) {
        const { value, from } = currentValue(s, env, profileText);
        const name = s.kind === "env" ? s.name : `${s.key} (${s.file})`;
        if (!value)
          problems.push(`${name} is not set (${s.modes.join(", ")} traffic goes straight to the provider)`);
        else if (!isSluice(value, proxy))
          problems.push(`${name} is ${value} in ${from}, not sluice at ${proxy}`);
        else if (from === PROFILE) newShellsOnly.push(name);
      }
      const seen = (store?.traffic ?? [])
        .filter((r) => r.client === tool.client)
        .map((r) => ({ login: r.login || "unknown", last_seen: r.last_seen, requests: r.requests }));
      const unscanned = (store?.unscanned ?? [])
        .filter((r) => r.client === tool.client)
        .map((r) => ({ reason: r.reason, count: r.count, last_seen: r.last_seen }));
      return {
        id: tool.id,
        name: tool.name,
        installed,
        login,
        routed: problems.length === 0,
        problems,
        fix: problems.length === 0 ? null : `sluice connect ${tool.id} --apply`,
        new_shells_only: newShellsOnly,
        seen,
        unscanned,
      };
    });
}

/**
 * How each tool is routed through sluice, for each of its sign-in modes: the one place these
 * settings are written down. `sluice connect` prints or applies them, `sluice doctor` checks them.
 * Nothing here holds or reads a credential: only base URLs.
 */

import { join, resolve } from "node:path";

export const TOOL_IDS = ["claude", "codex", "gemini", "opencode", "aider", "sdk"] as const;
export type ToolId = (typeof TOOL_IDS)[number];

/**
 * One setting: an environment variable (a shell profile line), a top-level key of a TOML config
 * file, or a key of a JSON config file (`key` a dotted path: `provider.anthropic.options.baseURL`).
 */
export type Setting =
  | { kind: "env"; name: string; value: string; modes: string[] }
  | { kind: "toml" | "json"; file: string; key: string; value: string; modes: string[] };

export interface Tool {
  id: ToolId;
  name: string;
  /** The client id sluice records for its traffic (see proxy/session.ts). */
  client: string | null;
  /** Other client ids its traffic is recorded as: the user agent of a library it talks through. */
  seenAs?: string[];
  /** Executable names that show the tool is installed. */
  commands: string[];
  settings: Setting[];
  /**
   * The tool's non-interactive mode, the prompt appended as the last argument: what
   * `sluice doctor --live` runs, in an empty scratch directory. `env` is only what the tool needs to
   * run there (never a base URL: the user's own settings must decide where it goes). Absent for a
   * tool without one.
   */
  probe?: { args: string[]; env?: Record<string, string> };
  /** What a user still has to know (never a credential). */
  note?: string;
}

/** The environment a tool reads its own directory from. */
export type ToolVars = Record<string, string | undefined>;

/** Codex's directory: `$CODEX_HOME` when set, else `~/.codex` (`~` for the home directory when shown). */
export function codexHome(vars: ToolVars, home = "~"): string {
  return vars.CODEX_HOME ? resolve(vars.CODEX_HOME) : join(home, ".codex");
}

/** Claude Code's directory (its sign-in is kept there): `$CLAUDE_CONFIG_DIR` when set, else `~/.claude`. */
export function claudeConfigDir(vars: ToolVars, home: string): string {
  return vars.CLAUDE_CONFIG_DIR ? resolve(vars.CLAUDE_CONFIG_DIR) : join(home, ".claude");
}

/**
 * OpenCode's config file: `$OPENCODE_CONFIG` when set, else `opencode.json` in `$XDG_CONFIG_HOME/opencode`
 * (`~/.config/opencode`).
 */
export function opencodeConfig(vars: ToolVars, home = "~"): string {
  if (vars.OPENCODE_CONFIG) return resolve(vars.OPENCODE_CONFIG);
  const config = vars.XDG_CONFIG_HOME ? resolve(vars.XDG_CONFIG_HOME) : join(home, ".config");
  return join(config, "opencode/opencode.json");
}

/**
 * The settings of every tool for a sluice proxy at `proxy` (`http://127.0.0.1:8080`); files in the
 * directories `vars` names (`CODEX_HOME`), else the tools' defaults. One entry per tool and login mode
 * (a table, hence its length).
 */
export function tools(proxy: string, vars: ToolVars = {}): Tool[] {
  const base = proxy.replace(/\/+$/, "");
  const codexConfig = `${codexHome(vars)}/config.toml`;
  const opencodeFile = opencodeConfig(vars);
  return [
    {
      id: "claude",
      name: "Claude Code",
      client: "claude-code",
      commands: ["claude"],
      probe: { args: ["claude", "-p"] },
      settings: [
        { kind: "env", name: "ANTHROPIC_BASE_URL", value: base, modes: ["api key", "subscription (OAuth)"] },
      ],
    },
    {
      id: "codex",
      name: "Codex CLI",
      client: "codex",
      commands: ["codex"],
      // The scratch directory is not a Git repository.
      probe: { args: ["codex", "exec", "--skip-git-repo-check"] },
      settings: [
        // Signed in with ChatGPT, Codex sends its conversation to openai_base_url when that is set
        // and is another origin than chatgpt_base_url; else to the back end its account check names
        // (which sluice takes out of the answer). Naming sluice "localhost" in one of the two keeps
        // the conversation on sluice even for an answer sluice could not rewrite.
        {
          kind: "toml",
          file: codexConfig,
          key: "openai_base_url",
          value: `${base}/v1`,
          modes: ["api key", "signed in with ChatGPT"],
        },
        {
          kind: "toml",
          file: codexConfig,
          key: "chatgpt_base_url",
          value: `${base.replace("://127.0.0.1:", "://localhost:")}/backend-api/`,
          modes: ["signed in with ChatGPT"],
        },
      ],
      note: "Codex ignores OPENAI_BASE_URL; both base URLs live in its config.toml ($CODEX_HOME, else ~/.codex).",
    },
    {
      id: "gemini",
      name: "Gemini CLI",
      client: "gemini-cli",
      commands: ["gemini"],
      // Headless, it refuses a directory the user has not trusted (exit 55); the variable trusts
      // the scratch directory for this run only (older versions ignore it).
      probe: { args: ["gemini", "-p"], env: { GEMINI_CLI_TRUST_WORKSPACE: "true" } },
      settings: [
        { kind: "env", name: "GOOGLE_GEMINI_BASE_URL", value: base, modes: ["api key"] },
        { kind: "env", name: "CODE_ASSIST_ENDPOINT", value: base, modes: ["signed in with Google"] },
      ],
    },
    {
      id: "opencode",
      name: "OpenCode",
      client: "opencode",
      commands: ["opencode"],
      probe: { args: ["opencode", "run"] },
      // Its own file, not the environment: OpenCode appends `/messages` to ANTHROPIC_BASE_URL, where
      // Claude Code appends `/v1/messages`, so one variable cannot serve both.
      settings: [
        {
          kind: "json",
          file: opencodeFile,
          key: "provider.anthropic.options.baseURL",
          value: `${base}/v1`,
          modes: ["Anthropic"],
        },
        {
          kind: "json",
          file: opencodeFile,
          key: "provider.openai.options.baseURL",
          value: `${base}/v1`,
          modes: ["OpenAI"],
        },
      ],
    },
    {
      id: "aider",
      name: "Aider",
      client: "aider",
      // Aider talks through LiteLLM: its requests carry LiteLLM's user agent (Anthropic) or the
      // OpenAI SDK's (OpenAI), not its own.
      seenAs: ["litellm", "openai-sdk"],
      commands: ["aider"],
      // One message, no questions, no Git repository (the scratch directory has none), nothing
      // fetched besides the model call.
      probe: {
        args: [
          "aider",
          "--no-git",
          "--yes-always",
          "--no-pretty",
          "--no-check-update",
          "--no-show-release-notes",
          "--no-analytics",
          "--message",
        ],
      },
      settings: [
        { kind: "env", name: "OPENAI_API_BASE", value: `${base}/v1`, modes: ["OpenAI"] },
        { kind: "env", name: "ANTHROPIC_BASE_URL", value: base, modes: ["Anthropic"] },
      ],
    },
    {
      id: "sdk",
      name: "SDKs (Anthropic, OpenAI)",
      client: null,
      commands: [],
      settings: [
        { kind: "env", name: "ANTHROPIC_BASE_URL", value: base, modes: ["Anthropic SDK"] },
        { kind: "env", name: "OPENAI_BASE_URL", value: `${base}/v1`, modes: ["OpenAI SDK"] },
      ],
      note: "The Google Gen AI SDK takes the base URL in code: httpOptions: { baseUrl }.",
    },
  ];
}

/** Where this sluice's proxy listens, for the tools' settings: loopback and the configured `port`. */
export function proxyUrlOf(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/** The lines a person would type or paste for `tool`, one per setting. */
export function settingLines(tool: Tool): string[] {
  return tool.settings.map((s) =>
    s.kind === "env"
      ? `export ${s.name}=${s.value}   # ${s.modes.join(", ")}`
      : s.kind === "json"
        ? `${s.key} = "${s.value}"   # in ${s.file} (JSON): ${s.modes.join(", ")}`
        : `${s.key} = "${s.value}"   # in ${s.file}: ${s.modes.join(", ")}`,
  );
}

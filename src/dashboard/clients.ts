/**
 * `GET /api/v1/clients`: the coding tools sluice knows, how to point each at the
 * proxy, and whether sluice has seen traffic from it (matched by User-Agent prefix or client id).
 */
export interface ClientEntry {
  id: string;
  display_name: string;
  category: "cli" | "ide" | "sdk";
  provider: "anthropic" | "openai" | "gemini" | "multiple";
  ua_prefixes: string[];
  proxy_config: {
    config_type: "env" | "config_file" | "ui";
    setup_instructions: string;
    env_var: string | null;
    setup_cmd: string | null;
  };
  website: string;
}

/** The catalog as data, one entry per client (hence its length), with the setup for a proxy at `proxy`. */
export function clientCatalog(proxy: string): ClientEntry[] {
  return [
    {
      id: "claude-code",
      display_name: "Claude Code",
      category: "cli",
      provider: "anthropic",
      ua_prefixes: ["claude-cli/", "claude-code"],
      proxy_config: {
        config_type: "env",
        setup_instructions: `Set ANTHROPIC_BASE_URL to ${proxy} (no /v1) before starting claude.`,
        env_var: "ANTHROPIC_BASE_URL",
        setup_cmd: `export ANTHROPIC_BASE_URL=${proxy}`,
      },
      website: "https://docs.anthropic.com/en/docs/claude-code",
    },
    {
      id: "codex",
      display_name: "Codex CLI",
      category: "cli",
      provider: "openai",
      ua_prefixes: ["codex_exec/", "codex_cli_rs/", "codex_vscode", "codex-tui", "codex"],
      proxy_config: {
        config_type: "config_file",
        setup_instructions: `Codex ignores OPENAI_BASE_URL: add openai_base_url = "${proxy}/v1" to ~/.codex/config.toml, or pass it with -c.`,
        env_var: null,
        setup_cmd: `codex -c 'openai_base_url="${proxy}/v1"'`,
      },
      website: "https://github.com/openai/codex",
    },
    {
      id: "gemini-cli",
      display_name: "Gemini CLI",
      category: "cli",
      provider: "gemini",
      ua_prefixes: ["GeminiCLI", "gemini-cli"],
      proxy_config: {
        config_type: "env",
        setup_instructions: `Set GOOGLE_GEMINI_BASE_URL to ${proxy} and use GEMINI_API_KEY.`,
        env_var: "GOOGLE_GEMINI_BASE_URL",
        setup_cmd: `export GOOGLE_GEMINI_BASE_URL=${proxy}`,
      },
      website: "https://github.com/google-gemini/gemini-cli",
    },
    {
      id: "aider",
      display_name: "Aider",
      category: "cli",
      provider: "multiple",
      ua_prefixes: ["aider", "litellm"],
      proxy_config: {
        config_type: "env",
        setup_instructions: `Set OPENAI_API_BASE to ${proxy}/v1 (or ANTHROPIC_BASE_URL to ${proxy}).`,
        env_var: "OPENAI_API_BASE",
        setup_cmd: `export OPENAI_API_BASE=${proxy}/v1`,
      },
      website: "https://aider.chat",
    },
    {
      id: "cline",
      display_name: "Cline / Roo Code",
      category: "ide",
      provider: "multiple",
      ua_prefixes: ["cline", "roo"],
      proxy_config: {
        config_type: "ui",
        setup_instructions: `In the extension settings choose the provider and set its base URL to ${proxy} (OpenAI-compatible: ${proxy}/v1).`,
        env_var: null,
        setup_cmd: null,
      },
      website: "https://cline.bot",
    },
    {
      id: "opencode",
      display_name: "OpenCode",
      category: "cli",
      provider: "multiple",
      ua_prefixes: ["opencode"],
      proxy_config: {
        config_type: "env",
        setup_instructions: `Set OPENAI_BASE_URL=${proxy}/v1 or ANTHROPIC_BASE_URL=${proxy}, or baseURL in opencode.json.`,
        env_var: "ANTHROPIC_BASE_URL",
        setup_cmd: `export ANTHROPIC_BASE_URL=${proxy}`,
      },
      website: "https://opencode.ai",
    },
    {
      id: "cursor",
      display_name: "Cursor",
      category: "ide",
      provider: "openai",
      ua_prefixes: ["cursor"],
      proxy_config: {
        config_type: "ui",
        setup_instructions: `Settings → Models → "Override OpenAI Base URL". Cursor's servers call that URL, so ${proxy} must be reachable through a tunnel.`,
        env_var: null,
        setup_cmd: null,
      },
      website: "https://cursor.com",
    },
    {
      id: "anthropic-sdk",
      display_name: "Anthropic SDK",
      category: "sdk",
      provider: "anthropic",
      ua_prefixes: ["Anthropic/", "anthropic-sdk", "anthropic"],
      proxy_config: {
        config_type: "env",
        setup_instructions: `Pass baseURL: "${proxy}" or set ANTHROPIC_BASE_URL.`,
        env_var: "ANTHROPIC_BASE_URL",
        setup_cmd: `export ANTHROPIC_BASE_URL=${proxy}`,
      },
      website: "https://github.com/anthropics/anthropic-sdk-typescript",
    },
    {
      id: "openai-sdk",
      display_name: "OpenAI SDK",
      category: "sdk",
      provider: "openai",
      ua_prefixes: ["OpenAI/", "openai"],
      proxy_config: {
        config_type: "env",
        setup_instructions: `Pass baseURL: "${proxy}/v1" or set OPENAI_BASE_URL.`,
        env_var: "OPENAI_BASE_URL",
        setup_cmd: `export OPENAI_BASE_URL=${proxy}/v1`,
      },
      website: "https://github.com/openai/openai-node",
    },
    {
      id: "google-genai-sdk",
      display_name: "Google Gen AI SDK",
      category: "sdk",
      provider: "gemini",
      ua_prefixes: ["google-genai-sdk", "gl-node", "google-genai"],
      proxy_config: {
        config_type: "env",
        setup_instructions: `Pass httpOptions: { baseUrl: "${proxy}" } or set GOOGLE_GEMINI_BASE_URL.`,
        env_var: "GOOGLE_GEMINI_BASE_URL",
        setup_cmd: `export GOOGLE_GEMINI_BASE_URL=${proxy}`,
      },
      website: "https://github.com/googleapis/js-genai",
    },
  ];
}

/** Which catalog entry a stored client string (id or User-Agent) belongs to. */
export function matchClient(catalog: ClientEntry[], client: string): ClientEntry | null {
  const c = client.toLowerCase();
  for (const e of catalog) {
    if (c === e.id) return e;
    if (e.ua_prefixes.some((p) => c.startsWith(p.toLowerCase()))) return e;
  }
  return null;
}

/**
 * A stand-in for a coding tool's non-interactive mode (`claude -p`, `codex exec`, `gemini -p`,
 * `opencode run`, `aider --message`), for
 * tests that run tools the way `sluice doctor --live` does. It finds its base URL where the real tool
 * looks (its environment variables and config files under `$HOME`, each with the real default), and
 * sends there the request recorded from the real tool in that sign-in mode (`recorded.ts`), the
 * prompt put in place of the recorded one. It trusts `NODE_EXTRA_CA_CERTS` as the Node tools do.
 * A base URL off this machine is refused, so a test never reaches the internet.
 *
 * Aider (Python) could not be installed where these tests were written: its stand-in sends what
 * LiteLLM, which it talks through, sends for Anthropic (`<ANTHROPIC_BASE_URL>/v1/messages`, user agent
 * `litellm/…`), with the recorded Claude Code body.
 *
 * Run as `bun stand-in-tool.ts <tool> <send|fail|hang> <the tool's own arguments…>`;
 * `installStandIn` writes the executable that does so. `fail` prints an error holding a credential
 * and its stack, as Node tools do, and exits 3 without sending; `hang` never ends.
 *
 * @example
 * installStandIn(binDir, "claude", "send"); // binDir/claude now behaves like `claude -p`
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { recorded } from "./recorded.ts";

export type StandInBehaviour = "send" | "fail" | "hang";
export type StandInTool = "claude" | "codex" | "gemini" | "opencode" | "aider";

/** Put an executable named `tool` in `binDir` that runs this stand-in. */
export function installStandIn(binDir: string, tool: StandInTool, behaviour: StandInBehaviour) {
  const file = join(binDir, tool);
  writeFileSync(
    file,
    `#!/bin/sh\nexec "${process.execPath}" "${import.meta.path}" ${tool} ${behaviour} "$@"\n`,
  );
  chmodSync(file, 0o755);
}

/** A credential in the shape the real tool sends, never a real one (joined so scanners pass it by). */
export const FAKE = {
  claudeOauth: ["sk-ant-", "oat01-", "fake0doctor0token0", "A".repeat(40)].join(""),
  claudeKey: ["sk-ant-", "api03-", "fake0doctor0key0", "B".repeat(40)].join(""),
  openaiKey: ["sk-", "proj-", "fake0doctor0key0", "C".repeat(30)].join(""),
  googleToken: ["ya29", ".", "fake0doctor0token0", "D".repeat(30)].join(""),
  geminiKey: ["AI", "za", "Sy", "C8xq2Lm0vRt7Yw4Np6Kd9Fh3Jb1Gs5", "ZeQ"].join(""),
};

interface Outgoing {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array<ArrayBuffer>;
}

const home = () => process.env.HOME ?? "/nonexistent";
const trimSlash = (u: string) => u.replace(/\/+$/, "");
const readJson = (f: string) => (existsSync(f) ? JSON.parse(readFileSync(f, "utf8")) : {});

async function send(o: Outgoing): Promise<Response> {
  const host = new URL(o.url).hostname;
  if (host !== "127.0.0.1" && host !== "localhost") {
    console.error(`stand-in: refusing to reach ${o.url} (off this machine)`);
    process.exit(4);
  }
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  return fetch(o.url, {
    method: o.method,
    headers: o.headers,
    body: o.body,
    tls: ca ? { ca: readFileSync(ca, "utf8") } : undefined,
  });
}

/** `claude -p`: ANTHROPIC_BASE_URL, an OAuth token as a bearer or an API key as x-api-key. */
function claude(prompt: string): Outgoing {
  const r = recorded("claude-oauth-messages");
  const headers = r.headers(process.env.CLAUDE_CODE_OAUTH_TOKEN ?? "");
  if (process.env.ANTHROPIC_API_KEY) {
    delete headers.authorization;
    headers["x-api-key"] = process.env.ANTHROPIC_API_KEY;
  }
  const base = trimSlash(process.env.ANTHROPIC_BASE_URL || "https://api.anthropic.com");
  return { url: base + r.path, method: r.method, headers, body: r.withPrompt(prompt) };
}

/**
 * `codex exec`: the base URLs from `$CODEX_HOME/config.toml`, the sign-in mode from `auth.json`.
 * Signed in with ChatGPT it first asks the account check which back end holds the account, and then
 * does what Codex 0.169 was seen to do by hand:
 * - the account's `workspace_backend_origin` missing, or not HTTPS (NO_CONSTRAINT aside): it fails;
 * - `openai_base_url` set, and another origin than `chatgpt_base_url` or the answer saying
 *   NO_CONSTRAINT: the conversation goes to `openai_base_url` + `/responses` (no routing header);
 * - otherwise it goes to the named origin (NO_CONSTRAINT: `chatgpt_base_url`'s, which must be
 *   HTTPS) at `/backend-api/codex/responses`, with the account's routing override.
 */
async function codex(prompt: string): Promise<Outgoing> {
  const dir = process.env.CODEX_HOME || join(home(), ".codex");
  const toml = join(dir, "config.toml");
  const cfg = existsSync(toml) ? (parseToml(readFileSync(toml, "utf8")) as Record<string, string>) : {};
  const auth = readJson(join(dir, "auth.json")) as {
    auth_mode?: string;
    OPENAI_API_KEY?: string;
    tokens?: { access_token?: string };
  };
  const r = recorded("codex-chatgpt-responses");
  const body = r.withPrompt(prompt);
  if (auth.auth_mode !== "chatgpt") {
    const headers = r.headers(auth.OPENAI_API_KEY ?? process.env.OPENAI_API_KEY ?? "");
    delete headers["content-encoding"]; // the recorded body is stored decompressed
    delete headers["chatgpt-account-id"];
    delete headers["x-openai-account-routing-override"];
    const base = trimSlash(cfg.openai_base_url || "https://api.openai.com/v1");
    return { url: `${base}/responses`, method: "POST", headers, body };
  }
  const token = auth.tokens?.access_token ?? "";
  const base = trimSlash(cfg.chatgpt_base_url || "https://chatgpt.com/backend-api/");
  const check = recorded("codex-chatgpt-accounts-check");
  const answer = await send({
    url: base + check.path.replace(/^\/backend-api/, ""),
    method: "GET",
    headers: check.headers(token),
  });
  if (!answer.ok) {
    console.error(`Error: account check failed: ${answer.status}`);
    process.exit(1);
  }
  type Account = { id?: string; workspace_backend_origin?: string; account_routing_override?: string };
  const accounts = ((await answer.json()) as { accounts?: Account[] }).accounts ?? [];
  const account = accounts.find((a) => a.id === check.headers()["chatgpt-account-id"]);
  const named = account?.workspace_backend_origin;
  const fail = (m: string) => {
    console.error(`ERROR: ${m}`);
    process.exit(1);
  };
  if (!named) fail("workspace routing discovery missing backend origin");
  const https = (u: string) => u.startsWith("https://");
  if (named !== "NO_CONSTRAINT" && !https(named!))
    fail("workspace backend must use an HTTPS origin without credentials");
  const headers = r.headers(token);
  delete headers["content-encoding"];
  const provider = cfg.openai_base_url ? trimSlash(cfg.openai_base_url) : null;
  if (provider && (named === "NO_CONSTRAINT" || new URL(provider).origin !== new URL(base).origin)) {
    delete headers["x-openai-account-routing-override"];
    return { url: `${provider}/responses`, method: "POST", headers, body };
  }
  const origin = named === "NO_CONSTRAINT" ? new URL(base).origin : trimSlash(named!);
  if (!https(origin)) fail("workspace backend must use an HTTPS origin without credentials");
  const override = account?.account_routing_override;
  if (override === "us" || override === "us_cr") headers["x-openai-account-routing-override"] = override;
  else delete headers["x-openai-account-routing-override"];
  return { url: `${origin}${r.path}`, method: "POST", headers, body };
}

/**
 * `gemini -p`: signed in with Google (settings.json) it talks to CODE_ASSIST_ENDPOINT with the
 * wrapped body; with an API key, to GOOGLE_GEMINI_BASE_URL with the request inside the wrapper.
 */
function gemini(prompt: string): Outgoing {
  const settings = readJson(join(home(), ".gemini/settings.json")) as {
    security?: { auth?: { selectedType?: string } };
  };
  const r = recorded("gemini-code-assist-generate-content");
  if (settings.security?.auth?.selectedType === "oauth-personal") {
    const base = trimSlash(process.env.CODE_ASSIST_ENDPOINT || "https://cloudcode-pa.googleapis.com");
    return {
      url: base + r.path,
      method: r.method,
      headers: r.headers(FAKE.googleToken),
      body: r.withPrompt(prompt),
    };
  }
  const wrapped = JSON.parse(new TextDecoder().decode(r.withPrompt(prompt))) as {
    model: string;
    request: unknown;
  };
  const base = trimSlash(process.env.GOOGLE_GEMINI_BASE_URL || "https://generativelanguage.googleapis.com");
  const headers = r.headers();
  delete headers.authorization;
  headers["x-goog-api-key"] = process.env.GEMINI_API_KEY ?? "";
  return {
    url: `${base}/v1beta/models/${wrapped.model}:generateContent`,
    method: "POST",
    headers,
    body: new TextEncoder().encode(JSON.stringify(wrapped.request)),
  };
}

/**
 * `opencode run`: the Anthropic base URL from its config file (`$OPENCODE_CONFIG`, else
 * `opencode.json` in `$XDG_CONFIG_HOME/opencode` or `~/.config/opencode`), else ANTHROPIC_BASE_URL,
 * to which it appends `/messages` (so that one must end in `/v1`).
 */
function opencode(prompt: string): Outgoing {
  const file =
    process.env.OPENCODE_CONFIG ||
    join(process.env.XDG_CONFIG_HOME || join(home(), ".config"), "opencode/opencode.json");
  const cfg = readJson(file) as { provider?: { anthropic?: { options?: { baseURL?: string } } } };
  const base = trimSlash(
    cfg.provider?.anthropic?.options?.baseURL ||
      process.env.ANTHROPIC_BASE_URL ||
      "https://api.anthropic.com/v1",
  );
  const r = recorded("opencode-anthropic-messages");
  const headers = { ...r.headers(), "x-api-key": process.env.ANTHROPIC_API_KEY ?? "" };
  return { url: `${base}/messages`, method: "POST", headers, body: r.withPrompt(prompt) };
}

/** `aider --message`, through LiteLLM: ANTHROPIC_API_BASE or ANTHROPIC_BASE_URL, then `/v1/messages`. */
function aider(prompt: string): Outgoing {
  const r = recorded("claude-oauth-messages");
  const base = trimSlash(
    process.env.ANTHROPIC_API_BASE || process.env.ANTHROPIC_BASE_URL || "https://api.anthropic.com",
  );
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "anthropic-version": "2023-06-01",
    "user-agent": "litellm/1.80.0",
    "x-api-key": process.env.ANTHROPIC_API_KEY ?? "",
  };
  return { url: `${base}/v1/messages`, method: "POST", headers, body: r.withPrompt(prompt) };
}

/** The arguments that start each tool's non-interactive mode; anything else would open its UI. */
const NON_INTERACTIVE: Record<string, string> = {
  claude: "-p",
  codex: "exec",
  gemini: "-p",
  opencode: "run",
  aider: "--message",
};

async function main() {
  const [tool, behaviour, ...args] = process.argv.slice(2);
  const prompt = args.at(-1) ?? "";
  const mode = NON_INTERACTIVE[tool!]!;
  // Aider takes its flags first and the message right after --message.
  const ok = tool === "aider" ? args.at(-2) === mode : args[0] === mode;
  if (!ok || args.length < 2 || prompt.startsWith("-")) {
    console.error(`stand-in ${tool}: not its non-interactive mode: ${args.join(" ")}`);
    process.exit(2);
  }
  if (tool === "gemini" && process.env.GEMINI_CLI_TRUST_WORKSPACE !== "true") {
    console.error("Gemini CLI is not running in a trusted directory."); // as the real one, headless
    process.exit(55);
  }
  if (behaviour === "hang") {
    setInterval(() => {}, 60_000);
    return;
  }
  if (behaviour === "fail") {
    console.log("Loaded cached credentials.");
    console.error(`Error: API key not valid: ${FAKE.geminiKey}. Please pass a valid API key.`);
    console.error(
      "    at main (file:///stand-in/gemini.js:12:5)\n    at async run (file:///stand-in/gemini.js:40:3)",
    );
    process.exit(3);
  }
  const send1: Record<string, (p: string) => Outgoing | Promise<Outgoing>> = {
    claude,
    codex,
    gemini,
    opencode,
    aider,
  };
  const o = await send1[tool!]!(prompt);
  const res = await send(o);
  const text = await res.text();
  if (!res.ok) {
    console.error(`API Error: ${res.status} ${text.slice(0, 300)}`);
    process.exit(1);
  }
  console.log("OK");
}

if (import.meta.main) await main();

/**
 * `sluice doctor --live` as a user runs it: on a scratch HOME and PATH, stand-ins for `claude`,
 * `codex` and `gemini` (test/helpers/stand-in-tool.ts) read their base URLs where the real tools do and
 * send the requests recorded from the real tools, through a real sluice to the stand-in upstream, or
 * around it. doctor runs each once, as it is set up, and tells from the running sluice's counters
 * which of them sluice saw: seen (with the sign-in mode), not seen (with the fix), or failed (exit
 * code and last line, the credential in it masked). Exit 0 only when every tool was seen.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { deadEndpoint, runSluice, startSluice } from "../helpers/sluice.ts";
import { FAKE, installStandIn, type StandInBehaviour, type StandInTool } from "../helpers/stand-in-tool.ts";
import { testTls } from "../helpers/tls.ts";
import { anthropicMessage, json, startUpstream, type Upstream } from "../helpers/upstream.ts";

type ToolName = StandInTool;

/** A test that runs tools starts several processes (doctor, each tool): on a loaded machine, seconds. */
const RUNS_TOOLS = 30_000;

/** The stand-in upstream answering every request the stand-ins send; the account check names `origin`. */
async function upstream(origin?: () => string, escaped = false): Promise<Upstream> {
  const up = await startUpstream();
  up.on("POST", "/v1/messages", () => json(anthropicMessage("OK")));
  up.on("POST", "/v1/responses", () => json({ id: "resp_1", status: "completed", output: [] }));
  up.on("POST", "/backend-api/codex/responses", () => json({ id: "resp_1", status: "completed" }));
  up.on("GET", "/backend-api/wham/accounts/check", () => {
    const account = {
      id: "acct-fixture-0001",
      account_routing_override: "us",
      workspace_backend_origin: origin ? origin() : "NO_CONSTRAINT",
    };
    const text = JSON.stringify({ accounts: [account] });
    // The key written with an escape: the same answer, which sluice does not rewrite.
    return new Response(escaped ? text.replace("workspace_", "workspace\\u005f") : text, {
      headers: { "content-type": "application/json" },
    });
  });
  up.on("POST", "/v1internal:generateContent", () =>
    json({ response: { candidates: [{ content: { role: "model", parts: [{ text: "OK" }] } }] } }),
  );
  return up;
}

/**
 * A scratch HOME with the given stand-ins on PATH, and a SLUICE_HOME whose config names the port the
 * test's sluice listens on (doctor finds the running sluice there, as a user's config does).
 */
function scratch(proxyPort: number, tools: Partial<Record<ToolName, StandInBehaviour>>) {
  const home = mkdtempSync(join(tmpdir(), "sluice-live-"));
  const binDir = join(home, "bin");
  mkdirSync(binDir);
  for (const [t, b] of Object.entries(tools)) installStandIn(binDir, t as ToolName, b);
  mkdirSync(join(home, ".codex"));
  mkdirSync(join(home, ".gemini"));
  const sluiceHome = join(home, "sluice");
  mkdirSync(sluiceHome);
  writeFileSync(join(sluiceHome, "config.yaml"), stringify({ port: proxyPort }));
  const env: Record<string, string> = {
    HOME: home,
    SHELL: "/bin/bash",
    PATH: `${binDir}:/usr/bin:/bin`,
    SLUICE_HOME: sluiceHome,
    NODE_EXTRA_CA_CERTS: testTls().caPath,
    ANTHROPIC_BASE_URL: "",
    ANTHROPIC_API_KEY: "",
    CLAUDE_CODE_OAUTH_TOKEN: "",
    GOOGLE_GEMINI_BASE_URL: "",
    CODE_ASSIST_ENDPOINT: "",
    GEMINI_API_KEY: "",
    OPENAI_API_KEY: "",
    CODEX_HOME: "",
    OPENCODE_CONFIG: "",
    XDG_CONFIG_HOME: "",
    ANTHROPIC_API_BASE: "",
  };
  const write = (file: string, text: string) => writeFileSync(join(home, file), text);
  return { home, env, write };
}

/** The stand-in upstream, a real sluice in front of it, and a scratch HOME with the given stand-ins. */
async function rig(
  tools: Partial<Record<ToolName, StandInBehaviour>>,
  origin?: () => string,
  escaped = false,
) {
  const up = await upstream(origin, escaped);
  const s = await startSluice({ upstream: up.url });
  const sc = scratch(Number(new URL(s.proxyUrl).port), tools);
  return {
    ...sc,
    up,
    proxy: s.proxyUrl,
    doctor: (...args: string[]) => runSluice(["doctor", "--live", ...args], { env: sc.env, cwd: sc.home }),
    async [Symbol.asyncDispose]() {
      await s.stop();
      await up[Symbol.asyncDispose]();
    },
  };
}

const AWS_ID = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");

/** Codex signed in with ChatGPT (a fake token in its auth.json). */
function chatgptSignIn(t: { write(file: string, text: string): void }) {
  t.write(
    ".codex/auth.json",
    JSON.stringify({ auth_mode: "chatgpt", tokens: { access_token: FAKE.openaiKey } }),
  );
}

/** The config.toml lines `sluice connect codex --apply` writes for a sluice at `proxy`. */
const connectLines = (proxy: string) =>
  `openai_base_url = "${proxy}/v1"\nchatgpt_base_url = "${proxy.replace("127.0.0.1", "localhost")}/backend-api/"\n`;

interface LiveJson {
  tools: {
    id: string;
    installed: boolean;
    live: { status: string; logins: Record<string, number>; exit_code: number | null } | null;
  }[];
}

/** doctor's exit code, each line it must print, and no credential the stand-ins hold anywhere in its output. */
function expectReport(
  r: { code: number; stdout: string; stderr: string },
  code: number,
  lines: (string | RegExp)[],
) {
  for (const l of lines) typeof l === "string" ? expect(r.stdout).toContain(l) : expect(r.stdout).toMatch(l);
  for (const secret of Object.values(FAKE)) expect(r.stdout + r.stderr).not.toContain(secret);
  expect(r.code).toBe(code);
}

describe("sluice doctor --live", () => {
  test(
    "one tool routed, one not, one failing: each told, exit 1, no credential printed",
    async () => {
      await using t = await rig({ claude: "send", codex: "send", gemini: "fail" });
      const { up, proxy } = t;
      // Claude Code on a subscription, routed; Codex with an API key, sent straight to the provider.
      t.env.ANTHROPIC_BASE_URL = proxy;
      t.env.CLAUDE_CODE_OAUTH_TOKEN = FAKE.claudeOauth;
      t.write(".codex/config.toml", `openai_base_url = "${up.url}/v1"\n`);
      t.write(".codex/auth.json", JSON.stringify({ auth_mode: "apikey", OPENAI_API_KEY: FAKE.openaiKey }));

      const r = await t.doctor();
      expectReport(r, 1, [
        "✓ Claude Code: seen through sluice (subscription (OAuth), 1 request)",
        "✗ Codex CLI (api key): NOT seen by sluice: its request went elsewhere",
        `openai_base_url (~/.codex/config.toml) is ${up.url}/v1 in ~/.codex/config.toml, not sluice at ${proxy}`,
        "fix: sluice connect codex --apply",
        // The last line, past the stack, with the key in it masked by the rules (first and last four kept).
        /✗ Gemini CLI: the tool failed \(exit 3: Error: API key not valid: AIza\*{20,}5ZeQ\. Please pass a valid API key\.\)/,
        "fix: sluice connect gemini --apply",
      ]);
      expect(r.stderr).toContain("one word each");
      // Claude's request came through sluice, Codex's went to the upstream directly, Gemini sent nothing.
      expect(up.requests.map((q) => q.path.split("?")[0])).toEqual(
        expect.arrayContaining(["/v1/messages", "/v1/responses"]),
      );
      expect(up.requests).toHaveLength(2);
    },
    RUNS_TOOLS,
  );

  test(
    "every tool routed, in the sign-in modes that are not API keys: exit 0, the mode read from traffic",
    async () => {
      await using t = await rig({ claude: "send", codex: "send", gemini: "send" });
      t.env.ANTHROPIC_BASE_URL = t.proxy;
      t.env.ANTHROPIC_API_KEY = FAKE.claudeKey;
      t.write(".codex/config.toml", connectLines(t.proxy));
      chatgptSignIn(t);
      t.env.CODE_ASSIST_ENDPOINT = t.proxy;
      t.write(
        ".gemini/settings.json",
        JSON.stringify({ security: { auth: { selectedType: "oauth-personal" } } }),
      );

      expectReport(await t.doctor(), 0, [
        "✓ Claude Code: seen through sluice (api key, 1 request)",
        "✓ Codex CLI: seen through sluice (signed in with ChatGPT, 2 requests)",
        "✓ Gemini CLI: seen through sluice (signed in with Google, 1 request)",
      ]);

      const asJson = await t.doctor("--json");
      expectReport(asJson, 0, []);
      const live = Object.fromEntries(
        (JSON.parse(asJson.stdout) as LiveJson).tools.filter((x) => x.installed).map((x) => [x.id, x.live]),
      );
      expect(live).toEqual({
        claude: expect.objectContaining({ status: "seen", logins: { api_key: 1 }, exit_code: 0 }),
        codex: expect.objectContaining({ status: "seen", logins: { chatgpt: 2 }, exit_code: 0 }),
        gemini: expect.objectContaining({ status: "seen", logins: { google: 1 }, exit_code: 0 }),
      });
    },
    RUNS_TOOLS,
  );

  test(
    "Codex told by its account check to use the account's own back end: its conversation goes there through sluice, scanned, and is seen",
    async () => {
      await using origin = await startUpstream();
      origin.on("POST", "/backend-api/codex/responses", () => json({ id: "resp_1", status: "completed" }));
      await using t = await rig({ codex: "send" }, () => origin.url);
      chatgptSignIn(t);
      t.write(".codex/config.toml", connectLines(t.proxy));

      // A planted key in the prompt: blocked by sluice, shown by the tool, sent to no back end.
      const planted = Bun.spawn(
        [join(t.home, "bin/codex"), "exec", "--skip-git-repo-check", `say ${AWS_ID}`],
        { env: t.env, cwd: t.home, stdout: "pipe", stderr: "pipe" },
      );
      const stderr = await new Response(planted.stderr).text();
      expect(await planted.exited).toBe(1);
      expect(stderr).toContain("API Error: 400");
      expect(stderr).toContain("sluice blocked this request: aws_access_key_id");
      expect(origin.requests).toHaveLength(0);

      expectReport(await t.doctor(), 0, [
        "✓ Codex CLI: seen through sluice (signed in with ChatGPT, 2 requests)",
      ]);
      // The conversation reached the back end the answer named, through sluice (with the routing
      // Codex sends there); the configured upstream had only the account checks.
      expect(origin.requests.map((q) => q.path)).toEqual(["/backend-api/codex/responses"]);
      expect(origin.requests[0]!.headers.get("x-openai-account-routing-override")).toBe("us");
      expect(t.up.requests.map((q) => q.path)).toEqual([
        "/backend-api/wham/accounts/check",
        "/backend-api/wham/accounts/check",
      ]);
    },
    RUNS_TOOLS,
  );

  test(
    "Codex with only chatgpt_base_url on sluice: it refuses to send (the answer names no back end it takes), and doctor says what to set",
    async () => {
      await using origin = await startUpstream();
      await using t = await rig({ codex: "send" }, () => origin.url);
      chatgptSignIn(t);
      t.write(".codex/config.toml", `chatgpt_base_url = "${t.proxy}/backend-api/"\n`);

      expectReport(await t.doctor(), 1, [
        "✗ Codex CLI (signed in with ChatGPT): the tool failed (exit 1: ERROR: workspace backend must use an HTTPS origin without credentials)",
        "sluice saw some of its traffic (signed in with ChatGPT, 1 request), but no completed prompt",
        "openai_base_url (~/.codex/config.toml) is not set",
        "fix: sluice connect codex --apply",
      ]);
      expect(origin.requests).toHaveLength(0);
    },
    RUNS_TOOLS,
  );

  test(
    "an answer sluice cannot rewrite, and one origin for both base URLs: the conversation goes around sluice, and doctor says so",
    async () => {
      await using origin = await startUpstream();
      origin.on("POST", "/backend-api/codex/responses", () => json({ id: "resp_1", status: "completed" }));
      await using t = await rig({ codex: "send" }, () => origin.url, true);
      chatgptSignIn(t);
      t.write(
        ".codex/config.toml",
        `openai_base_url = "${t.proxy}/v1"\nchatgpt_base_url = "${t.proxy}/backend-api/"\n`,
      );
      expectReport(await t.doctor(), 1, [
        "✗ Codex CLI (signed in with ChatGPT): NOT seen by sluice: its request went elsewhere",
        "its account check sent the conversation to another back end directly, around sluice",
        "fix: sluice connect codex --apply",
      ]);
      expect(origin.requests).toHaveLength(1); // straight from the tool
      expect(t.up.requests.map((q) => q.path)).toEqual(["/backend-api/wham/accounts/check"]);
    },
    RUNS_TOOLS,
  );

  test(
    "OpenCode (opencode run) and Aider (aider --message), routed as connect writes them: each seen",
    async () => {
      await using t = await rig({ opencode: "send", aider: "send" });
      const connect = await runSluice(["connect", "opencode", "--apply"], { env: t.env, cwd: t.home });
      expect(connect.code).toBe(0);
      // Aider's lines are environment variables: as in a new shell after `connect aider --apply`.
      t.env.ANTHROPIC_BASE_URL = t.proxy;
      t.env.ANTHROPIC_API_KEY = FAKE.claudeKey;
      expectReport(await t.doctor(), 0, [
        "✓ OpenCode: seen through sluice (api key, 1 request)",
        "✓ Aider: seen through sluice (api key, 1 request)",
      ]);
      expect(t.up.requests.map((q) => q.path)).toEqual(["/v1/messages", "/v1/messages"]);
      const ua = t.up.requests.map((q) => q.headers.get("user-agent")?.split("/")[0]).sort();
      expect(ua).toEqual(["litellm", "opencode"]);
    },
    RUNS_TOOLS,
  );

  test(
    "OpenCode with only Claude Code's ANTHROPIC_BASE_URL (no /v1): it fails, and doctor names the setting in its own file",
    async () => {
      await using t = await rig({ opencode: "send" });
      t.env.ANTHROPIC_BASE_URL = t.proxy;
      t.env.ANTHROPIC_API_KEY = FAKE.claudeKey;
      const file = join(t.home, ".config/opencode/opencode.json");
      expectReport(await t.doctor(), 1, [
        "✗ OpenCode: the tool failed (exit 1: API Error: 404",
        `provider.anthropic.options.baseURL (${file.replace(t.home, "~")}) is not set`,
        "fix: sluice connect opencode --apply",
      ]);
      // OpenCode appends /messages to the base URL: sluice forwarded /messages, which no API has.
      expect(t.up.requests.map((q) => q.path)).toEqual(["/messages"]);
    },
    RUNS_TOOLS,
  );

  test(
    "a tool that fails after sluice saw its request is failed, with what sluice saw",
    async () => {
      await using t = await rig({ claude: "send" });
      t.up.on("POST", "/v1/messages", () =>
        json(
          { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } },
          { status: 401 },
        ),
      );
      t.env.ANTHROPIC_BASE_URL = t.proxy;
      t.env.ANTHROPIC_API_KEY = FAKE.claudeKey;
      expectReport(await t.doctor(), 1, [
        "✗ Claude Code (api key): the tool failed (exit 1: API Error: 401",
        "sluice saw some of its traffic (api key, 1 request), but no completed prompt",
        'its settings route it through sluice: run `claude -p "hi"` yourself to see why it failed',
      ]);
    },
    RUNS_TOOLS,
  );

  test(
    "settings in the shell profile but not in this shell: the tool fails, and a new shell is the fix",
    async () => {
      await using t = await rig({ claude: "send" });
      t.write(
        ".bashrc",
        `# >>> sluice connect claude >>>\nexport ANTHROPIC_BASE_URL=${t.proxy}\n# <<< sluice connect claude <<<\n`,
      );
      t.env.ANTHROPIC_API_KEY = FAKE.claudeKey;
      // The stand-in, like the real tool, goes to its default URL (which it refuses, being offline).
      expectReport(await t.doctor(), 1, [
        "✗ Claude Code (api key): the tool failed (exit 4: stand-in: refusing to reach https://api.anthropic.com",
        "ANTHROPIC_BASE_URL: in the shell profile, not in this shell: open a new shell and run this again",
      ]);
    },
    RUNS_TOOLS,
  );

  test(
    "a tool that does not end is stopped at --timeout and reported",
    async () => {
      await using t = await rig({ claude: "hang" });
      t.env.ANTHROPIC_BASE_URL = t.proxy;
      const r = await t.doctor("--timeout", "1");
      expect(r.code).toBe(1);
      expect(r.stdout).toContain("✗ Claude Code: the tool failed (timed out after 1 s)");
    },
    RUNS_TOOLS,
  );

  test("without a running sluice nothing is run, and it says how to start it", async () => {
    using dead = deadEndpoint();
    const { env, home } = scratch(dead.port, { claude: "fail" });
    const r = await runSluice(["doctor", "--live"], { env, cwd: home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`sluice is not answering at http://127.0.0.1:${dead.port}`);
    expect(r.stderr).toContain("start it with `sluice serve`");
    expect(r.stdout).toBe(""); // no tool was run, no check printed
  });

  test("--timeout must be seconds", async () => {
    const { env, home } = scratch(8080, {});
    const r = await runSluice(["doctor", "--live", "--timeout", "soon"], { env, cwd: home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--timeout = "soon" is invalid');
  });
});

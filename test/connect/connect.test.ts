/**
 * `sluice connect` and `sluice doctor` on a scratch HOME, as a user runs them: for every tool,
 * doctor first says it is not routed (exit 1, with the fix), `connect --apply` writes the settings
 * (keeping the user's own lines), doctor then says routed (exit 0), and `--undo` puts every file back
 * byte for byte. Doctor reads the sign-in mode without printing a credential, and shows when sluice
 * last saw a tool's traffic from the store of a real sluice that proxied it.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream } from "../helpers/upstream.ts";

const TOOLS = [
  { id: "claude", bin: "claude", name: "Claude Code" },
  { id: "codex", bin: "codex", name: "Codex CLI" },
  { id: "gemini", bin: "gemini", name: "Gemini CLI" },
  { id: "opencode", bin: "opencode", name: "OpenCode" },
  { id: "aider", bin: "aider", name: "Aider" },
] as const;

/** A scratch HOME with the tool "installed" (an executable on PATH) and files of the user's own. */
function scratch(bin: string) {
  const home = mkdtempSync(join(tmpdir(), "sluice-connect-"));
  const binDir = join(home, "bin");
  mkdirSync(binDir);
  writeFileSync(join(binDir, bin), "#!/bin/sh\nexit 0\n");
  chmodSync(join(binDir, bin), 0o755);
  writeFileSync(join(home, ".bashrc"), "# my bashrc\nalias ll='ls -l'\n");
  mkdirSync(join(home, ".codex"));
  writeFileSync(
    join(home, ".codex/config.toml"),
    '# my codex settings\nmodel = "gpt-5"\n\n[profiles.fast]\nmodel = "gpt-5-mini"\n',
  );
  mkdirSync(join(home, ".config/opencode"), { recursive: true });
  writeFileSync(
    join(home, ".config/opencode/opencode.json"),
    '{"$schema": "https://opencode.ai/config.json", "theme": "tokyonight",\n "provider": {"anthropic": {"models": {}}}}\n',
  );
  const env = {
    HOME: home,
    SHELL: "/bin/bash",
    PATH: `${binDir}:/usr/bin:/bin`,
    SLUICE_HOME: join(home, "sluice"),
    ANTHROPIC_BASE_URL: "",
    GOOGLE_GEMINI_BASE_URL: "",
    CODE_ASSIST_ENDPOINT: "",
    OPENAI_BASE_URL: "",
    OPENAI_API_BASE: "",
  };
  return { home, env };
}

const snapshot = (home: string) =>
  Object.fromEntries(
    [".bashrc", ".codex/config.toml", ".config/opencode/opencode.json"].map((f) => [
      f,
      existsSync(join(home, f)) ? readFileSync(join(home, f)) : null,
    ]),
  );

describe("connect --apply, doctor, --undo for each tool", () => {
  for (const t of TOOLS) {
    test(t.id, async () => {
      const { home, env } = scratch(t.bin);
      const before = snapshot(home);
      const doctor = () => runSluice(["doctor", "--json"], { env, cwd: home });

      const first = await doctor();
      expect(first.code).toBe(1);
      const check = (out: string) =>
        (
          JSON.parse(out) as {
            tools: { id: string; installed: boolean; routed: boolean; fix: string | null }[];
          }
        ).tools.find((x) => x.id === t.id)!;
      expect(check(first.stdout)).toMatchObject({
        installed: true,
        routed: false,
        fix: `sluice connect ${t.id} --apply`,
      });

      const printed = await runSluice(["connect", t.id], { env, cwd: home });
      expect(printed.code).toBe(0);
      expect(printed.stdout).toContain("http://127.0.0.1:8080");
      expect(snapshot(home)).toEqual(before); // --print changes nothing

      const applied = await runSluice(["connect", t.id, "--apply"], { env, cwd: home });
      expect(applied.code).toBe(0);
      if (t.id === "codex") {
        const toml = readFileSync(join(home, ".codex/config.toml"), "utf8");
        expect(toml).toContain('openai_base_url = "http://127.0.0.1:8080/v1"');
        expect(toml).toContain('chatgpt_base_url = "http://localhost:8080/backend-api/"');
        expect(toml).toContain("[profiles.fast]");
        expect(toml).toContain("# my codex settings");
      } else if (t.id === "opencode") {
        // Its own file (OpenCode appends /messages to ANTHROPIC_BASE_URL, Claude Code /v1/messages).
        const doc = JSON.parse(readFileSync(join(home, ".config/opencode/opencode.json"), "utf8"));
        expect(doc).toEqual({
          $schema: "https://opencode.ai/config.json",
          theme: "tokyonight",
          provider: {
            anthropic: { models: {}, options: { baseURL: "http://127.0.0.1:8080/v1" } },
            openai: { options: { baseURL: "http://127.0.0.1:8080/v1" } },
          },
        });
        expect(readFileSync(join(home, ".bashrc"), "utf8")).toBe("# my bashrc\nalias ll='ls -l'\n");
      } else
        expect(readFileSync(join(home, ".bashrc"), "utf8")).toStartWith("# my bashrc\nalias ll='ls -l'\n");
      const again = await runSluice(["connect", t.id, "--apply"], { env, cwd: home });
      expect(again.stdout).toContain("already routes");

      const second = await doctor();
      expect(check(second.stdout)).toMatchObject({ installed: true, routed: true, fix: null });
      expect(second.code).toBe(0);

      const undone = await runSluice(["connect", t.id, "--undo"], { env, cwd: home });
      expect(undone.code).toBe(0);
      expect(snapshot(home)).toEqual(before);
    });
  }
});

test("doctor names the sign-in mode without printing a credential, and wants the setting that mode uses", async () => {
  const { home, env } = scratch("codex");
  writeFileSync(
    join(home, ".codex/config.toml"),
    'openai_base_url = "http://127.0.0.1:8080/v1"\n', // routed for API keys only
  );
  writeFileSync(
    join(home, ".codex/auth.json"),
    JSON.stringify({ auth_mode: "chatgpt", tokens: { access_token: "tok-SECRET-123" } }),
  );
  const r = await runSluice(["doctor"], { env, cwd: home });
  expect(r.code).toBe(1);
  expect(r.stdout).toContain("Codex CLI (signed in with ChatGPT): NOT routed");
  expect(r.stdout).toContain("chatgpt_base_url (~/.codex/config.toml) is not set");
  expect(r.stdout).toContain("fix: sluice connect codex --apply");
  expect(r.stdout + r.stderr).not.toContain("tok-SECRET-123");
});

test("CODEX_HOME: connect --apply writes, doctor reads, --undo restores the config.toml there, ~/.codex untouched", async () => {
  const { home, env } = scratch("codex");
  const codexHome = join(home, "work-codex");
  mkdirSync(codexHome);
  const file = join(codexHome, "config.toml");
  const mine = '# the work profile\nmodel = "gpt-5"\n';
  writeFileSync(file, mine);
  writeFileSync(
    join(codexHome, "auth.json"),
    JSON.stringify({ auth_mode: "chatgpt", tokens: { access_token: "tok-SECRET-456" } }),
  );
  const withHome = { ...env, CODEX_HOME: codexHome };
  const defaultBefore = readFileSync(join(home, ".codex/config.toml"));
  const doctor = () => runSluice(["doctor"], { env: withHome, cwd: home });

  const first = await doctor();
  expect(first.code).toBe(1);
  // The sign-in mode comes from $CODEX_HOME/auth.json; the file named is $CODEX_HOME's.
  expect(first.stdout).toContain("Codex CLI (signed in with ChatGPT): NOT routed");
  expect(first.stdout).toContain(`chatgpt_base_url (${file}) is not set`);
  expect(first.stdout).toContain(`openai_base_url (${file}) is not set`);
  const printed = await runSluice(["connect", "codex"], { env: withHome, cwd: home });
  expect(printed.stdout).toContain(`in ${file}`);

  const applied = await runSluice(["connect", "codex", "--apply"], { env: withHome, cwd: home });
  expect(applied.code).toBe(0);
  expect(applied.stdout).toContain(`wrote ${file} (backup: ${file}.sluice-backup)`);
  expect(readFileSync(file, "utf8")).toBe(
    `${mine}openai_base_url = "http://127.0.0.1:8080/v1"\nchatgpt_base_url = "http://localhost:8080/backend-api/"\n`,
  );
  expect(readFileSync(join(home, ".codex/config.toml"))).toEqual(defaultBefore);
  const second = await doctor();
  expect(second.stdout).toContain("Codex CLI (signed in with ChatGPT): routed");
  expect(second.code).toBe(0);
  // Without CODEX_HOME, doctor looks at ~/.codex, which sluice did not touch.
  expect((await runSluice(["doctor"], { env, cwd: home })).code).toBe(1);

  const undone = await runSluice(["connect", "codex", "--undo"], { env: withHome, cwd: home });
  expect(undone.stdout).toContain(`restored ${file}`);
  expect(readFileSync(file, "utf8")).toBe(mine);
  expect(existsSync(`${file}.sluice-backup`)).toBe(false);
  expect(first.stdout + second.stdout).not.toContain("tok-SECRET-456");
});

test("CLAUDE_CONFIG_DIR: doctor reads Claude Code's sign-in there", async () => {
  const { home, env } = scratch("claude");
  const dir = join(home, "claude-work");
  mkdirSync(dir);
  writeFileSync(join(dir, ".credentials.json"), JSON.stringify({ claudeAiOauth: { accessToken: "x" } }));
  const r = await runSluice(["doctor"], { env: { ...env, CLAUDE_CONFIG_DIR: dir }, cwd: home });
  expect(r.stdout).toContain("Claude Code (subscription (OAuth)): NOT routed");
  const plain = await runSluice(["doctor"], { env, cwd: home });
  expect(plain.stdout).toContain("✗ Claude Code: NOT routed\n");
});

test("doctor shows when sluice last saw a tool, from the store of the sluice that proxied it", async () => {
  await using up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg" }));
  await using s = await startSluice({ upstream: up.url });
  const res = await fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "k",
      "user-agent": "claude-cli/2.1.328 (external, cli)",
    },
    body: JSON.stringify({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  await s.runtime.store.flush();
  const { home, env } = scratch("claude");
  const r = await runSluice(["doctor", "--json"], { env: { ...env, SLUICE_HOME: s.configDir }, cwd: home });
  const claude = (
    JSON.parse(r.stdout) as { tools: { id: string; seen: { login: string; requests: number }[] }[] }
  ).tools.find((x) => x.id === "claude")!;
  expect(claude.seen[0]).toMatchObject({ login: "api_key", requests: 1 });
});

test("connect refuses an unknown tool and a broken TOML file, changing nothing", async () => {
  const { home, env } = scratch("codex");
  const bad = await runSluice(["connect", "cursor"], { env, cwd: home });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('unknown tool "cursor"');
  writeFileSync(join(home, ".codex/config.toml"), "model = [unclosed\n");
  const broken = await runSluice(["connect", "codex", "--apply"], { env, cwd: home });
  expect(broken.code).toBe(2);
  expect(broken.stderr).toContain("is not valid TOML, so it is left alone");
  expect(readFileSync(join(home, ".codex/config.toml"), "utf8")).toBe("model = [unclosed\n");
  // OpenCode's file with comments (JSONC) is not plain JSON: left alone too.
  const jsonc = '{\n  // mine\n  "theme": "tokyonight"\n}\n';
  writeFileSync(join(home, ".config/opencode/opencode.json"), jsonc);
  const commented = await runSluice(["connect", "opencode", "--apply"], { env, cwd: home });
  expect(commented.code).toBe(2);
  expect(commented.stderr).toContain("is not plain JSON, so it is left alone");
  expect(readFileSync(join(home, ".config/opencode/opencode.json"), "utf8")).toBe(jsonc);
});

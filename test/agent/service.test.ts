/**
 * `sluice-agent install | uninstall | status | logs` from the compiled binary. The files come from
 * `install --print`: the systemd unit passes `systemd-analyze --user verify` with no warning, the
 * launchd plist passes the plutil-style checks of _plist.ts. Install and uninstall run against a
 * stand-in `systemctl` on PATH (this machine has no user service manager) that records its calls,
 * with a real agent answering on the port the service would use.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parsePlist } from "plist";
import { type HostBinaries, hostBinaries } from "../helpers/binaries.ts";
import { runSluice, writeTestConfig } from "../helpers/sluice.ts";
import { tempDirs } from "../helpers/temp.ts";
import { type RunningAgent, startAgent } from "./_agent.ts";
import { checkPlist } from "./_plist.ts";

// Compiled binaries started and hashed on a busy two-core machine take seconds, not milliseconds.
setDefaultTimeout(60_000);

let bins: HostBinaries;
const temp = tempDirs();
beforeAll(async () => {
  bins = await hostBinaries();
}, 120_000);

/** Run a `sluice-agent` command to completion (runSluice runs any binary the same way). */
function agentCmd(agent: string, args: string[], env: Record<string, string> = {}) {
  return runSluice(args, { binary: agent, env, cwd: tmpdir() });
}

/**
 * The agent and its sluice under a directory whose name needs quoting in a unit (a space, `%`, `$`),
 * hard-linked so that the agent's own path, which the unit names, is that one.
 */
function awkwardlyPlacedAgent(): string {
  const dir = join(temp("sluice-unit-"), "my tools %i $HOME");
  mkdirSync(dir);
  linkSync(bins.agent, join(dir, "sluice-agent"));
  linkSync(bins.sluice, join(dir, "sluice"));
  return join(dir, "sluice-agent");
}

test("install --print: a systemd user unit that systemd-analyze verifies without a warning", async () => {
  const agent = awkwardlyPlacedAgent();
  const home = temp("sluice-home-");
  const sluiceHome = join(home, "conf dir");
  const r = await agentCmd(agent, ["install", "--print", "--platform", "linux"], {
    HOME: home,
    SLUICE_HOME: sluiceHome,
  });
  expect(r.code).toBe(0);
  const unit = r.stdout;
  expect(unit).toContain(
    `ExecStart="${agent.replace("%i", "%%i").replace("$HOME", "$$HOME")}" run --port 8070\n`,
  );
  expect(unit).toContain(`Environment="SLUICE_HOME=${sluiceHome}"\n`);
  for (const line of [
    "Restart=on-failure",
    "KillMode=mixed",
    "NoNewPrivileges=yes",
    "WantedBy=default.target",
  ])
    expect(unit).toContain(`${line}\n`);

  const dir = temp("sluice-unit-verify-");
  const runtime = temp("sluice-xdg-runtime-");
  chmodSync(runtime, 0o700);
  writeFileSync(join(dir, "sluice-agent.service"), unit);
  const verify = () =>
    Bun.spawnSync(["systemd-analyze", "--user", "verify", join(dir, "sluice-agent.service")], {
      env: { ...process.env, XDG_RUNTIME_DIR: runtime, HOME: home },
      stdout: "pipe",
      stderr: "pipe",
    });
  const v = verify();
  // Unknown keys and bad values are only warnings to verify: any output at all is a failure here.
  expect(`${v.stdout}${v.stderr}`).toBe("");
  expect(v.exitCode).toBe(0);

  // The check is real: a misspelt key and a missing executable are reported.
  writeFileSync(
    join(dir, "sluice-agent.service"),
    unit
      .replace("KillMode=", "KilMode=")
      .replace(agent.replace("%i", "%%i").replace("$HOME", "$$HOME"), "/nonexistent/sluice-agent"),
  );
  const bad = verify();
  expect(`${bad.stderr}`).toContain("Unknown key 'KilMode'");
  expect(`${bad.stderr}`).toContain("/nonexistent/sluice-agent");
});

test("install --print --platform darwin: a LaunchAgent plist that plutil-style checks accept", async () => {
  const agent = awkwardlyPlacedAgent();
  const home = temp("sluice-home-");
  const sluiceHome = join(home, "a&b <c>");
  const r = await agentCmd(agent, ["install", "--print", "--platform", "darwin"], {
    HOME: home,
    SLUICE_HOME: sluiceHome,
  });
  expect(r.code).toBe(0);
  expect(checkPlist(r.stdout)).toEqual([]);
  expect(parsePlist(r.stdout)).toEqual({
    Label: "dev.sluice.agent",
    ProgramArguments: [agent, "run", "--port", "8070", "--quiet"],
    RunAtLoad: true,
    KeepAlive: { SuccessfulExit: false },
    ThrottleInterval: 5,
    ExitTimeOut: 45,
    Umask: 63,
    StandardOutPath: join(sluiceHome, "logs", "sluice-agent.stderr.log"),
    StandardErrorPath: join(sluiceHome, "logs", "sluice-agent.stderr.log"),
    EnvironmentVariables: { SLUICE_HOME: sluiceHome },
  });
  // The checker is real: a dict with a key and no value, and an unescaped ampersand, are refused.
  expect(checkPlist(r.stdout.replace("<key>RunAtLoad</key>\n  <true/>", "<key>RunAtLoad</key>"))).not.toEqual(
    [],
  );
  expect(checkPlist(r.stdout.replace("a&amp;b", "a&b"))).not.toEqual([]);
});

test("install refuses what it cannot do, with a clear message", async () => {
  const bad = await agentCmd(bins.agent, ["install", "--print", "--platform", "windows"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('no service file for "windows": linux or darwin');
  const other = await agentCmd(bins.agent, ["install", "--platform", "darwin"]);
  expect(other.code).toBe(2);
  expect(other.stderr).toContain("--platform darwin only goes with --print");
});

/** A stand-in `systemctl` (and `loginctl`) that records its calls and keeps is-active state. */
function fakeSystemctl(reachable = true): { bin: string; log: string } {
  const bin = temp("sluice-fake-bin-");
  const log = join(bin, "calls.log");
  const state = join(bin, "active");
  writeFileSync(
    join(bin, "systemctl"),
    `#!/bin/sh
echo "systemctl $*" >> "${log}"
case "$*" in
  "--user show --property=Version") ${reachable ? 'echo "Version=252"; exit 0' : 'echo "Failed to connect to bus: No medium found" >&2; exit 1'} ;;
  "--user is-active sluice-agent.service") if [ -f "${state}" ]; then echo active; exit 0; else echo inactive; exit 3; fi ;;
  "--user restart sluice-agent.service") touch "${state}" ;;
  "--user disable --now sluice-agent.service") rm -f "${state}" ;;
esac
exit 0
`,
  );
  writeFileSync(join(bin, "loginctl"), `#!/bin/sh\necho "loginctl $*" >> "${log}"\necho Linger=no\n`);
  chmodSync(join(bin, "systemctl"), 0o755);
  chmodSync(join(bin, "loginctl"), 0o755);
  return { bin, log };
}

describe("install, status, logs and uninstall with systemctl --user", () => {
  let running: RunningAgent;
  let env: Record<string, string>;
  let fake: ReturnType<typeof fakeSystemctl>;
  let port: string;
  const unit = () => join(env.HOME!, ".config", "systemd", "user", "sluice-agent.service");
  const calls = () => (existsSync(fake.log) ? readFileSync(fake.log, "utf8").trim().split("\n") : []);

  beforeAll(async () => {
    // The agent the service would start, already answering, as systemd would have it after a start.
    const sluiceHome = writeTestConfig({});
    running = await startAgent(bins.agent, { home: sluiceHome });
    await running.waitForOutput(/sluice is up/);
    port = new URL(running.url).port;
    fake = fakeSystemctl();
    env = {
      HOME: temp("sluice-home-"),
      SLUICE_HOME: sluiceHome,
      PATH: `${fake.bin}:${process.env.PATH}`,
      USER: "someone",
    };
  }, 60_000);
  afterAll(async () => {
    await running?.[Symbol.asyncDispose]();
  });

  test("install writes the unit, enables and starts it, and waits for the agent", async () => {
    const r = await agentCmd(bins.agent, ["install", "--port", port, "--wait", "10s"], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`wrote ${unit()}`);
    expect(r.stdout).toContain("enabled and started sluice-agent.service (systemctl --user)");
    expect(r.stdout).toContain("loginctl enable-linger");
    expect(r.stdout).toContain(
      `sluice-agent is running on http://127.0.0.1:${port}; sluice on http://127.0.0.1:`,
    );
    expect(readFileSync(unit(), "utf8")).toContain(`ExecStart=${bins.agent} run --port ${port}\n`);
    expect(calls()).toEqual([
      "systemctl --user show --property=Version",
      "systemctl --user is-active sluice-agent.service",
      "systemctl --user daemon-reload",
      "systemctl --user enable sluice-agent.service",
      "systemctl --user restart sluice-agent.service",
      "loginctl show-user someone --property=Linger",
    ]);
  });

  test("install again changes nothing: same unit, service active, same binaries running", async () => {
    writeFileSync(fake.log, "");
    const r = await agentCmd(bins.agent, ["install", "--port", port, "--wait", "10s"], env);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`sluice-agent is already installed and running (${unit()})`);
    expect(calls()).toEqual([
      "systemctl --user show --property=Version",
      "systemctl --user is-active sluice-agent.service",
    ]);
  });

  test("status reports the service, the agent and sluice; exit 0", async () => {
    const r = await agentCmd(bins.agent, ["status", "--port", port], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`service: installed (${unit()}), active (systemctl --user)`);
    expect(r.stdout).toMatch(/agent: +running on http:\/\/127\.0\.0\.1:\d+, pid \d+, 9\.8\.7-test/);
    expect(r.stdout).toMatch(/sluice: +running on http:\/\/127\.0\.0\.1:\d+, pid \d+, sha256:[0-9a-f]{64}/);
    const j = await agentCmd(bins.agent, ["status", "--port", port, "--json"], env);
    expect(JSON.parse(j.stdout)).toMatchObject({ installed: true, active: true, health: { status: "ok" } });
  });

  test("logs prints the agent's last lines", async () => {
    const r = await agentCmd(bins.agent, ["logs", "-n", "200"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("sluice is up");
    expect(r.stdout).toContain("sluice-agent 9.8.7-test listening on http://127.0.0.1:");
  });

  test("uninstall disables the service and removes the unit, the agent's log and state; twice is harmless", async () => {
    writeFileSync(fake.log, "");
    const r = await agentCmd(bins.agent, ["uninstall"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`stopped and removed ${unit()}`);
    expect(r.stdout).toContain(`kept sluice's configuration and data in ${env.SLUICE_HOME}`);
    expect(existsSync(unit())).toBe(false);
    expect(existsSync(join(env.SLUICE_HOME!, "logs", "sluice-agent.log"))).toBe(false);
    expect(existsSync(join(env.SLUICE_HOME!, "sluice-agent.child.json"))).toBe(false);
    expect(existsSync(join(env.SLUICE_HOME!, "device-id"))).toBe(true);
    expect(calls()).toEqual([
      "systemctl --user disable --now sluice-agent.service",
      "systemctl --user daemon-reload",
      "systemctl --user reset-failed sluice-agent.service",
    ]);
    const again = await agentCmd(bins.agent, ["uninstall"], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("sluice-agent is not installed: nothing to remove");
  });
});

test("install without a reachable user service manager says so and writes nothing", async () => {
  const fake = fakeSystemctl(false);
  const home = temp("sluice-home-");
  const r = await agentCmd(bins.agent, ["install", "--wait", "0"], {
    HOME: home,
    SLUICE_HOME: join(home, "conf"),
    PATH: `${fake.bin}:${process.env.PATH}`,
  });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(
    "systemctl --user cannot reach your user service manager (Failed to connect to bus",
  );
  expect(r.stderr).toContain("sluice-agent run");
  expect(existsSync(join(home, ".config", "systemd", "user", "sluice-agent.service"))).toBe(false);
});

test("status with no agent running exits 3", async () => {
  const home = temp("sluice-home-");
  const r = await agentCmd(bins.agent, ["status", "--port", "1"], {
    HOME: home,
    SLUICE_HOME: join(home, "c"),
  });
  expect(r.code).toBe(3);
  expect(r.stdout).toContain("service: not installed");
  expect(r.stdout).toContain("agent:   not answering on http://127.0.0.1:1");
});

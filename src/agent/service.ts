/**
 * `sluice-agent install | uninstall | status` as a per-user service: a systemd user unit on Linux, a
 * launchd LaunchAgent on macOS, never root. Install writes the file, enables and (re)starts the
 * service, and waits for the agent to answer; run again with nothing changed it does nothing, and
 * after an upgrade (binaries whose build_id differs from what runs) it restarts the service.
 * Uninstall stops it and removes everything install and the service wrote, keeping sluice's own
 * configuration and data.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildIdOf } from "../core/build-info.ts";
import { LABEL, launchctl, plistPath, renderPlist } from "./launchd.ts";
import { agentExecutable, agentPaths, siblingSluice } from "./paths.ts";
import { renderUnit, systemctl, UNIT, unitPath } from "./systemd.ts";

type Env = Record<string, string | undefined>;
export type Platform = "linux" | "darwin";

export function hostPlatform(): Platform | null {
  return process.platform === "linux" || process.platform === "darwin" ? process.platform : null;
}

export interface ServiceFile {
  platform: Platform;
  path: string;
  text: string;
}

/** The variables that decide where sluice keeps its config, carried into the service when set. */
function carriedEnvironment(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ["SLUICE_HOME", "XDG_CONFIG_HOME"]) if (env[k]) out[k] = env[k]!;
  return out;
}

/** The service file for `platform`, starting this agent with `run --port <port>`. */
export function serviceFile(platform: Platform, port: number, env: Env = process.env): ServiceFile {
  const exec = [...agentExecutable(), "run", "--port", String(port)];
  const environment = carriedEnvironment(env);
  if (platform === "linux") return { platform, path: unitPath(env), text: renderUnit({ exec, environment }) };
  const logs = join(agentPaths(env).configDir, "logs");
  return {
    platform,
    path: plistPath(env),
    // launchd keeps stderr apart: the agent's own log has the rest (--quiet).
    text: renderPlist({
      exec: [...exec, "--quiet"],
      environment,
      stderrPath: join(logs, "sluice-agent.stderr.log"),
    }),
  };
}

export interface Tool {
  code: number;
  out: string;
}

/** Run a service manager's command; a missing program is code 127. */
export function runTool(argv: string[]): Tool {
  try {
    const r = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    return { code: r.exitCode ?? 1, out: `${r.stdout.toString()}${r.stderr.toString()}`.trim() };
  } catch (e) {
    return { code: 127, out: `${argv[0]}: ${(e as Error).message}` };
  }
}

export class ServiceError extends Error {
  override name = "ServiceError";
}

function must(argv: string[]): string {
  const r = runTool(argv);
  if (r.code !== 0)
    throw new ServiceError(`\`${argv.join(" ")}\` failed (exit ${r.code}): ${r.out || "no output"}`);
  return r.out;
}

interface AgentHealthBody {
  agent?: { build_id?: string; pid?: number };
  proxy?: {
    state?: string;
    build_id?: string | null;
    url?: string | null;
    pid?: number | null;
    restarts?: number;
  };
}

/** The agent's /health on this machine, or null when nothing answers. */
export async function agentHealth(port: number, timeoutMs = 1500) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, body: (await res.json()) as AgentHealthBody & Record<string, unknown> };
  } catch {
    return null;
  }
}

/** What the running agent reports differs from the binaries on disk (an upgrade happened). */
async function runsOtherBinaries(port: number): Promise<boolean> {
  const h = await agentHealth(port);
  if (!h) return true;
  const agent = agentExecutable()[0]!;
  return (
    h.body.agent?.build_id !== buildIdOf(agent) || h.body.proxy?.build_id !== buildIdOf(siblingSluice(agent))
  );
}

function isActive(platform: Platform, path: string): boolean {
  if (platform === "linux") return runTool(systemctl.isActive).out === "active";
  return runTool(launchctl(process.getuid!(), path).loaded).code === 0;
}

export interface InstallOptions {
  port: number;
  /** How long to wait for the agent to answer after starting it (0: do not wait). */
  waitMs: number;
  env?: Env;
  say: (line: string) => void;
}

export async function install(opts: InstallOptions): Promise<void> {
  const platform = hostPlatform();
  if (!platform)
    throw new ServiceError(`no service manager support on ${process.platform}: run \`sluice-agent run\``);
  const env = opts.env ?? process.env;
  const agent = agentExecutable()[0]!;
  const sluice = siblingSluice(agent);
  if (agentExecutable().length === 1 && !existsSync(sluice))
    throw new ServiceError(
      `no sluice binary beside this agent (expected ${sluice}): install both, as install.sh does`,
    );
  const file = serviceFile(platform, opts.port, env);
  const ctl = launchctl(process.getuid?.() ?? 0, file.path);
  const probe = runTool(platform === "linux" ? systemctl.reachable : ctl.reachable);
  if (probe.code !== 0)
    throw new ServiceError(
      platform === "linux"
        ? `systemctl --user cannot reach your user service manager (${probe.out || `exit ${probe.code}`}). ` +
            "Log in with a systemd user session, or run `sluice-agent run` in the foreground"
        : `launchctl cannot reach your login session (${probe.out || `exit ${probe.code}`}). Run it from a logged-in session, or run \`sluice-agent run\``,
    );

  const previous = existsSync(file.path) ? readFileSync(file.path, "utf8") : null;
  const changed = previous !== file.text;
  if (changed) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.text, { mode: 0o644 });
    opts.say(`${previous === null ? "wrote" : "updated"} ${file.path}`);
  }
  const active = isActive(platform, file.path);
  if (!changed && active && !(await runsOtherBinaries(opts.port))) {
    opts.say(`sluice-agent is already installed and running (${file.path})`);
    return;
  }
  if (platform === "linux") {
    must(systemctl.daemonReload);
    must(systemctl.enable);
    must(systemctl.restart);
    opts.say(`enabled and ${active ? "restarted" : "started"} ${UNIT} (systemctl --user)`);
    const linger = runTool([
      "loginctl",
      "show-user",
      env.USER ?? String(process.getuid?.()),
      "--property=Linger",
    ]);
    if (linger.out.trim() === "Linger=no")
      opts.say("it starts when you log in; to start it at boot as well: loginctl enable-linger");
  } else {
    if (active) must(ctl.bootout);
    runTool(ctl.enable);
    must(ctl.bootstrap);
    opts.say(`loaded ${LABEL} (launchctl bootstrap ${ctl.bootstrap[2]})`);
  }
  if (opts.waitMs > 0) await waitUntilUp(opts.port, opts.waitMs, opts.say);
}

async function waitUntilUp(port: number, waitMs: number, say: (line: string) => void): Promise<void> {
  const deadline = Date.now() + waitMs;
  let last: Awaited<ReturnType<typeof agentHealth>> = null;
  while (Date.now() < deadline) {
    last = await agentHealth(port);
    if (last?.status === 200 && !(await runsOtherBinaries(port))) {
      say(`sluice-agent is running on http://127.0.0.1:${port}; sluice on ${last.body.proxy?.url}`);
      return;
    }
    await Bun.sleep(250);
  }
  throw new ServiceError(
    last
      ? `the agent answers on port ${port} but sluice is ${last.body.proxy?.state ?? "not running"}: see \`sluice-agent logs\``
      : `the service started but nothing answers on http://127.0.0.1:${port} after ${waitMs / 1000} s: see \`sluice-agent logs\``,
  );
}

export async function uninstall(opts: { env?: Env; say: (line: string) => void }): Promise<void> {
  const platform = hostPlatform();
  if (!platform) throw new ServiceError(`no service manager support on ${process.platform}`);
  const env = opts.env ?? process.env;
  const path = platform === "linux" ? unitPath(env) : plistPath(env);
  const installed = existsSync(path);
  if (platform === "linux") {
    const r = runTool(systemctl.disableNow);
    if (installed && r.code !== 0 && r.code !== 127) opts.say(`note: ${r.out}`);
    rmSync(path, { force: true });
    runTool(systemctl.daemonReload);
    runTool(systemctl.resetFailed);
  } else {
    runTool(launchctl(process.getuid!(), path).bootout);
    rmSync(path, { force: true });
  }
  if (installed) opts.say(`stopped and removed ${path}`);
  const paths = agentPaths(env);
  const logs = dirname(paths.logFile);
  const written = [paths.childFile];
  if (existsSync(logs))
    for (const f of readdirSync(logs)) if (f.startsWith("sluice-agent.")) written.push(join(logs, f));
  const removed = written.filter((f) => existsSync(f));
  for (const f of removed) rmSync(f, { force: true });
  if (removed.length)
    opts.say(`removed the agent's log and state (${removed.length} files in ${paths.configDir})`);
  if (!installed && !removed.length) opts.say("sluice-agent is not installed: nothing to remove");
  opts.say(`kept sluice's configuration and data in ${paths.configDir}`);
}

export interface ServiceStatus {
  platform: Platform | null;
  file: string | null;
  installed: boolean;
  active: boolean;
  health: Awaited<ReturnType<typeof agentHealth>>;
}

export async function status(port: number, env: Env = process.env): Promise<ServiceStatus> {
  const platform = hostPlatform();
  const file = platform ? (platform === "linux" ? unitPath(env) : plistPath(env)) : null;
  const installed = !!file && existsSync(file);
  return {
    platform,
    file,
    installed,
    active: installed && !!platform && isActive(platform, file!),
    health: await agentHealth(port),
  };
}

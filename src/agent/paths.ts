/**
 * Where the agent finds and keeps things: the `sluice` binary installed beside it, its log, its
 * record of the process it runs, the device id (all under `{config_dir}`), and the service files.
 */
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { configDir } from "../config/files.ts";
import { STANDALONE } from "../core/build-info.ts";

type Env = Record<string, string | undefined>;

export interface AgentPaths {
  configDir: string;
  /** The agent's own log (rotated); `sluice-agent logs` reads it. */
  logFile: string;
  /** The supervised process (pid, binary) while it runs, to stop one left behind by a killed agent. */
  childFile: string;
  deviceIdFile: string;
}

export function agentPaths(env: Env = process.env): AgentPaths {
  const dir = configDir(env);
  return {
    configDir: dir,
    logFile: join(dir, "logs", "sluice-agent.log"),
    childFile: join(dir, "sluice-agent.child.json"),
    deviceIdFile: join(dir, "device-id"),
  };
}

export function home(env: Env = process.env): string {
  return env.HOME || homedir();
}

/**
 * The `sluice` binary beside an agent binary: `sluice-agent` → `sluice`,
 * `sluice-agent-<triple>` → `sluice-<triple>` (as in dist/).
 */
export function siblingSluice(agentPath: string): string {
  const name = basename(agentPath);
  const sibling = name.startsWith("sluice-agent") ? `sluice${name.slice("sluice-agent".length)}` : "sluice";
  return join(dirname(agentPath), sibling);
}

/**
 * The command that starts sluice: `--sluice PATH` when given, else the binary beside this one; run
 * from source (`bun src/agent/cli.ts`), sluice runs from source too.
 */
export function sluiceCommand(explicit?: string): { binary: string; command: string[] } {
  if (explicit) {
    const binary = resolve(explicit);
    return { binary, command: [binary] };
  }
  if (STANDALONE) {
    const binary = siblingSluice(process.execPath);
    return { binary, command: [binary] };
  }
  const cli = join(import.meta.dir, "..", "cli.ts");
  return { binary: process.execPath, command: [process.execPath, cli] };
}

/** The path of the running agent as a service file should name it. */
export function agentExecutable(): string[] {
  return STANDALONE ? [process.execPath] : [process.execPath, join(import.meta.dir, "cli.ts")];
}

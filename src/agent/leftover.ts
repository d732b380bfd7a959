/**
 * A sluice left behind by an agent that was killed outright (SIGKILL, a crash): the agent records the
 * process it runs in `childFile`; the next agent to start stops that process before starting its own,
 * so no orphan keeps the proxy's port. (Under systemd and launchd the service manager also stops what
 * remains of the service's processes when the agent dies.)
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";

export interface ChildRecord {
  agent_pid: number;
  pid: number;
  binary: string;
}

export function writeChildRecord(file: string, rec: ChildRecord): void {
  try {
    writeFileSync(file, `${JSON.stringify(rec)}\n`, { mode: 0o600 });
  } catch {
    /* best effort: the service manager still stops what a killed agent leaves */
  }
}

export function clearChildRecord(file: string): void {
  rmSync(file, { force: true });
}

function readChildRecord(file: string): ChildRecord | null {
  try {
    const r = JSON.parse(readFileSync(file, "utf8")) as ChildRecord;
    return Number.isInteger(r.pid) && Number.isInteger(r.agent_pid) && typeof r.binary === "string"
      ? r
      : null;
  } catch {
    return null;
  }
}

/** True while `pid` runs (a zombie, dead but not yet reaped by its new parent, does not count). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** The command line of a process (arguments joined by spaces), or null when it is gone. */
function commandLine(pid: number): string | null {
  if (process.platform === "linux") {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
    } catch {
      return null;
    }
  }
  const r = Bun.spawnSync(["ps", "-o", "command=", "-p", String(pid)], { stdout: "pipe", stderr: "ignore" });
  return r.exitCode === 0 ? r.stdout.toString().trim() : null;
}

export type Leftover =
  | { kind: "none" }
  | { kind: "agent-running"; pid: number }
  | { kind: "stopped"; pid: number; forced: boolean };

/**
 * Look at the record a previous agent left. Another agent still alive is reported (the caller
 * refuses to start a second one); its sluice, if the agent is gone, is stopped: SIGTERM, then SIGKILL
 * after `graceMs`. A pid that now belongs to some other program is left alone.
 */
export async function stopLeftover(file: string, graceMs: number): Promise<Leftover> {
  const rec = readChildRecord(file);
  if (!rec) return { kind: "none" };
  if (rec.agent_pid !== process.pid && alive(rec.agent_pid))
    return { kind: "agent-running", pid: rec.agent_pid };
  const cmd = alive(rec.pid) ? commandLine(rec.pid) : null;
  if (!cmd?.startsWith(rec.binary) || !/\bserve\b/.test(cmd)) {
    clearChildRecord(file);
    return { kind: "none" };
  }
  process.kill(rec.pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (alive(rec.pid) && Date.now() < deadline) await Bun.sleep(25);
  const forced = alive(rec.pid);
  if (forced) process.kill(rec.pid, "SIGKILL");
  clearChildRecord(file);
  return { kind: "stopped", pid: rec.pid, forced };
}

/**
 * Start the compiled `sluice-agent run` for a test: agent port 0, sluice on ports 0 with a test
 * config (temp SLUICE_HOME), short supervision timings so that restarts and hangs take a second,
 * and helpers to read `/health` and wait on what the agent logs.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { alive } from "../../src/agent/leftover.ts";
import { followOutput, writeTestConfig } from "../helpers/sluice.ts";

/** Timings for tests: a hang is noticed after 0.8 s, the first restart waits 200 ms. */
export const FAST = [
  "--health-interval",
  "100ms",
  "--hang-timeout",
  "800ms",
  "--start-timeout",
  "20s",
  "--backoff-initial",
  "200ms",
  "--backoff-max",
  "10s",
  "--kill-grace",
  "300ms",
  "--stop-timeout",
  "10s",
];

export interface AgentHealth {
  status: string;
  agent: { state: string; pid: number; port: number; device_id: string; build_id: string; version: string };
  proxy: {
    state: string;
    pid: number | null;
    url: string | null;
    build_id: string | null;
    version: string | null;
    started_at: string | null;
    restarts: number;
    recent_restarts: {
      at: string;
      reason: string;
      pid: number | null;
      signal: string | null;
      exit_code: number | null;
      backoff_ms: number;
    }[];
  };
  same_version: boolean | null;
}

/** The sluice the agent in `home` runs (or ran last), from its child record. */
export function childPid(home: string): number | null {
  try {
    return (JSON.parse(readFileSync(join(home, "sluice-agent.child.json"), "utf8")) as { pid: number }).pid;
  } catch {
    return null;
  }
}

export interface RunningAgent {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  home: string;
  readonly output: string;
  waitForOutput(re: RegExp, from?: number): Promise<RegExpMatchArray>;
  health(): Promise<{ status: number; body: AgentHealth }>;
  exited: Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Run `agent run --port 0 [FAST] [extra] -- --port 0 --dashboard-port 0` with SLUICE_HOME = home. */
export async function startAgent(
  agent: string,
  opts: { home?: string; extra?: string[]; env?: Record<string, string> } = {},
): Promise<RunningAgent> {
  const home = opts.home ?? writeTestConfig({});
  const proc = Bun.spawn(
    [
      agent,
      "run",
      "--port",
      "0",
      ...FAST,
      ...(opts.extra ?? []),
      "--",
      "--port",
      "0",
      "--dashboard-port",
      "0",
    ],
    {
      cwd: home,
      env: { ...(process.env as Record<string, string>), SLUICE_HOME: home, NO_COLOR: "1", ...opts.env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const followed = followOutput(proc);
  const m = await followed.waitForOutput(/sluice-agent: listening on (http:\/\/127\.0\.0\.1:\d+)/);
  const url = m[1]!;
  const health = async () => {
    const res = await fetch(`${url}/health`);
    return { status: res.status, body: (await res.json()) as AgentHealth };
  };
  return {
    proc,
    url,
    home,
    get output() {
      return followed.output;
    },
    waitForOutput: followed.waitForOutput,
    health,
    exited: followed.exited,
    async [Symbol.asyncDispose]() {
      // As a service manager stops it: SIGTERM (the agent stops its sluice), SIGKILL if it hangs.
      const child = childPid(home);
      if (proc.exitCode === null) {
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
        await followed.exited;
        clearTimeout(timer);
      }
      // A test that killed the agent outright must not leave its sluice running.
      for (const pid of [child, childPid(home)]) if (pid && alive(pid)) process.kill(pid, "SIGKILL");
    },
  };
}

#!/usr/bin/env bun
/**
 * `sluice-agent`: keeps sluice running. `run` supervises `sluice serve` in the foreground (what the
 * service files start); `install`, `uninstall`, `status` and `logs` manage it as a per-user service
 * (systemd on Linux, launchd on macOS); `version` prints the build identity. Commands are loaded on
 * demand, so `version` and `status` start without the supervisor.
 */
import { defineCommand, runMain } from "citty";
import { portFlag } from "../cli/_flags.ts";
import { GIT_COMMIT, STANDALONE, VERSION } from "../core/build-info.ts";
import { DEFAULT_TIMINGS, type SupervisorTimings } from "./supervisor.ts";

const DEFAULT_PORT = 8070;

function failer(command: string) {
  return (msg: string): never => {
    process.stderr.write(`sluice-agent ${command}: ${msg}\n`);
    process.exit(2);
  };
}

/** `500ms`, `2s`, `1m` or a plain number of milliseconds. */
function duration(fail: (m: string) => never, name: string, v: string | undefined, dflt: number): number {
  if (v === undefined || v === "") return dflt;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(v.trim());
  const ms = m ? Number(m[1]) * (m[2] === "m" ? 60_000 : m[2] === "s" ? 1000 : 1) : Number.NaN;
  if (!Number.isFinite(ms) || ms < 1 || ms > 24 * 3600_000)
    fail(`--${name} = ${JSON.stringify(v)} is invalid: a duration such as 500ms, 2s or 1m (1 ms to 24 h)`);
  return Math.round(ms);
}

const TIMING_FLAGS = {
  "health-interval": ["healthIntervalMs", "time between /health polls; a poll unanswered this long fails"],
  "hang-timeout": ["hangTimeoutMs", "no good /health answer for this long: sluice is hung and restarted"],
  "start-timeout": ["startTimeoutMs", "time a new sluice has to answer /health"],
  "backoff-initial": ["backoffInitialMs", "first wait before a restart; doubles with each failure in a row"],
  "backoff-max": ["backoffMaxMs", "longest wait; a run healthy this long resets the backoff"],
  "kill-grace": ["killGraceMs", "a hung sluice gets SIGTERM, then SIGKILL after this"],
  "stop-timeout": ["stopTimeoutMs", "on stop, SIGKILL sluice if it has not exited after this"],
} as const satisfies Record<string, readonly [keyof SupervisorTimings, string]>;

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

const run = defineCommand({
  meta: {
    name: "run",
    description:
      "Run in the foreground: serve 127.0.0.1:8070 and keep `sluice serve` running (args after -- go to serve)",
  },
  args: {
    port: { type: "string", description: `Agent port (default ${DEFAULT_PORT}; 0 = any free port)` },
    sluice: { type: "string", description: "The sluice binary to run (default: the one beside this agent)" },
    quiet: { type: "boolean", default: false, description: "Log to the log file only, not stderr" },
    ...(Object.fromEntries(
      Object.entries(TIMING_FLAGS).map(([flag, [key, text]]) => [
        flag,
        { type: "string", description: `${text} (default ${seconds(DEFAULT_TIMINGS[key])})` },
      ]),
    ) as Record<keyof typeof TIMING_FLAGS, { type: "string"; description: string }>),
  },
  async run({ args, rawArgs }) {
    const fail = failer("run");
    const dd = rawArgs.indexOf("--");
    const stray = (args._ ?? []).length - (dd === -1 ? 0 : rawArgs.length - dd - 1);
    if (stray > 0)
      fail(`unexpected argument ${JSON.stringify(args._[0])} (arguments for sluice serve go after --)`);
    const timings = { ...DEFAULT_TIMINGS };
    for (const [flag, [key]] of Object.entries(TIMING_FLAGS))
      timings[key] = duration(
        fail,
        flag,
        (args as Record<string, string | undefined>)[flag],
        DEFAULT_TIMINGS[key],
      );
    const { runAgent } = await import("./run.ts");
    const code = await runAgent({
      port: portFlag(fail, "port", args.port) ?? DEFAULT_PORT,
      sluice: args.sluice,
      serveArgs: dd === -1 ? [] : rawArgs.slice(dd + 1),
      timings,
      quiet: args.quiet,
    });
    process.exit(code);
  },
});

const main = defineCommand({
  meta: {
    name: "sluice-agent",
    version: STANDALONE ? `${VERSION} (${GIT_COMMIT})` : "dev (from source)",
    description: "Keeps the sluice proxy running: a supervisor on 127.0.0.1:8070 and a per-user service",
  },
  subCommands: {
    run,
    version: defineCommand({
      meta: { name: "version", description: "Print version and build identity (JSON)" },
      async run() {
        const { buildInfo } = await import("../core/build-info.ts");
        console.log(JSON.stringify(buildInfo(), null, 2));
      },
    }),
  },
});

if (import.meta.main) await runMain(main);

#!/usr/bin/env bun
/**
 * `sluice-agent`: keeps sluice running. `run` supervises `sluice serve` in the foreground (what the
 * service files start); `install`, `uninstall`, `status` and `logs` manage it as a per-user service
 * (systemd on Linux, launchd on macOS); `version` prints the build identity. Commands are loaded on
 * demand, so `version` and `status` start without the supervisor.
 */
import { defineCommand, runMain } from "citty";
import { type Fail, portFlag } from "../cli/_flags.ts";
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
    const fail: Fail = failer("run");
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

const portArg = {
  type: "string",
  description: `Agent port (default ${DEFAULT_PORT})`,
} as const;

const installCmd = defineCommand({
  meta: {
    name: "install",
    description: "Run the agent as your own service (systemd user unit / launchd LaunchAgent); no root",
  },
  args: {
    port: portArg,
    print: { type: "boolean", default: false, description: "Print the service file and change nothing" },
    platform: {
      type: "string",
      description: "With --print: the file for linux or darwin (default: this machine)",
    },
    wait: {
      type: "string",
      description: "How long to wait for the agent to answer after starting it (default 20s; 0 = no wait)",
    },
  },
  async run({ args }) {
    const fail: Fail = failer("install");
    const svc = await import("./service.ts");
    const port = portFlag(fail, "port", args.port) ?? DEFAULT_PORT;
    if (port === 0) fail("--port 0 cannot be installed: a service needs a known port");
    const platform = args.platform ?? svc.hostPlatform();
    if (platform !== "linux" && platform !== "darwin")
      fail(`no service file for ${JSON.stringify(platform ?? process.platform)}: linux or darwin`);
    if (args.print) {
      process.stdout.write(svc.serviceFile(platform, port).text);
      return;
    }
    if (platform !== svc.hostPlatform())
      fail(`--platform ${platform} only goes with --print on this machine`);
    const waitMs = args.wait === "0" ? 0 : duration(fail, "wait", args.wait, 20_000);
    await svc.install({ port, waitMs, say: (l) => console.log(l) }).catch((e) => fail((e as Error).message));
  },
});

const uninstallCmd = defineCommand({
  meta: { name: "uninstall", description: "Stop the service and remove what install and the agent wrote" },
  async run() {
    const svc = await import("./service.ts");
    await svc
      .uninstall({ say: (l) => console.log(l) })
      .catch((e) => failer("uninstall")((e as Error).message));
  },
});

const statusCmd = defineCommand({
  meta: {
    name: "status",
    description: "Service state and the agent's /health; exit 0 running, 1 sluice down, 3 agent not running",
  },
  args: { port: portArg, json: { type: "boolean", default: false, description: "Print JSON" } },
  async run({ args }) {
    const port = portFlag(failer("status"), "port", args.port) ?? DEFAULT_PORT;
    const s = await (await import("./service.ts")).status(port);
    const code = !s.health ? 3 : s.health.status === 200 ? 0 : 1;
    if (args.json) console.log(JSON.stringify({ ...s, health: s.health?.body ?? null }, null, 2));
    else {
      const manager = s.platform === "linux" ? "systemctl --user" : "launchctl";
      console.log(
        `service: ${s.installed ? `installed (${s.file}), ${s.active ? "active" : "not active"} (${manager})` : "not installed"}`,
      );
      const h = s.health?.body as
        | { agent: { pid: number; version: string; uptime_s: number }; proxy: Record<string, unknown> }
        | undefined;
      if (!h) console.log(`agent:   not answering on http://127.0.0.1:${port}`);
      else {
        const p = h.proxy as {
          state: string;
          url: string | null;
          pid: number | null;
          build_id: string | null;
        };
        const r = h.proxy as { restarts: number; recent_restarts: { at: string; reason: string }[] };
        console.log(
          `agent:   running on http://127.0.0.1:${port}, pid ${h.agent.pid}, ${h.agent.version}, up ${h.agent.uptime_s} s`,
        );
        console.log(
          `sluice:  ${p.state}${p.url ? ` on ${p.url}` : ""}${p.pid ? `, pid ${p.pid}` : ""}, ${p.build_id}`,
        );
        const last = r.recent_restarts.at(-1);
        console.log(`restarts: ${r.restarts}${last ? ` (last ${last.at}: ${last.reason})` : ""}`);
      }
    }
    process.exit(code);
  },
});

const logsCmd = defineCommand({
  meta: {
    name: "logs",
    description: "Print the agent's log (starts, restarts and their reasons, sluice's output)",
  },
  args: {
    lines: { type: "string", alias: "n", description: "How many of the last lines (default 50)" },
    follow: { type: "boolean", alias: "f", default: false, description: "Keep printing new lines" },
  },
  async run({ args }) {
    const fail: Fail = failer("logs");
    const n = args.lines === undefined ? 50 : Number(args.lines);
    if (!Number.isInteger(n) || n < 0)
      fail(`--lines = ${JSON.stringify(args.lines)} is invalid: a whole number`);
    const { agentPaths } = await import("./paths.ts");
    const { existsSync, statSync } = await import("node:fs");
    const { lastLines, follow } = await import("./logs.ts");
    const file = agentPaths().logFile;
    if (!existsSync(file) && !args.follow) fail(`no log yet at ${file}: the agent has not run as this user`);
    if (existsSync(file)) for (const l of lastLines(file, n)) console.log(l);
    if (args.follow)
      await follow(file, existsSync(file) ? statSync(file).size : 0, (s) => process.stdout.write(s));
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
    install: installCmd,
    uninstall: uninstallCmd,
    status: statusCmd,
    logs: logsCmd,
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

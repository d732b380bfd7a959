/**
 * `sluice-agent run`: the agent in the foreground, as the service files start it. It stops a sluice
 * that a killed agent left behind, starts the endpoints on 127.0.0.1, supervises `sluice serve`, and
 * turns SIGTERM/SIGINT into a clean stop of both (exit 0) and SIGHUP into a reload of sluice.
 */
import { BUILT_AT, buildId, GIT_COMMIT, VERSION } from "../core/build-info.ts";
import { Logger } from "../core/log.ts";
import { deviceId } from "./device.ts";
import { stopLeftover } from "./leftover.ts";
import { agentPaths, sluiceCommand } from "./paths.ts";
import { startAgentServer } from "./server.ts";
import { Supervisor, type SupervisorTimings } from "./supervisor.ts";

export interface RunOptions {
  port: number;
  /** `--sluice PATH`: the binary to supervise instead of the one beside the agent. */
  sluice?: string;
  serveArgs: string[];
  timings: SupervisorTimings;
  /** Log to the log file only, not stderr (launchd keeps stderr for what escapes the log). */
  quiet: boolean;
}

/** Runs until SIGTERM/SIGINT; resolves with the exit code. */
export async function runAgent(opts: RunOptions): Promise<number> {
  const paths = agentPaths();
  const log = new Logger({ level: "info", file: paths.logFile, stderr: !opts.quiet });
  const { binary, command } = sluiceCommand(opts.sluice);

  const leftover = await stopLeftover(paths.childFile, opts.timings.killGraceMs);
  if (leftover.kind === "agent-running") {
    log.error(`another sluice-agent is running (pid ${leftover.pid}); stop it first (sluice-agent status)`);
    return 1;
  }
  if (leftover.kind === "stopped")
    log.warn("stopped a sluice left behind by an agent that did not exit cleanly", {
      pid: leftover.pid,
      forced: leftover.forced,
    });

  const device = deviceId(paths.deviceIdFile);
  const supervisor = new Supervisor({
    command,
    serveArgs: opts.serveArgs,
    binary,
    timings: opts.timings,
    log,
    childFile: paths.childFile,
  });
  const startedAt = new Date();
  let stopping = false;
  const health = () => agentHealth(supervisor, { stopping, port: server.port, device, startedAt });

  let server: ReturnType<typeof startAgentServer>;
  try {
    server = startAgentServer({ port: opts.port, health });
  } catch (e) {
    const msg = (e as Error).message;
    log.error(
      /EADDRINUSE|in use/i.test(msg)
        ? `cannot listen on 127.0.0.1:${opts.port}: the port is in use (another sluice-agent? use --port)`
        : `cannot listen on 127.0.0.1:${opts.port}: ${msg}`,
    );
    return 1;
  }
  log.info(`sluice-agent ${VERSION} listening on http://127.0.0.1:${server.port}`, {
    pid: process.pid,
    device_id: device,
    supervising: binary,
  });
  // The line tests and scripts wait for, on stdout like sluice's own "listening" line.
  console.log(`sluice-agent: listening on http://127.0.0.1:${server.port}`);

  const done = Promise.withResolvers<number>();
  const stop = async (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    log.info(`${why}: stopping sluice`);
    await supervisor.stop("SIGTERM");
    await server.stop(true);
    log.info("sluice-agent stopped");
    done.resolve(code);
  };
  const unhandle = handleSignals(
    stop,
    () => {
      log.info("SIGHUP: passing it on to sluice (reload)");
      supervisor.hup();
    },
    log,
  );
  supervisor.start();
  const code = await done.promise;
  unhandle();
  return code;
}

/** `/health`: the agent itself, the sluice it supervises, and whether both are of one release. */
function agentHealth(
  supervisor: Supervisor,
  a: { stopping: boolean; port: number | undefined; device: string; startedAt: Date },
) {
  const proxy = supervisor.snapshot();
  const ok = proxy.state === "running";
  return {
    ok,
    body: {
      status: ok ? "ok" : "degraded",
      agent: {
        state: a.stopping ? "stopping" : "running",
        pid: process.pid,
        port: a.port,
        device_id: a.device,
        build_id: buildId(),
        version: VERSION,
        commit: GIT_COMMIT,
        built_at: BUILT_AT,
        started_at: a.startedAt.toISOString(),
        uptime_s: Math.round((Date.now() - a.startedAt.getTime()) / 100) / 10,
      },
      proxy,
      // Both binaries come from one release: a different version shows a half-done upgrade.
      same_version: proxy.version === null ? null : proxy.version === VERSION,
    },
  };
}

/**
 * SIGTERM and SIGINT stop the agent, SIGHUP goes on to sluice (a reload), an uncaught fault stops it
 * with exit code 1. Returns what takes the signal handlers off again.
 */
function handleSignals(stop: (why: string, code: number) => Promise<void>, hup: () => void, log: Logger) {
  const onTerm = () => void stop("SIGTERM", 0);
  const onInt = () => void stop("SIGINT", 0);
  const onFatal = (e: unknown) => {
    log.error(`sluice-agent failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    void stop("error", 1);
  };
  process.on("SIGTERM", onTerm);
  process.on("SIGINT", onInt);
  process.on("SIGHUP", hup);
  process.on("uncaughtException", onFatal);
  process.on("unhandledRejection", onFatal);
  return () => {
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onInt);
    process.off("SIGHUP", hup);
  };
}

/**
 * Keeps `sluice serve` running: starts it, learns its proxy address from its "proxy listening on"
 * line, polls that address's `/health`, and restarts it with exponential backoff when it exits or
 * stops answering (a hang: SIGTERM, then SIGKILL after a grace period). Each restart is recorded with
 * its reason. `stop()` forwards SIGTERM and waits for the exit (SIGKILL past the stop timeout), so
 * the agent never exits leaving its sluice behind; `hup()` forwards SIGHUP (sluice reloads its
 * configuration), or starts sluice at once when it is waiting out a backoff.
 */
import type { Subprocess } from "bun";
import { buildIdOf } from "../core/build-info.ts";
import type { Logger } from "../core/log.ts";
import { backoffDelay } from "./backoff.ts";
import { clearChildRecord, writeChildRecord } from "./leftover.ts";

export interface SupervisorTimings {
  /** Time between two `/health` polls; a poll unanswered for this long failed. */
  healthIntervalMs: number;
  /** No good `/health` answer for this long after the last one: sluice is hung. */
  hangTimeoutMs: number;
  /** From start to the first good `/health` answer. */
  startTimeoutMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** A hung sluice gets SIGTERM, then SIGKILL after this. */
  killGraceMs: number;
  /** On stop, SIGKILL after this if sluice has not exited (above sluice's own drain timeout). */
  stopTimeoutMs: number;
}

export const DEFAULT_TIMINGS: SupervisorTimings = {
  healthIntervalMs: 2_000,
  hangTimeoutMs: 15_000,
  startTimeoutMs: 60_000,
  backoffInitialMs: 1_000,
  backoffMaxMs: 60_000,
  killGraceMs: 5_000,
  stopTimeoutMs: 40_000,
};

export interface SupervisorOptions {
  /** The command to run, without `serve` and its arguments. */
  command: string[];
  /** Arguments after `serve`. */
  serveArgs: string[];
  /** The executable whose build_id is reported (the sluice binary). */
  binary: string;
  env?: Record<string, string | undefined>;
  timings: SupervisorTimings;
  log: Logger;
  /** Where the running child is recorded (see leftover.ts); null: nowhere. */
  childFile: string | null;
}

export type ProxyState = "starting" | "running" | "unresponsive" | "backoff" | "stopping" | "stopped";

export interface RestartRecord {
  at: string;
  reason: string;
  pid: number | null;
  exit_code: number | null;
  signal: string | null;
  /** How long that run lasted. */
  uptime_s: number;
  /** The wait before the next start. */
  backoff_ms: number;
}

const KEEP_RESTARTS = 20;
const KEEP_STDERR_LINES = 5;
const MAX_LINE = 64 * 1024;
const LISTENING = /proxy listening on (http:\/\/[^\s]+)/;

/** Calls `fn` with each line of a text stream (a line longer than MAX_LINE is cut). */
async function eachLine(stream: ReadableStream<Uint8Array>, fn: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of stream) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = parts.pop()!.slice(0, MAX_LINE);
    for (const l of parts) fn(l.replace(/\r$/, "").slice(0, MAX_LINE));
  }
  if (rest) fn(rest);
}

function describeExit(code: number | null, signal: string | null, stderrTail: string[]): string {
  const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
  const last = stderrTail.at(-1);
  return last ? `${how}: ${last}` : how;
}

export class Supervisor {
  #child: Subprocess<"ignore", "pipe", "pipe"> | null = null;
  #state: ProxyState = "stopped";
  #url: string | null = null;
  #startedAt = 0;
  #lastHealthyAt = 0;
  #failures = 0;
  #restarts: RestartRecord[] = [];
  #restartCount = 0;
  #hangReason: string | null = null;
  #stderrTail: string[] = [];
  #buildId: string | null = null;
  #proxyVersion: string | null = null;
  #poll: Timer | null = null;
  #polling = false;
  #backoffTimer: Timer | null = null;
  #nextStartAt: number | null = null;
  #stopping = false;
  #stopped: Promise<void> | null = null;

  constructor(readonly opts: SupervisorOptions) {}

  start(): void {
    this.#spawn();
  }

  #spawn(): void {
    this.#backoffTimer = null;
    this.#nextStartAt = null;
    if (this.#stopping) return;
    const { opts } = this;
    this.#url = null;
    this.#lastHealthyAt = 0;
    this.#hangReason = null;
    this.#stderrTail = [];
    this.#proxyVersion = null;
    this.#startedAt = Date.now();
    this.#buildId = buildIdOf(opts.binary);
    let child: Subprocess<"ignore", "pipe", "pipe">;
    try {
      child = Bun.spawn([...opts.command, "serve", ...opts.serveArgs], {
        env: opts.env,
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
    } catch (e) {
      this.#scheduleRestart(
        null,
        `cannot start ${opts.command.join(" ")}: ${(e as Error).message}`,
        null,
        null,
      );
      return;
    }
    this.#child = child;
    this.#state = "starting";
    opts.log.info(`started sluice`, { pid: child.pid, binary: opts.binary, build_id: this.#buildId });
    if (opts.childFile)
      writeChildRecord(opts.childFile, { agent_pid: process.pid, pid: child.pid, binary: opts.command[0]! });
    const out = eachLine(child.stdout, (line) => {
      opts.log.info(`sluice: ${line}`);
      const m = LISTENING.exec(line);
      if (m && child === this.#child) {
        this.#url = m[1]!;
        void this.#check();
      }
    });
    const err = eachLine(child.stderr, (line) => {
      opts.log.info(`sluice: ${line}`);
      if (!line.trim()) return;
      this.#stderrTail.push(line);
      if (this.#stderrTail.length > KEEP_STDERR_LINES) this.#stderrTail.shift();
    });
    const streams = Promise.all([out, err]).catch(() => {});
    this.#poll = setInterval(() => void this.#check(), opts.timings.healthIntervalMs);
    // The exit is handled once both streams are read, so its reason can quote the last stderr line.
    void child.exited.then(async () => {
      await streams;
      this.#onExit(child);
    });
  }

  async #check(): Promise<void> {
    const child = this.#child;
    if (!child || this.#polling || this.#stopping || this.#hangReason) return;
    this.#polling = true;
    let ok = false;
    try {
      if (this.#url) {
        const res = await fetch(`${this.#url}/health`, {
          signal: AbortSignal.timeout(this.opts.timings.healthIntervalMs),
        });
        const body = (await res.json().catch(() => null)) as { version?: unknown } | null;
        ok = res.ok;
        if (ok && typeof body?.version === "string") this.#proxyVersion = body.version;
      }
    } catch {
      ok = false;
    } finally {
      this.#polling = false;
    }
    if (child !== this.#child || this.#stopping) return;
    const t = this.opts.timings;
    const now = Date.now();
    if (ok) {
      if (this.#state !== "running")
        this.opts.log.info(`sluice is ${this.#state === "starting" ? "up" : "answering again"}`, {
          pid: child.pid,
          url: this.#url,
        });
      this.#lastHealthyAt = now;
      this.#state = "running";
      return;
    }
    if (this.#state === "running") {
      this.#state = "unresponsive";
      this.opts.log.warn("sluice stopped answering /health", { pid: child.pid, url: this.#url });
    }
    const since = this.#lastHealthyAt || this.#startedAt;
    const limit = this.#lastHealthyAt ? t.hangTimeoutMs : t.startTimeoutMs;
    if (now - since < limit) return;
    this.#hangReason = this.#lastHealthyAt
      ? `stopped answering /health for ${Math.round((now - since) / 1000)} s`
      : `did not answer /health within ${Math.round(limit / 1000)} s of starting`;
    this.opts.log.warn(`sluice ${this.#hangReason}: stopping it`, { pid: child.pid });
    child.kill("SIGTERM");
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }, t.killGraceMs).unref();
  }

  #onExit(child: Subprocess<"ignore", "pipe", "pipe">): void {
    if (child !== this.#child) return;
    this.#child = null;
    if (this.#poll) clearInterval(this.#poll);
    this.#poll = null;
    if (this.#stopping) {
      this.#state = "stopped";
      return;
    }
    const signal = child.signalCode === null ? null : String(child.signalCode);
    const code = signal ? null : child.exitCode;
    const reason = this.#hangReason ?? describeExit(code, signal, this.#stderrTail);
    this.#scheduleRestart(child.pid, reason, code, signal);
  }

  #scheduleRestart(pid: number | null, reason: string, code: number | null, signal: string | null): void {
    const t = this.opts.timings;
    const now = Date.now();
    const uptime = this.#startedAt ? now - this.#startedAt : 0;
    // A run that stayed healthy for backoff-max ends the streak of failures.
    if (this.#lastHealthyAt && uptime >= t.backoffMaxMs) this.#failures = 0;
    this.#failures++;
    const delay = backoffDelay(this.#failures, { initialMs: t.backoffInitialMs, maxMs: t.backoffMaxMs });
    this.#restartCount++;
    this.#restarts.push({
      at: new Date(now).toISOString(),
      reason,
      pid,
      exit_code: code,
      signal,
      uptime_s: Math.round(uptime / 100) / 10,
      backoff_ms: delay,
    });
    if (this.#restarts.length > KEEP_RESTARTS) this.#restarts.shift();
    this.opts.log.warn(`sluice ${reason}; restarting in ${delay} ms`, {
      pid,
      restart: this.#restartCount,
      failures_in_a_row: this.#failures,
    });
    this.#state = "backoff";
    this.#url = null;
    this.#nextStartAt = now + delay;
    this.#backoffTimer = setTimeout(() => this.#spawn(), delay);
  }

  /** SIGHUP: sluice reloads its configuration; while waiting out a backoff, start it now. */
  hup(): void {
    if (this.#stopping) return;
    if (this.#backoffTimer) {
      clearTimeout(this.#backoffTimer);
      this.opts.log.info("SIGHUP: starting sluice now instead of waiting out the backoff");
      this.#spawn();
      return;
    }
    this.#child?.kill("SIGHUP");
  }

  /** Forward `signal` (SIGTERM) and wait for sluice to exit; SIGKILL after the stop timeout. */
  stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.#stopped) return this.#stopped;
    this.#stopping = true;
    if (this.#backoffTimer) clearTimeout(this.#backoffTimer);
    if (this.#poll) clearInterval(this.#poll);
    const child = this.#child;
    this.#stopped = (async () => {
      if (child) {
        this.#state = "stopping";
        child.kill(signal);
        const timeout = setTimeout(() => {
          this.opts.log.warn(`sluice did not exit within ${this.opts.timings.stopTimeoutMs} ms: SIGKILL`, {
            pid: child.pid,
          });
          child.kill("SIGKILL");
        }, this.opts.timings.stopTimeoutMs);
        await child.exited;
        clearTimeout(timeout);
        this.opts.log.info("sluice stopped", {
          pid: child.pid,
          code: child.exitCode,
          signal: child.signalCode,
        });
      }
      this.#child = null;
      this.#state = "stopped";
      if (this.opts.childFile) clearChildRecord(this.opts.childFile);
    })();
    return this.#stopped;
  }

  get state(): ProxyState {
    return this.#state;
  }

  /** The proxy's part of the agent's `/health`. */
  snapshot() {
    const now = Date.now();
    const running = this.#child !== null;
    return {
      state: this.#state,
      pid: this.#child?.pid ?? null,
      url: this.#url,
      binary: this.opts.binary,
      build_id: this.#buildId,
      version: this.#proxyVersion,
      started_at: running ? new Date(this.#startedAt).toISOString() : null,
      uptime_s: running ? Math.round((now - this.#startedAt) / 100) / 10 : null,
      last_healthy_at: this.#lastHealthyAt ? new Date(this.#lastHealthyAt).toISOString() : null,
      restarts: this.#restartCount,
      failures_in_a_row: this.#failures,
      next_start_at: this.#nextStartAt ? new Date(this.#nextStartAt).toISOString() : null,
      recent_restarts: [...this.#restarts],
    };
  }
}

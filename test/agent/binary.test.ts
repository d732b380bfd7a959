/**
 * The compiled `sluice-agent` supervising the compiled `sluice` (both from test/helpers/binaries.ts):
 * its two endpoints on loopback and their build ids, a sluice killed with SIGKILL or hung (SIGSTOP:
 * it stops answering /health) brought back after the backoff with the restart recorded, SIGHUP passed
 * on, SIGTERM stopping both with no orphan, and a sluice left behind by a killed agent stopped by the
 * next one.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { networkInterfaces } from "node:os";
import { alive } from "../../src/agent/leftover.ts";
import { sha256File } from "../../src/core/build-info.ts";
import { type HostBinaries, hostBinaries, TEST_IDENTITY } from "../helpers/binaries.ts";
import { childPid, type RunningAgent, startAgent } from "./_agent.ts";

// Compiled binaries started and hashed on a busy two-core machine take seconds, not milliseconds.
setDefaultTimeout(60_000);

let bins: HostBinaries;
beforeAll(async () => {
  bins = await hostBinaries();
}, 120_000);

/** Wait for the agent to log that sluice is up again after `from`; returns the new /health. */
async function upAgain(a: RunningAgent, from: number) {
  await a.waitForOutput(/sluice is (up|answering again)/, from);
  return (await a.health()).body;
}

describe("one agent, one sluice, from start to SIGTERM", () => {
  let a: RunningAgent;
  beforeAll(async () => {
    a = await startAgent(bins.agent);
    await a.waitForOutput(/sluice is up/);
  }, 60_000);

  test("serves /health and /api/v1/build on loopback; build ids are the files' SHA-256", async () => {
    const h = await a.health();
    expect(h.status).toBe(200);
    expect(h.body.status).toBe("ok");
    expect(h.body.agent.build_id).toBe(`sha256:${sha256File(bins.agent)}`);
    expect(h.body.agent.version).toBe(TEST_IDENTITY.version);
    expect(h.body.agent.device_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(h.body.proxy.state).toBe("running");
    expect(h.body.proxy.build_id).toBe(`sha256:${sha256File(bins.sluice)}`);
    expect(h.body.proxy.version).toBe(TEST_IDENTITY.version);
    expect(h.body.same_version).toBe(true);
    expect(h.body.proxy.restarts).toBe(0);
    expect(alive(h.body.proxy.pid!)).toBe(true);
    // The sluice it runs answers on its own port.
    expect((await fetch(`${h.body.proxy.url}/health`)).status).toBe(200);

    const build = await fetch(`${a.url}/api/v1/build`);
    expect(build.status).toBe(200);
    expect(await build.json()).toEqual({
      build_id: `sha256:${sha256File(bins.agent)}`,
      version: TEST_IDENTITY.version,
      commit: TEST_IDENTITY.commit,
      built_at: TEST_IDENTITY.builtAt,
      standalone: true,
    });
    expect(a.url).toStartWith("http://127.0.0.1:");
  });

  test("refuses a non-loopback Host, other methods and paths; is not reachable on other addresses", async () => {
    const port = new URL(a.url).port;
    const rebinding = await fetch(`${a.url}/health`, { headers: { host: `evil.example:${port}` } });
    expect(rebinding.status).toBe(403);
    expect(((await rebinding.json()) as { error: { code: string } }).error.code).toBe("forbidden_host");
    expect((await fetch(`${a.url}/health`, { method: "POST" })).status).toBe(405);
    expect((await fetch(`${a.url}/nope`)).status).toBe(404);
    expect(rebinding.headers.get("access-control-allow-origin")).toBeNull();
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === "IPv4" && !i.internal);
    if (external) await expect(fetch(`http://${external.address}:${port}/health`)).rejects.toThrow();
  });

  test("sluice killed with SIGKILL comes back after the backoff; the restart is recorded", async () => {
    const before = (await a.health()).body.proxy;
    const from = a.output.length;
    process.kill(before.pid!, "SIGKILL");
    const after = (await upAgain(a, from)).proxy;
    expect(after.state).toBe("running");
    expect(after.pid).not.toBe(before.pid);
    expect(after.restarts).toBe(1);
    const r = after.recent_restarts.at(-1)!;
    expect(r).toMatchObject({ pid: before.pid, signal: "SIGKILL", exit_code: null, backoff_ms: 200 });
    expect(r.reason).toBe("was killed by SIGKILL");
    // Started again once the backoff was over, not later than a start takes.
    const waited = Date.parse(after.started_at!) - Date.parse(r.at);
    expect(waited).toBeGreaterThanOrEqual(190);
    expect(waited).toBeLessThan(5_000);
    expect(a.output).toContain("was killed by SIGKILL; restarting in 200 ms");
  });

  test("a hung sluice (no /health answer) is stopped and restarted, with a doubled backoff", async () => {
    const before = (await a.health()).body.proxy;
    const from = a.output.length;
    process.kill(before.pid!, "SIGSTOP");
    await a.waitForOutput(/sluice stopped answering \/health/, from);
    const after = (await upAgain(a, from)).proxy;
    expect(after.pid).not.toBe(before.pid);
    expect(alive(before.pid!)).toBe(false);
    expect(after.restarts).toBe(2);
    const r = after.recent_restarts.at(-1)!;
    expect(r.pid).toBe(before.pid);
    expect(r.reason).toMatch(/^stopped answering \/health for \d+ s$/);
    // The run before lasted less than --backoff-max: a failure in a row, so the wait doubled.
    expect(r.backoff_ms).toBe(400);
  });

  test("SIGHUP reaches sluice, which reloads its configuration", async () => {
    const from = a.output.length;
    a.proc.kill("SIGHUP");
    await a.waitForOutput(/sluice: .*config reloaded \(sighup\)/, from);
    expect((await a.health()).body.proxy.restarts).toBe(2);
  });

  test("SIGTERM stops sluice, then the agent (exit 0), and leaves no process behind", async () => {
    const pid = (await a.health()).body.proxy.pid!;
    a.proc.kill("SIGTERM");
    expect(await a.exited).toBe(0);
    expect(alive(pid)).toBe(false);
    expect(childPid(a.home)).toBeNull();
    expect(a.output).toContain("sluice-agent stopped");
  });
});

test("a sluice left behind by an agent killed with SIGKILL is stopped by the next agent", async () => {
  const first = await startAgent(bins.agent);
  await first.waitForOutput(/sluice is up/);
  const orphan = (await first.health()).body.proxy.pid!;
  first.proc.kill("SIGKILL");
  await first.exited;
  expect(alive(orphan)).toBe(true);
  await using second = await startAgent(bins.agent, { home: first.home });
  const m = await second.waitForOutput(/stopped a sluice left behind .*pid=(\d+)/);
  expect(Number(m[1])).toBe(orphan);
  expect(alive(orphan)).toBe(false);
  await second.waitForOutput(/sluice is up/);
  expect((await second.health()).body.proxy.pid).not.toBe(orphan);
});

test("a sluice binary that cannot start is retried with backoff and reported", async () => {
  await using a = await startAgent(bins.agent, { extra: ["--sluice", "/nonexistent/sluice"] });
  await a.waitForOutput(/restarting in 400 ms/);
  const h = await a.health();
  expect(h.status).toBe(503);
  expect(h.body.status).toBe("degraded");
  expect(h.body.proxy.state).toMatch(/backoff|starting/);
  expect(h.body.proxy.recent_restarts[0]!.reason).toContain("cannot start /nonexistent/sluice");
});

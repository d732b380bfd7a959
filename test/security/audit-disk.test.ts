/**
 * Attack (or accident): fill the disk the audit trail is written to. Requests must still be served,
 * and the loss must be loud: the application log says so (once, not once per request), `/metrics`
 * and `/api/v1/status` count it, the dashboard's Overview shows it, and lines still pending at
 * shutdown are written if the disk has room again, else reported with their count. A full disk is
 * `audit.jsonl` pointing at /dev/full (every write fails with ENOSPC), which any Linux has.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Logger } from "../../src/core/log.ts";
import { AUDIT_FILE, AuditLog } from "../../src/store/audit-log.ts";
import { spawnSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";
import { launchBrowser } from "../web/browser.ts";

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg_audit" }));
});
afterAll(() => up?.stop());

/** An audit directory whose file sits on a full disk. Remove `file` to give the disk room again. */
function fullAuditDir(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "sluice-audit-full-"));
  const file = join(dir, AUDIT_FILE);
  symlinkSync("/dev/full", file);
  return { dir, file };
}

const send = (proxyUrl: string, n: number) =>
  fetch(`${proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k" },
    body: JSON.stringify({ model: "m", max_tokens: 1, messages: [{ role: "user", content: `turn ${n}` }] }),
  });

type Audit = {
  written: number;
  pending: number;
  dropped: number;
  errors: number;
  last_error: string | null;
  failing_since: string | null;
};

test("a full audit disk: requests served, one log line, counted in /metrics and /status, shown on the Overview; recovery writes the backlog", async () => {
  const disk = fullAuditDir();
  await using s = await startSluice({ upstream: up.url, config: { logging: { dir: disk.dir } } });
  const lines: string[] = [];
  s.runtime.log.follow((l) => lines.push(l));
  const status = async () =>
    ((await (await fetch(`${s.dashboardUrl}/api/v1/status`)).json()) as { audit: Audit }).audit;

  const N = 25;
  for (let i = 0; i < N; i++) {
    const r = await send(s.proxyUrl, i);
    expect(r.status).toBe(200);
    await r.arrayBuffer();
  }
  await s.runtime.store.flush();
  const a = await status();
  expect(a.pending).toBe(N);
  expect(a.written).toBe(0);
  expect(a.errors).toBeGreaterThan(0);
  expect(a.last_error).toContain("ENOSPC");
  expect(a.failing_since).not.toBeNull();
  const failures = lines.filter((l) => l.includes("audit log: cannot write"));
  expect(failures).toHaveLength(1); // rate-limited: not one line per request
  expect(failures[0]).toContain("ENOSPC");

  const metrics = await (await fetch(`${s.proxyUrl}/metrics`)).text();
  expect(metrics).toContain(`sluice_audit_lines_pending ${N}`);
  expect(metrics).toMatch(/sluice_audit_write_errors_total [1-9]\d*/);
  expect(metrics).toContain("# TYPE sluice_audit_lines_dropped_total counter");

  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(`${s.dashboardUrl}/#/`);
    const alert = page.locator("#audit-alert");
    await alert.waitFor();
    const text = await alert.innerText();
    expect(text).toContain("The audit trail cannot be written");
    expect(text).toContain("ENOSPC");
    expect(text).toContain(`${N} line(s) waiting`);
  } finally {
    await browser.close();
  }

  // The disk has room again: the next batch writes the backlog, in order, and the log says so.
  rmSync(disk.file);
  const r = await send(s.proxyUrl, N);
  await r.arrayBuffer();
  await s.runtime.store.flush();
  const b = await status();
  expect(b).toMatchObject({ pending: 0, written: N + 1, dropped: 0, failing_since: null });
  const written = readFileSync(disk.file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).request_id);
  expect(written).toHaveLength(N + 1);
  expect(new Set(written).size).toBe(N + 1);
  expect(lines.some((l) => l.includes("audit log: writing to") && l.includes("0 line(s) were lost"))).toBe(
    true,
  );
}, 30_000); // it starts Chromium: the budget of the other browser tests on a busy 2-core machine

test("SIGTERM with lines pending on a full disk: each is reported, with the count, in the log and the summary", async () => {
  const disk = fullAuditDir();
  await using p = await spawnSluice([], { upstream: up.url, config: { logging: { dir: disk.dir } } });
  for (let i = 0; i < 3; i++) await (await send(p.proxyUrl, i)).arrayBuffer();
  await p.waitForOutput(/audit log: cannot write/);
  p.kill("SIGTERM");
  expect(await p.exited).toBe(0);
  expect(p.output).toMatch(
    /audit log: 3 line\(s\) could not be written to .* before shutdown and are lost \(ENOSPC/,
  );
  expect(p.output).toMatch(/audit trail: 3 line\(s\) lost/);
});

test("SIGTERM after the disk got room again: the pending lines are written, nothing is reported lost", async () => {
  const disk = fullAuditDir();
  await using p = await spawnSluice([], { upstream: up.url, config: { logging: { dir: disk.dir } } });
  for (let i = 0; i < 3; i++) await (await send(p.proxyUrl, i)).arrayBuffer();
  await p.waitForOutput(/audit log: cannot write/);
  rmSync(disk.file);
  p.kill("SIGTERM");
  expect(await p.exited).toBe(0);
  expect(readFileSync(disk.file, "utf8").trim().split("\n")).toHaveLength(3);
  expect(p.output).not.toContain("before shutdown and are lost");
  expect(p.output).toMatch(/audit trail: \d+ failed write\(s\), every line written in the end/);
});

test("a disk full for longer than the pending buffer: the oldest lines are dropped and counted, never unbounded", () => {
  const disk = fullAuditDir();
  const log = new Logger({ stderr: false });
  const said: string[] = [];
  log.follow((l) => said.push(l));
  const audit = new AuditLog(disk.dir, {
    limits: () => ({ maxFileBytes: 1 << 20, maxFiles: 2 }),
    log,
    maxPending: 5,
  });
  for (let i = 0; i < 8; i++) {
    audit.add(`{"n":${i}}`);
    expect(audit.flush()).toBe(false);
  }
  expect(audit.stats).toMatchObject({ pending: 5, dropped: 3, written: 0, errors: 8 });
  expect(said.filter((l) => l.includes("cannot write"))).toHaveLength(1);
  rmSync(disk.file);
  expect(audit.flush()).toBe(true);
  // The five newest lines, whole: the failed appends left nothing behind.
  expect(readFileSync(disk.file, "utf8")).toBe('{"n":3}\n{"n":4}\n{"n":5}\n{"n":6}\n{"n":7}\n');
  expect(said.at(-1)).toContain("3 line(s) were lost meanwhile");
});

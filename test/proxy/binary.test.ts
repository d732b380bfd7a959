/**
 * The compiled binary (the shared test build of test/helpers/binaries.ts, or SLUICE_TEST_BINARY), run
 * from another directory: version and build identity, `.env`/`bunfig.toml` not auto-loaded, and a
 * request proxied end to end.
 */
import { beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256File } from "../../src/core/build-info.ts";
import { hostBinaries } from "../helpers/binaries.ts";
import { runSluice, spawnSluice } from "../helpers/sluice.ts";
import { json, startUpstream } from "../helpers/upstream.ts";

let binary: string;
const elsewhere = mkdtempSync(join(tmpdir(), "sluice-cwd-"));

beforeAll(async () => {
  binary = process.env.SLUICE_TEST_BINARY ?? (await hostBinaries()).sluice;
  // A hostile working directory: a .env and a bunfig.toml that must not be loaded.
  writeFileSync(join(elsewhere, ".env"), "SLUICE_DASHBOARD_PASSWORD=from-dotenv\n");
  writeFileSync(join(elsewhere, "bunfig.toml"), 'preload = ["./does-not-exist.ts"]\n');
}, 120_000);

test("--version and `version` report the baked-in identity; build_id is the file's sha256", async () => {
  const v = await runSluice(["--version"], { binary, cwd: elsewhere });
  expect(v.code).toBe(0);
  if (!process.env.SLUICE_TEST_BINARY) expect(v.stdout.trim()).toBe("9.8.7-test (abc123)");
  const info = await runSluice(["version"], { binary, cwd: elsewhere });
  const parsed = JSON.parse(info.stdout) as Record<string, unknown>;
  expect(parsed.build_id).toBe(`sha256:${sha256File(binary)}`);
  expect(parsed.standalone).toBe(true);
  if (!process.env.SLUICE_TEST_BINARY)
    expect(parsed).toMatchObject({
      version: "9.8.7-test",
      commit: "abc123",
      built_at: "2026-01-02T03:04:05Z",
    });
  const help = await runSluice(["serve", "--help"], { binary, cwd: elsewhere });
  expect(help.stdout + help.stderr).toContain("--dashboard-port");
});

test("the binary serves: a request is proxied to the upstream and SIGTERM exits cleanly", async () => {
  await using up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg_bin" }));
  await using p = await spawnSluice([], { binary, cwd: elsewhere, upstream: up.url });
  const res = await fetch(`${p.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": "k", "content-type": "application/json" },
    body: '{"model":"m"}',
  });
  expect(await res.json()).toEqual({ id: "msg_bin" });
  expect(up.requests.at(-1)!.sha256).toBe(
    new Bun.CryptoHasher("sha256").update('{"model":"m"}').digest("hex"),
  );
  const health = (await (await fetch(`${p.proxyUrl}/health`)).json()) as {
    version: string;
    requests: number;
  };
  expect(health.requests).toBe(1);
  if (!process.env.SLUICE_TEST_BINARY) expect(health.version).toBe("9.8.7-test");
  // Had .env been loaded, SLUICE_DASHBOARD_PASSWORD would lock the dashboard (401).
  const status = await fetch(`${p.dashboardUrl}/api/v1/status`);
  expect(status.status).toBe(200);
  p.kill("SIGTERM");
  expect(await p.exited).toBe(0);
  expect(p.output).not.toContain("from-dotenv");
});

/**
 * The compiled binary serves the same UI: `/` and its hashed assets come from the embedded bundle,
 * with sluice started from a directory that holds no web/ files. The binary is the shared test build
 * of test/helpers/binaries.ts (same options as a release build).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { hostBinaries } from "../helpers/binaries.ts";
import { type SpawnedSluice, spawnSluice } from "../helpers/sluice.ts";
import { launchBrowser, watchPage } from "./browser.ts";

let sluice: SpawnedSluice;

beforeAll(async () => {
  sluice = await spawnSluice([], { binary: (await hostBinaries()).sluice, cwd: tmpdir() });
}, 120_000);

afterAll(async () => {
  await sluice?.[Symbol.asyncDispose]();
});

test("the compiled binary serves the dashboard page and its hashed assets", async () => {
  expect(sluice.dashboardUrl).toBeTruthy();
  const page = await fetch(`${sluice.dashboardUrl}/`);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  const html = await page.text();
  expect(html).toContain("<title>sluice dashboard</title>");
  expect(html).not.toContain("/_bun/"); // no dev-server client in the binary
  const assets = [...html.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
  expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
  for (const a of assets) {
    const r = await fetch(`${sluice.dashboardUrl}${a}`);
    expect(r.status).toBe(200);
    const body = await r.text();
    if (a.endsWith(".js")) {
      expect(r.headers.get("content-type")).toContain("javascript");
      expect(body).toContain("/api/v1");
    } else {
      expect(r.headers.get("content-type")).toContain("text/css");
      expect(body).toContain("--accent");
    }
  }
  // The API answers next to the UI.
  const st = await fetch(`${sluice.dashboardUrl}/api/v1/status`);
  expect(st.status).toBe(200);
  expect(((await st.json()) as { standalone: boolean }).standalone).toBeDefined();
}, 30_000);

test("the UI from the binary runs in Chromium: overview, rules and connect render without errors", async () => {
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(10_000);
    const problems = watchPage(page);
    await page.goto(`${sluice.dashboardUrl}/`);
    await page.locator("#card-today").waitFor();
    await page.goto(`${sluice.dashboardUrl}/#/rules`);
    await page.locator("#rules-table tbody tr").first().waitFor();
    await page.goto(`${sluice.dashboardUrl}/#/connect`);
    await page.locator("#clients section").first().waitFor();
    await page.close();
    expect(problems.errors).toEqual([]);
  } finally {
    await browser.close();
  }
}, 30_000);

/**
 * The compiled binary serves the same UI: `/` and its hashed assets come from the embedded bundle,
 * with sluice started from a directory that holds no web/ files. Uses `dist/sluice-<triple>` when
 * `bun run build` produced one for this machine after the last source change, else compiles one with
 * build.ts's `compile()` into a temp directory.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { compile, hostTriple, identity } from "../../build.ts";
import { type SpawnedSluice, spawnSluice } from "../helpers/sluice.ts";
import { launchBrowser, watchPage } from "./browser.ts";

const REPO = resolve(import.meta.dir, "../..");
let tmp: string | null = null;

/** Newest modification time of any file under these repo folders. */
function newestSource(dirs: string[]): number {
  let newest = 0;
  for (const d of dirs)
    for (const f of readdirSync(join(REPO, d), { recursive: true, withFileTypes: true }))
      if (f.isFile()) newest = Math.max(newest, statSync(join(f.parentPath, f.name)).mtimeMs);
  return newest;
}
let binary: string;
let sluice: SpawnedSluice;

beforeAll(async () => {
  const triple = hostTriple();
  const dist = join(REPO, "dist", `sluice-${triple}`);
  const fresh = existsSync(dist) && statSync(dist).mtimeMs > newestSource(["src", "web", "rules"]);
  if (fresh && process.env.SLUICE_WEB_TEST_COMPILE !== "1") binary = dist;
  else {
    // Same options as a release build (build.ts), into a temp directory.
    tmp = mkdtempSync(join(tmpdir(), "sluice-web-bin-"));
    binary = await compile(triple, tmp, identity());
  }
  sluice = await spawnSluice([], { binary, cwd: tmpdir() });
}, 120_000);

afterAll(async () => {
  await sluice?.[Symbol.asyncDispose]();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
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

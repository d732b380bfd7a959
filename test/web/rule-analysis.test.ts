/**
 * The Rule analysis page in Chromium: run the analysis, read a duplicate with its evidence, dismiss
 * it, and disable a rule of an overlapping pair, with no console error or failed request.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { launchBrowser, watchPage } from "./browser.ts";

const RULES = [
  { name: "acme_token_a", pattern: "\\bacme_[a-f0-9]{32}\\b", severity: "high", action: "block" },
  { name: "acme_token_b", pattern: "\\bacme_[a-f0-9]{32}\\b", severity: "high", action: "block" },
  { name: "ticket_ref", pattern: "\\bTKT-[0-9]{4,6}\\b", severity: "info", action: "log" },
  { name: "ticket_num", pattern: "\\bTKT-[0-9]{5,8}\\b", severity: "info", action: "log" },
];

let s: InProcessSluice;
let browser: Browser;
beforeAll(async () => {
  s = await startSluice({ noDefaultRules: true, config: { custom_rules: RULES } });
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

test("run, read a duplicate with its evidence, dismiss it, disable one rule of an overlap", async () => {
  const page = await browser.newPage({ viewport: { width: 1024, height: 900 } });
  const problems = watchPage(page);
  page.setDefaultTimeout(10_000);
  await page.goto(`${s.dashboardUrl}/#/rule-analysis`);
  await page.locator("#analysis-result").getByText("No result").waitFor();
  await page.click("#analysis-run");
  const duplicate = page.locator('.pair[data-kind="duplicate"]');
  await duplicate.waitFor();
  expect(await duplicate.locator("h3").textContent()).toBe(
    "acme_token_a and acme_token_b flag the same strings",
  );
  expect(await duplicate.locator(".evidence code").first().textContent()).toMatch(/^acme_[a-f0-9]{32}$/);
  expect(await page.locator("#analysis-status").textContent()).toContain("done");

  await duplicate.getByRole("button", { name: "Dismiss" }).click();
  await page.getByText("1 dismissed pair(s) hidden").waitFor();
  expect(await page.locator('.pair[data-kind="duplicate"]').count()).toBe(0);

  const overlap = page.locator('.pair[data-kind="overlap"]');
  await overlap.getByRole("button", { name: "Disable ticket_ref" }).click();
  await page.locator("#analysis-result").getByText("No result").waitFor();
  const rule = (await (await fetch(`${s.dashboardUrl}/api/v1/rules/ticket_ref`)).json()) as {
    enabled: boolean;
  };
  expect(rule.enabled).toBe(false);
  await page.close();
  expect(problems.errors).toEqual([]);
}, 30_000);

/**
 * The dashboard in a real browser (Debian Chromium via playwright-core) against real sluice with a
 * store seeded through the proxy. Fails (does not skip) when /usr/bin/chromium is missing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import type { Upstream } from "../helpers/upstream.ts";
import { watchPage } from "./browser.ts";
import { startWebEnv, type WebEnv } from "./env.ts";
import { fakeAwsKey, seed, sendAnthropic } from "./seed.ts";

let env: WebEnv;
let up: Upstream;
let s: InProcessSluice;
let browser: Browser;
let base: string;
/** Per-test limit: a browser on a busy 2-core machine. */
const T = 30_000;

const apiGet = <T>(path: string) => env.apiGet<T>(path);
const openPage = (hash: string, ctx?: BrowserContext) => env.open(hash, ctx);

beforeAll(async () => {
  env = await startWebEnv();
  ({ up, s, browser, base } = env);
  const statuses = await seed(s.proxyUrl);
  expect(statuses.every((c) => c === 200 || c === 400 || c === 403)).toBe(true);
  await s.runtime.store.flush();
}, T);

afterAll(() => env?.close());

describe("dashboard pages", () => {
  test(
    "the audit names the rules that decided each blocked request, in the API, the JSONL trail and the page",
    async () => {
      const { entries } = await apiGet<{ entries: Array<{ action: string; rules: string | null }> }>(
        "/audit?action=block&limit=50",
      );
      expect(entries.length).toBeGreaterThan(0);
      for (const e of entries) expect(e.rules).toMatch(/^[a-z0-9_]+(,[a-z0-9_]+)*$/);
      expect(entries.some((e) => e.rules?.split(",").includes("aws_access_key_id"))).toBe(true);
      const passed = await apiGet<{ entries: Array<{ rules: string | null }> }>(
        "/audit?action=pass&limit=50",
      );
      expect(passed.entries.every((e) => e.rules === null)).toBe(true);
      await s.runtime.store.flush();
      const trail = readFileSync(join(s.configDir, "audit", "audit.jsonl"), "utf8")
        .trim()
        .split("\n");
      const blockedLine = trail
        .map((l) => JSON.parse(l) as { rules?: string; action_source?: string })
        .find((l) => l.rules?.includes("aws_access_key_id"));
      // The rule's shipped action decided it (no setting overrides it here).
      expect(blockedLine?.action_source).toBe("rule_default");
      const { page, problems } = await openPage("audit?action=block");
      const link = page.locator('#audit-table a[href="#/findings?rule=aws_access_key_id"]').first();
      await link.waitFor();
      expect(await link.textContent()).toBe("aws_access_key_id");
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "the Overview's cards and scan health match /api/v1/stats",
    async () => {
      // One request sluice cannot read (not JSON), counted as unscanned traffic.
      await fetch(`${s.proxyUrl}/v1beta/models/gemini-2.5-pro:generateContent`, {
        method: "POST",
        headers: {
          "x-goog-api-key": "k",
          "content-type": "application/x-protobuf",
          "user-agent": "GeminiCLI/0.61.0",
        },
        body: new Uint8Array([8, 1, 18, 3]),
      });
      await s.runtime.store.flush();
      const stats = await apiGet<{
        today_count: number;
        scan_health: {
          unscanned: { total: number };
          scan_errors: number;
          store_dropped: number;
          audit_dropped: number;
        };
      }>("/stats?days=30");
      expect(stats.scan_health.unscanned.total).toBeGreaterThanOrEqual(1);
      const { page, problems } = await openPage("");
      await page.locator("#scan-health").waitFor();
      const shown = async (id: string) =>
        Number((await page.locator(`#${id} strong`).textContent())!.replace(/\D/g, ""));
      expect(await shown("sh-unscanned")).toBe(stats.scan_health.unscanned.total);
      expect(await shown("sh-errors")).toBe(stats.scan_health.scan_errors);
      expect(await shown("sh-dropped")).toBe(
        stats.scan_health.store_dropped + stats.scan_health.audit_dropped,
      );
      // Per reason and per tool.
      expect(await page.locator("#sh-unscanned").textContent()).toContain("non_json");
      expect(await page.locator("#sh-unscanned").textContent()).toContain("gemini-cli");
      expect(Number((await page.locator("#card-today").textContent())!.replace(/\D/g, ""))).toBe(
        stats.today_count,
      );
      // The live feed opens with the latest findings and requests, not "Waiting for traffic".
      expect(await page.locator("#live-feed li").count()).toBeGreaterThan(0);
      expect(await page.locator("#feed-empty").count()).toBe(0);
      expect(await page.locator("#live-feed").textContent()).toContain("aws_access_key_id");
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "the seeded store has findings from three providers",
    async () => {
      const f = await apiGet<{ total: number; findings: Array<{ provider: string }> }>("/findings?limit=100");
      expect(f.total).toBeGreaterThan(0);
      expect(new Set(f.findings.map((x) => x.provider)).size).toBeGreaterThanOrEqual(2);
    },
    T,
  );

  test(
    "every page renders with no console error or failed request",
    async () => {
      const { findings } = await apiGet<{ findings: Array<{ id: number; session_id: string }> }>(
        "/findings?limit=1",
      );
      const first = findings[0]!;
      const pages: Array<[string, string]> = [
        ["", "#card-today"],
        ["findings", "#findings-table tbody tr"],
        [`findings/${first.id}`, "#detail-preview"],
        ["sessions", "#sessions-table tbody tr"],
        [`sessions/${encodeURIComponent(first.session_id)}`, "#sf-title"],
        ["rules", "#rules-table tbody tr"],
        ["allowlists", "#al-test-title"],
        ["pipeline", "#stages-table tbody tr"],
        ["audit", "#audit-table tbody tr"],
        ["connect", "#clients section"],
      ];
      const { page, problems } = await openPage("");
      const timings: string[] = [];
      for (const [hash, selector] of pages) {
        const t0 = performance.now();
        await page.goto(`${base}/#/${hash}`);
        await page.locator(selector).first().waitFor({ timeout: 5000 });
        timings.push(`${hash.split("/")[0] || "overview"} ${(performance.now() - t0).toFixed(0)} ms`);
        expect(await page.locator("main [role=alert]").count()).toBe(0);
      }
      console.log(`page ready: ${timings.join(", ")}`);
      // Dark theme via the toggle, then keyboard: the first nav link is reachable with Tab.
      await page.click("#theme-toggle");
      await page.click("#theme-toggle");
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "mode toggle round trip shows and clears the passthrough banner",
    async () => {
      const { page, problems } = await openPage("pipeline");
      await page.click("#mode-toggle");
      await page.getByRole("button", { name: "Switch to passthrough", exact: true }).click();
      await page.locator("#passthrough-banner").waitFor();
      expect((await apiGet<{ mode: string }>("/status")).mode).toBe("passthrough");
      expect(await page.locator("#mode-value").textContent()).toBe("passthrough");

      await page.click("#mode-toggle");
      await page.getByRole("button", { name: "Switch to active", exact: true }).click();
      await page.locator("#passthrough-banner").waitFor({ state: "detached" });
      expect((await apiGet<{ mode: string }>("/status")).mode).toBe("active");
      const mc = await apiGet<{ total: number }>("/findings?finding_type=mode_changed");
      expect(mc.total).toBeGreaterThanOrEqual(1);
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "rule edit round trip: severity and enabled inline",
    async () => {
      const { rules } = await apiGet<{ rules: Array<{ name: string; severity: string; enabled: boolean }> }>(
        "/rules?limit=1&enabled=true",
      );
      const rule = rules[0]!;
      const target = rule.severity === "info" ? "warning" : "info";
      const { page, problems } = await openPage(`rules?q=${encodeURIComponent(rule.name)}`);
      const row = page.locator(`tr[data-rule="${rule.name}"]`);
      await row.waitFor();
      await row.getByLabel(`Severity of ${rule.name}`).selectOption(target);
      await page
        .locator(".toast", { hasText: `Saved ${rule.name}` })
        .first()
        .waitFor();
      expect((await apiGet<{ severity: string }>(`/rules/${rule.name}`)).severity).toBe(target);

      await row.getByLabel(`Enable ${rule.name}`).uncheck();
      await page
        .locator(".toast", { hasText: `Saved ${rule.name}` })
        .nth(1)
        .waitFor();
      expect((await apiGet<{ enabled: boolean }>(`/rules/${rule.name}`)).enabled).toBe(false);

      await page.reload();
      const row2 = page.locator(`tr[data-rule="${rule.name}"]`);
      await row2.waitFor();
      expect(await row2.getByLabel(`Severity of ${rule.name}`).inputValue()).toBe(target);
      expect(await row2.getByLabel(`Enable ${rule.name}`).isChecked()).toBe(false);

      // Put it back.
      await row2.getByLabel(`Enable ${rule.name}`).check();
      await row2.getByLabel(`Severity of ${rule.name}`).selectOption(rule.severity);
      await page
        .locator(".toast", { hasText: `Saved ${rule.name}` })
        .nth(1)
        .waitFor();
      const back = await apiGet<{ severity: string; enabled: boolean }>(`/rules/${rule.name}`);
      expect(back).toMatchObject({ severity: rule.severity, enabled: true });
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "create a custom rule with a live pattern test; it then finds in proxied traffic",
    async () => {
      const { page, problems } = await openPage("rules");
      await page.locator("#rule-form").waitFor();
      await page.fill("#rule-name", "acme-deploy-token");
      await page.fill("#rule-sample", "deploy with acme_dk_7f3k9q2m5x8w then exit");
      await page.fill("#rule-pattern", "acme_dk_(");
      await page.locator("#rule-test-result [role=alert]", { hasText: "Invalid pattern" }).waitFor();
      await page.fill("#rule-pattern", "acme_dk_(a+)+$");
      await page.locator("#rule-test-result [role=alert]", { hasText: "backtrack" }).waitFor();
      await page.fill("#rule-pattern", "acme_dk_([a-z0-9]{10})");
      await page.locator("#rule-test-count", { hasText: "1 match" }).waitFor();
      expect(await page.locator("#rule-test-result mark").textContent()).toBe("7f3k9q2m5x");
      await page.selectOption("#rule-severity", "critical");
      await page.click("#rule-submit");
      await page.locator('tr[data-rule="acme-deploy-token"]').waitFor();
      const rule = await apiGet<{ source: string; tier: string; severity: string; pattern: string }>(
        "/rules/acme-deploy-token",
      );
      expect(rule).toMatchObject({ source: "dashboard", tier: "custom", severity: "critical" });

      // Edit it in the same form: the pattern and the description change, the name stays.
      await page.getByRole("button", { name: "Edit acme-deploy-token", exact: true }).click();
      expect(await page.inputValue("#rule-pattern")).toBe("acme_dk_([a-z0-9]{10})");
      expect(await page.isDisabled("#rule-name")).toBe(true);
      await page.fill("#rule-pattern", "acme_dk_([a-z0-9]{10,12})");
      await page.fill("#rule-description", "ACME deploy keys");
      await page.click("#rule-submit");
      await page.locator(".toast", { hasText: "Saved acme-deploy-token" }).waitFor();
      const edited = await apiGet<{ pattern: string; description: string }>("/rules/acme-deploy-token");
      expect(edited).toMatchObject({ pattern: "acme_dk_([a-z0-9]{10,12})", description: "ACME deploy keys" });

      const r = await sendAnthropic(s.proxyUrl, "ship it with acme_dk_a1b2c3d4e5 now");
      await r.arrayBuffer();
      await s.runtime.store.flush();
      const f = await apiGet<{ total: number }>("/findings?rule=acme-deploy-token");
      expect(f.total).toBe(1);
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "a secret sent through the proxy shows in the live feed and the findings table within 2 s",
    async () => {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const overview = await openPage("", ctx);
      const findings = await openPage("findings", ctx);
      await overview.page.locator("#live-pill.on").waitFor();
      await findings.page.locator("#live-pill.on").waitFor();
      await findings.page.locator("#findings-table").waitFor();

      const key = fakeAwsKey();
      const masked = key.slice(0, 4);
      const t0 = performance.now();
      const res = await sendAnthropic(s.proxyUrl, `please deploy with ${key} to prod`);
      await res.arrayBuffer();
      await overview.page
        .locator('#live-feed li[data-type="finding"]', { hasText: masked })
        .first()
        .waitFor({ timeout: 2000 });
      const feedMs = performance.now() - t0;
      await findings.page
        .locator("#findings-table tbody tr", { hasText: key.slice(-4) })
        .first()
        .waitFor({ timeout: Math.max(100, 2000 - (performance.now() - t0)) });
      const tableMs = performance.now() - t0;
      console.log(`live feed ${feedMs.toFixed(0)} ms, findings table ${tableMs.toFixed(0)} ms`);
      expect(tableMs).toBeLessThan(2000);
      // The raw value never reaches the page.
      expect(await overview.page.content()).not.toContain(key);
      expect(await findings.page.content()).not.toContain(key);
      await ctx.close();
      expect([...overview.problems.errors, ...findings.problems.errors]).toEqual([]);
    },
    T,
  );
});

describe("dashboard sign-in", () => {
  let sp: InProcessSluice;
  beforeAll(async () => {
    sp = await startSluice({
      upstream: up.url,
      config: { dashboard: { password: "correct horse battery" } },
    });
  }, T);
  afterAll(async () => {
    await sp?.stop();
  });

  test(
    "login flow with a password, and a clear message when the session expires",
    async () => {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await ctx.newPage();
      const problems = watchPage(page);
      await page.goto(`${sp.dashboardUrl}/`);
      await page.locator("#login-password").waitFor();
      expect(await page.locator("#nav a").count()).toBe(0);

      await page.fill("#login-password", "wrong password");
      await page.click("button[type=submit]");
      await page.locator("#login-message", { hasText: /./ }).waitFor();

      await page.fill("#login-password", "correct horse battery");
      await page.click("button[type=submit]");
      await page.locator("#card-today").waitFor();
      expect(await page.locator("#logout").isVisible()).toBe(true);

      // A mutation with the CSRF token works through the UI.
      await page.goto(`${sp.dashboardUrl}/#/pipeline`);
      await page.click("#mode-toggle");
      await page.getByRole("button", { name: "Switch to passthrough", exact: true }).click();
      await page.locator("#passthrough-banner").waitFor();
      await page.click("#mode-toggle");
      await page.getByRole("button", { name: "Switch to active", exact: true }).click();
      await page.locator("#passthrough-banner").waitFor({ state: "detached" });

      // The session goes away: the next API call says so and shows the sign-in form.
      await ctx.clearCookies();
      await page.goto(`${sp.dashboardUrl}/#/rules`);
      await page.locator("#login-password").waitFor();
      // A fresh load shows the form; an expiry during use shows the message.
      await page.fill("#login-password", "correct horse battery");
      await page.click("button[type=submit]");
      await page.locator("#rule-form").waitFor();
      await ctx.clearCookies();
      await page.click('#nav a[href="#/findings"]');
      await page.locator("#login-message", { hasText: "Your session expired. Sign in again." }).waitFor();
      await ctx.close();
      // The wrong password and the expired session are the only expected 401s.
      const unexpected = problems.errors.filter((e) => !/http 401/.test(e) && !/status of 401/.test(e));
      expect(unexpected).toEqual([]);
    },
    T,
  );
});

/**
 * Dashboard workflows a security engineer runs all day, in Chromium against real sluice: filter and
 * export findings, allowlist a value or disable a rule from a finding, bulk-edit and clone rules,
 * edit allowlists, search the audit log, and get around with the keyboard only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import type { Upstream } from "../helpers/upstream.ts";
import { watchPage } from "./browser.ts";
import { startWebEnv, type WebEnv } from "./env.ts";
import { fakeAwsKey, fakeGithubToken, sendAnthropic, sendGemini, sendOpenAI } from "./seed.ts";

const T = 30_000;
let env: WebEnv;
let up: Upstream;
let s: InProcessSluice;
let browser: Browser;
let base: string;
const sent: string[] = [];

const apiGet = <T>(path: string) => env.apiGet<T>(path);
const open = (hash: string) => env.open(hash);

beforeAll(async () => {
  env = await startWebEnv();
  ({ up, s, browser, base } = env);
  const texts = [
    `aws ${fakeAwsKey()}`,
    `gh ${fakeGithubToken()}`,
    `aws again ${fakeAwsKey()} and ${fakeGithubToken()}`,
  ];
  sent.push(...texts);
  const res = await Promise.all([
    sendAnthropic(s.proxyUrl, texts[0]!),
    sendOpenAI(s.proxyUrl, texts[1]!),
    sendGemini(s.proxyUrl, texts[2]!),
  ]);
  await Promise.all(res.map((r) => r.arrayBuffer()));
  await s.runtime.store.flush();
}, T);

afterAll(() => env?.close());

describe("findings", () => {
  test(
    "filters narrow the table and the export of the current filter holds no raw value",
    async () => {
      const { page, problems } = await open("findings");
      await page.locator("#findings-table tbody tr").first().waitFor();
      const all = await page.locator("#findings-table tbody tr").count();
      await page.selectOption("#filter-provider", "openai");
      await page.waitForURL(/provider=openai/);
      await page.locator("#findings-table tbody tr").first().waitFor();
      const rows = page.locator("#findings-table tbody tr");
      await expectEventually(async () => (await rows.count()) < all || all === 1);
      for (const t of await rows.allTextContents()) expect(t).toContain("openai");

      const href = await page.locator("#export-csv").getAttribute("href");
      expect(href).toContain("provider=openai");
      expect(href).toContain("format=csv");
      const csv = await (await fetch(`${base}${href}`)).text();
      expect(csv.split("\n")[0]).toContain("finding_type");
      for (const text of sent)
        for (const word of text.split(" ").filter((w) => w.length > 15)) expect(csv).not.toContain(word);

      // A reload keeps the filter (it lives in the address).
      await page.reload();
      await page.locator("#findings-table tbody tr").first().waitFor();
      expect(await page.locator("#filter-provider").inputValue()).toBe("openai");
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "sorting by a column header orders the findings both ways",
    async () => {
      const { page, problems } = await open("findings?limit=25");
      await page.locator("#findings-table tbody tr").first().waitFor();
      await page.getByRole("button", { name: "Type", exact: true }).click();
      await page.waitForURL(/sort=finding_type/);
      await page.locator('th[aria-sort="ascending"]', { hasText: "Type" }).waitFor();
      const types = await page.locator("#findings-table tbody tr td:nth-child(3)").allTextContents();
      expect(types.length).toBeGreaterThan(1);
      expect(types).toEqual([...types].sort());
      await page.getByRole("button", { name: "Type ▲", exact: true }).click();
      await page.locator('th[aria-sort="descending"]', { hasText: "Type" }).waitFor();
      const desc = await page.locator("#findings-table tbody tr td:nth-child(3)").allTextContents();
      expect(desc).toEqual([...types].sort().reverse());
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "one click allowlists a finding's value pattern; another disables its rule",
    async () => {
      const { findings } = await apiGet<{ findings: Array<{ id: number; rule: string; preview: string }> }>(
        "/findings?limit=1&detector=secrets",
      );
      const f = findings[0]!;
      const { page, problems } = await open(`findings/${f.id}`);
      await page.locator("#detail-preview").waitFor();
      expect(await page.locator("#detail-preview").textContent()).toBe(f.preview);

      await page.click("#allowlist-value");
      await page.getByRole("button", { name: "Add to allowlist", exact: true }).click();
      await page.locator(".toast", { hasText: "Allowlisted" }).waitFor();
      const lists = await apiGet<{ api_entries: Array<{ pattern: string }> }>("/allowlists");
      expect(lists.api_entries.map((e) => e.pattern)).toContain(f.preview.replace(/\*{2,}/g, "*"));

      await page.click("#disable-rule");
      await page.getByRole("button", { name: "Disable rule", exact: true }).last().click();
      await page.locator(".toast", { hasText: `Rule ${f.rule} disabled` }).waitFor();
      expect((await apiGet<{ enabled: boolean }>(`/rules/${encodeURIComponent(f.rule)}`)).enabled).toBe(
        false,
      );
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );
});

describe("rules", () => {
  test(
    "search with comma = OR, bulk update two rules, clone one",
    async () => {
      const { rules } = await apiGet<{ rules: Array<{ name: string }> }>(
        "/rules?limit=2&enabled=true&tier=community",
      );
      const [a, b] = [rules[0]!.name, rules[1]!.name];
      const { page, problems } = await open("rules");
      await page.locator("#rules-table").waitFor();
      await page.fill("#rule-search", `${a},${b}`);
      await page.waitForURL(/q=/);
      await page.locator(`tr[data-rule="${a}"]`).waitFor();
      await page.locator(`tr[data-rule="${b}"]`).waitFor();

      await page.getByLabel(`Select ${a}`, { exact: true }).check();
      await page.getByLabel(`Select ${b}`, { exact: true }).check();
      expect(await page.locator("#bulk-count").textContent()).toBe("2 selected");
      await page.selectOption("#bulk-action", "block");
      await page.click("#bulk-apply");
      await page.locator(".toast").first().waitFor();
      for (const n of [a, b]) expect((await apiGet<{ action: string }>(`/rules/${n}`)).action).toBe("block");

      await page.getByRole("button", { name: `Clone ${a}`, exact: true }).click();
      await page.locator(`tr[data-rule="${a}-copy"]`).waitFor();
      const clone = await apiGet<{ tier: string; source: string }>(`/rules/${a}-copy`);
      expect(clone).toMatchObject({ tier: "custom", source: "dashboard" });
      const stats = await apiGet<{ by_tier: Record<string, number> }>("/rules/stats");
      expect(stats.by_tier.custom).toBeGreaterThanOrEqual(1);

      // The clone can be deleted (dashboard rules only).
      await page.getByRole("button", { name: `Delete ${a}-copy`, exact: true }).click();
      await page.getByRole("button", { name: "Delete", exact: true }).click();
      await page.locator(".toast", { hasText: `Deleted ${a}-copy` }).waitFor();
      expect((await fetch(`${base}/api/v1/rules/${a}-copy`)).status).toBe(404);
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );
});

describe("allowlists, audit and keyboard", () => {
  test(
    "add, test and remove an allowlist entry",
    async () => {
      const { page, problems } = await open("allowlists");
      await page.locator("#al-add-title").waitFor();
      await page.selectOption("#al-add-type", "pii");
      await page.fill("#al-add-pattern", "*@corp.example");
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await page.locator("#allowlist-pii", { hasText: "*@corp.example" }).waitFor();

      await page.fill("#al-test-pattern", "*@corp.example");
      await page.fill("#al-test-value", "jane@corp.example");
      await page.getByRole("button", { name: "Test", exact: true }).click();
      await page.locator("#al-test-result", { hasText: "value matches" }).waitFor();

      await page.getByRole("button", { name: "Remove *@corp.example from Personal data" }).click();
      await page.getByRole("button", { name: "Remove", exact: true }).click();
      await page.locator("#allowlist-pii", { hasText: "*@corp.example" }).waitFor({ state: "detached" });
      const lists = await apiGet<{ api_entries: Array<{ pattern: string }> }>("/allowlists");
      expect(lists.api_entries.map((e) => e.pattern)).not.toContain("*@corp.example");
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "audit search narrows the table; the log tail shows lines",
    async () => {
      const { page, problems } = await open("audit");
      await page.locator("#audit-table tbody tr").first().waitFor();
      await page.selectOption("#audit-provider", "gemini");
      await page.waitForURL(/provider=gemini/);
      await expectEventually(async () => {
        const texts = await page.locator("#audit-table tbody tr").allTextContents();
        return texts.length > 0 && texts.every((t) => t.includes("gemini"));
      });
      await page.locator("#log-tail").waitFor();
      const href = await page.locator("#audit-export-json").getAttribute("href");
      const exported = (await (await fetch(`${base}${href}`)).json()) as Array<{ provider: string }>;
      expect(exported.length).toBeGreaterThan(0);
      expect(exported.every((e) => e.provider === "gemini")).toBe(true);
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "pipeline settings: default action, a detector's action and a decoder are saved and applied",
    async () => {
      const { page, problems } = await open("pipeline");
      await page.locator("#stages-table").waitFor();
      await page.selectOption("#default-action", "alert");
      await page.getByLabel("pii action", { exact: true }).selectOption("block");
      await page.uncheck("#enc-hex");
      await page.click("#pipeline-save");
      await page.locator(".toast", { hasText: "Pipeline settings saved" }).waitFor();
      type Pipe = {
        default_action: string;
        stages: Array<{
          name: string;
          sub_detectors?: Array<{ name: string; action: string }>;
          encoding_settings?: { hex: boolean };
        }>;
      };
      const p = await apiGet<Pipe>("/pipeline");
      expect(p.default_action).toBe("alert");
      const dlp = p.stages.find((x) => x.sub_detectors)!;
      expect(dlp.sub_detectors!.find((d) => d.name === "pii")!.action).toBe("block");
      expect(p.stages.find((x) => x.encoding_settings)!.encoding_settings!.hex).toBe(false);
      // The sanitized config on the same page reflects it after a reload.
      await page.reload();
      await page.locator("#config-json").waitFor();
      expect(await page.locator("#default-action").inputValue()).toBe("alert");
      expect(await page.isChecked("#enc-hex")).toBe(false);
      // Put things back.
      await page.selectOption("#default-action", "log");
      await page.getByLabel("pii action", { exact: true }).selectOption("default");
      await page.check("#enc-hex");
      const saved = page.waitForResponse(
        (r) => r.url().endsWith("/api/v1/pipeline") && r.request().method() === "PUT",
      );
      await page.click("#pipeline-save");
      expect((await saved).status()).toBe(200);
      expect((await apiGet<{ default_action: string }>("/pipeline")).default_action).toBe("log");
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "proxy settings: a valid value is saved and reloaded, an invalid one is refused with the reason",
    async () => {
      const { page, problems } = await open("pipeline");
      await page.locator("#proxy-save").waitFor();
      await page.fill("#cfg-proxy-timeout", "60");
      await page.click("#proxy-save");
      await page.locator(".toast", { hasText: "Saved" }).first().waitFor();
      const cfg = await apiGet<{ proxy: { timeout: number } }>("/config");
      expect(cfg.proxy.timeout).toBe(60);
      await page.locator("#config-json", { hasText: '"timeout": 60' }).waitFor();

      await page.fill("#cfg-proxy-timeout", "999");
      await page.click("#proxy-save");
      await page.locator(".toast-error").first().waitFor();
      expect(await page.locator(".toast-error").first().textContent()).toMatch(/timeout/i);
      expect((await apiGet<{ proxy: { timeout: number } }>("/config")).proxy.timeout).toBe(60);
      await page.close();
      // The refused PUT is the one expected 4xx.
      expect(
        problems.errors.filter(
          (e) => !/http 400: PUT .*\/api\/v1\/config/.test(e) && !/status of 400/.test(e),
        ),
      ).toEqual([]);
    },
    T,
  );

  test(
    "a mode change made elsewhere shows the passthrough banner live, without a reload",
    async () => {
      const { page, problems } = await open("rules");
      await page.locator("#live-pill.on").waitFor();
      const token = (await apiGet<{ csrf_token: string }>("/auth/session")).csrf_token;
      const setMode = (mode: string) =>
        fetch(`${base}/api/v1/config`, {
          method: "PUT",
          headers: { "content-type": "application/json", "x-csrf-token": token },
          body: JSON.stringify({ "proxy.mode": mode }),
        });
      expect((await setMode("passthrough")).status).toBe(200);
      await page.locator("#passthrough-banner").waitFor();
      expect(await page.locator("#mode-pill").textContent()).toBe("Passthrough");
      expect((await setMode("active")).status).toBe(200);
      await page.locator("#passthrough-banner").waitFor({ state: "detached" });
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

  test(
    "keyboard only: skip link, navigation and opening a finding",
    async () => {
      const { page, problems } = await open("");
      await page.locator("#card-today").waitFor();
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
      // Tab through the header to the Findings link and follow it.
      for (let i = 0; i < 30; i++) {
        await page.keyboard.press("Tab");
        if ((await page.evaluate(() => document.activeElement?.getAttribute("href"))) === "#/findings") break;
      }
      await page.keyboard.press("Enter");
      await page.locator("#findings-table tbody tr").first().waitFor();
      await page.locator("#findings-table tbody tr").first().focus();
      await page.keyboard.press("Enter");
      await page.locator("#detail-preview").waitFor();
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );
});

/** Re-check a condition until it holds (the UI reloads asynchronously); fails after 5 s. */
async function expectEventually(fn: () => Promise<boolean>, ms = 5000) {
  const until = performance.now() + ms;
  while (!(await fn())) {
    if (performance.now() > until) throw new Error("condition not met within 5 s");
    await Bun.sleep(50);
  }
}

describe("first run", () => {
  test(
    "with no traffic yet, the pages say how to connect a first tool, with the real proxy address",
    async () => {
      await using fresh = await startSluice({ upstream: up.url });
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      page.setDefaultTimeout(10_000);
      const problems = watchPage(page);
      for (const hash of ["", "findings", "sessions", "audit"]) {
        await page.goto(`${fresh.dashboardUrl}/#/${hash}`);
        const hint = page.locator(".connect-hint").first();
        await hint.waitFor();
        expect(await hint.textContent()).toContain(`ANTHROPIC_BASE_URL=${fresh.proxyUrl}`);
      }
      await page.click('.connect-hint a[href="#/connect"]');
      await page.locator("#clients section").first().waitFor();
      expect(await page.locator('[data-client="claude-code"] .seen').textContent()).toContain(
        "no traffic yet",
      );
      // Traffic from Claude Code flips its indicator.
      await (await sendAnthropic(fresh.proxyUrl, "hello")).arrayBuffer();
      await fresh.runtime.store.flush();
      await page.reload();
      await page.locator('[data-client="claude-code"] .seen.yes').waitFor();
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );
});

/**
 * The Notifications page in Chromium against real sluice: add a webhook channel pointed at a local
 * receiver, send a test and see it arrive (signed) with the receiver's answer on the page; a
 * form mistake is shown and loses nothing; edit keeps the stored secret; disable and delete
 * through the batch bar; a config-file channel is read-only but can be tested.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { launchBrowser, type PageProblems, watchPage } from "../web/browser.ts";
import { signedReceiver } from "./receivers.ts";

const T = 30_000;
const HOOK_SECRET = ["page", "hook", "signing", "secret"].join("-");
const hook = signedReceiver(HOOK_SECRET, "received by page-test receiver");
const arrived = hook.arrived;

let s: InProcessSluice;
let browser: Browser;
beforeAll(async () => {
  s = await startSluice({
    config: {
      notifications: {
        channels: [{ name: "from-yaml", type: "webhook", url: `${hook.url}yaml`, secret: HOOK_SECRET }],
      },
    },
  });
  browser = await launchBrowser();
}, 30_000); // a sluice and a browser: room on a loaded machine, as the tests have (bunfig.toml)
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  hook.stop();
});

async function open(): Promise<{ page: Page; problems: PageProblems }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems = watchPage(page);
  page.setDefaultTimeout(10_000);
  await page.goto(`${s.dashboardUrl}/#/notifications`);
  await page.locator("#notify-channels table").waitFor();
  return { page, problems };
}

const row = (page: Page, name: string) => page.locator(`tr[data-channel="${name}"]`);

test(
  "add a webhook channel, send a test and see it arrive; edit, disable and delete it",
  async () => {
    const { page, problems } = await open();
    await expect(
      page.locator("#nav a", { hasText: "Notifications" }).getAttribute("aria-current"),
    ).resolves.toBe("page");
    expect(await row(page, "from-yaml").textContent()).toContain("read-only");

    // A mistake: the URL left out. The error names the field; what was typed stays.
    await page.selectOption("#nf-type", "webhook");
    await page.fill("#nf-name", "page-hook");
    await page.fill("#nf-secret", HOOK_SECRET);
    await page.click("#notify-form button[type=submit]");
    await expect(page.locator(".toast-error").last().textContent()).resolves.toContain("url:");
    expect(await page.inputValue("#nf-name")).toBe("page-hook");
    problems.errors.length = 0; // the 400 above was the point

    await page.fill("#nf-url", `${hook.url}page`);
    await page.click("#notify-form button[type=submit]");
    await row(page, "page-hook").waitFor();
    expect(await row(page, "page-hook").textContent()).not.toContain(HOOK_SECRET);

    const got = hook.next();
    await row(page, "page-hook").getByRole("button", { name: "Test" }).click();
    await got;
    expect(arrived.at(-1)).toMatchObject({ signed: true, body: { action: "test", count: 1 } });
    await page.waitForFunction(() =>
      document.querySelector("#notify-test-result")?.textContent?.includes("received by page-test receiver"),
    );

    // Edit: secrets left blank keep their stored values; the test still arrives signed.
    await row(page, "page-hook").getByRole("button", { name: "Edit" }).click();
    expect(await page.inputValue("#nf-secret")).toBe("");
    await page.fill("#nf-cooldown", "60");
    await page.click("#notify-form button[type=submit]");
    await page.waitForFunction(() =>
      document.querySelector('tr[data-channel="page-hook"]')?.textContent?.includes("cooldown 60 s"),
    );
    const before = arrived.length;
    await row(page, "page-hook").getByRole("button", { name: "Test" }).click();
    await page.waitForFunction(() =>
      document.querySelector("#notify-test-result")?.textContent?.includes("page-hook: "),
    );
    expect(arrived.length).toBe(before + 1);
    expect(arrived.at(-1)?.signed).toBe(true);

    // The config-file channel can be tested too.
    await row(page, "from-yaml").getByRole("button", { name: "Test" }).click();
    await page.waitForFunction(() =>
      document.querySelector("#notify-test-result")?.textContent?.includes("from-yaml: "),
    );

    // Batch: disable both, then delete: the config-file channel stays, with its reason shown.
    await row(page, "page-hook").getByLabel("Select page-hook").check();
    await row(page, "from-yaml").getByLabel("Select from-yaml").check();
    await page.getByRole("button", { name: "Disable", exact: true }).click();
    await page.waitForFunction(
      () =>
        !(
          document.querySelector(
            'tr[data-channel="page-hook"] input[aria-label="Enable page-hook"]',
          ) as HTMLInputElement
        )?.checked &&
        !(
          document.querySelector(
            'tr[data-channel="from-yaml"] input[aria-label="Enable from-yaml"]',
          ) as HTMLInputElement
        )?.checked,
    );
    const list = await (await fetch(`${s.dashboardUrl}/api/v1/notifications`)).json();
    expect(list.channels.map((c: { name: string; enabled: boolean }) => `${c.name}:${c.enabled}`)).toEqual([
      "from-yaml:false",
      "page-hook:false",
    ]);
    await row(page, "page-hook").getByRole("button", { name: "Delete" }).click();
    await page.locator("dialog button[value=ok]").click();
    await row(page, "page-hook").waitFor({ state: "detached" });
    expect(await row(page, "from-yaml").count()).toBe(1);
    expect(problems.errors).toEqual([]);
    await page.close();
  },
  T,
);

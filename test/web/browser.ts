/**
 * Debian Chromium through playwright-core, for the dashboard tests and the screenshot script.
 * Never downloads a browser: without /usr/bin/chromium the tests fail and say how to install it.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.SLUICE_CHROMIUM ?? "/usr/bin/chromium";

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: the dashboard browser tests need Debian's Chromium (apt-get install -y chromium; .ci/run installs it).`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}

export interface PageProblems {
  errors: string[];
}

/** Record console errors, page errors and failed or 4xx/5xx requests on `page`. */
export function watchPage(page: Page): PageProblems {
  const p: PageProblems = { errors: [] };
  page.on("console", (m) => {
    if (m.type() === "error") p.errors.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => p.errors.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => {
    // Requests cut short by navigation or closing the page (the live stream, a refresh in flight)
    // are not failures; anything else (refused, reset, blocked) is.
    if (r.url().includes("/api/v1/live") || r.failure()?.errorText === "net::ERR_ABORTED") return;
    p.errors.push(`requestfailed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ""}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) p.errors.push(`http ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  return p;
}

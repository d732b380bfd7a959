/**
 * What a browser test of the dashboard runs against: a stand-in provider answering every provider
 * path, real sluice in process (proxy + dashboard), and Debian Chromium.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { startUpstream, type Upstream } from "../helpers/upstream.ts";
import { launchBrowser, type PageProblems, watchPage } from "./browser.ts";
import { answerProviders } from "./seed.ts";

export interface WebEnv {
  up: Upstream;
  s: InProcessSluice;
  browser: Browser;
  /** The dashboard's base URL. */
  base: string;
  /** GET `/api/v1<path>` as JSON; throws with the status and body on an error. */
  apiGet<T>(path: string): Promise<T>;
  /** A new 1280×900 page (of `ctx` when given) on `#/<hash>`, watched for console errors and failed requests. */
  open(hash: string, ctx?: BrowserContext): Promise<{ page: Page; problems: PageProblems }>;
  close(): Promise<void>;
}

/** `config`: extra sluice configuration (nested keys), as `startSluice` takes it. */
export async function startWebEnv(config?: Record<string, unknown>): Promise<WebEnv> {
  const up = await startUpstream();
  answerProviders(up);
  const s = await startSluice({ upstream: up.url, config });
  const base = s.dashboardUrl!;
  const browser = await launchBrowser();
  return {
    up,
    s,
    browser,
    base,
    async apiGet<T>(path: string): Promise<T> {
      const r = await fetch(`${base}/api/v1${path}`);
      if (!r.ok) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
      return (await r.json()) as T;
    },
    async open(hash, ctx) {
      const page = await (ctx ?? browser).newPage({ viewport: { width: 1280, height: 900 } });
      const problems = watchPage(page);
      page.setDefaultTimeout(10_000);
      await page.goto(`${base}/#/${hash}`);
      return { page, problems };
    },
    async close() {
      await browser.close();
      await s.stop();
      await up[Symbol.asyncDispose]?.();
    },
  };
}

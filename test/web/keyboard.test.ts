/**
 * The main pages by keyboard alone, in Chromium against real sluice seeded through the proxy: from
 * the top of the page, Tab goes through the skip link and every section of the navigation, then
 * into the page's own controls and its table; every stop shows its focus; Enter on a row or link
 * does what a click does.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { startWebEnv, type WebEnv } from "./env.ts";
import { seed } from "./seed.ts";

const T = 30_000;
/** More Tab presses than any page has stops before its table. */
const MAX_TABS = 150;
let env: WebEnv;

beforeAll(async () => {
  env = await startWebEnv();
  await seed(env.s.proxyUrl);
  await env.s.runtime.store.flush();
}, T);

afterAll(() => env?.close());

interface Stop {
  /** Tag, id and text, for messages. */
  name: string;
  href: string | null;
  inNav: boolean;
  inMain: boolean;
  /** Matches the page's own controls (filters, toggles) the test expects before the table. */
  control: boolean;
  target: boolean;
  /** `:focus-visible` and a drawn outline of at least 2 px. */
  visible: boolean;
  inViewport: boolean;
}

/** Press Tab from the top of the page until the first `target` has focus; every stop on the way. */
async function tabTo(page: Page, target: string, controls: string): Promise<Stop[]> {
  const stops: Stop[] = [];
  for (let i = 0; i < MAX_TABS; i++) {
    await page.keyboard.press("Tab");
    const stop = await page.evaluate(
      ([target, controls]) => {
        const el = document.activeElement as HTMLElement | null;
        if (!el || el === document.body) return null;
        const st = getComputedStyle(el);
        const r = el.getBoundingClientRect();
        return {
          name: `${el.tagName.toLowerCase()}#${el.id} "${(el.textContent ?? "").trim().slice(0, 30)}"`,
          href: el.getAttribute("href"),
          inNav: el.closest("nav") !== null,
          inMain: el.closest("main") !== null,
          control: el.matches(controls),
          target: document.querySelector(target) === el,
          visible:
            el.matches(":focus-visible") &&
            st.outlineStyle !== "none" &&
            Number.parseFloat(st.outlineWidth) >= 2,
          inViewport: r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth,
        };
      },
      [target, controls] as const,
    );
    if (!stop) continue;
    stops.push(stop);
    if (stop.target) return stops;
  }
  throw new Error(`${target} never got focus: ${stops.map((s) => s.name).join(", ")}`);
}

const PAGES: Array<{
  hash: string;
  /** The page's controls Tab must pass before the table. */
  controls: string;
  /** What Enter activates. */
  target: string;
  /** What Enter must have done. */
  done(page: Page, targetText: string): Promise<void>;
}> = [
  {
    hash: "",
    controls: "#stopped button[data-period], #stopped a.stopped-count",
    target: "#stopped-by-tool tbody a",
    async done(page, tool) {
      await page.waitForURL(/#\/audit\?client=/);
      await page.locator("#audit-table tbody tr").first().waitFor();
      expect(await page.inputValue("#audit-client")).toBe(tool);
      const rows = await page.locator("#audit-table tbody tr").allTextContents();
      expect(rows.filter((t) => !t.includes(tool))).toEqual([]);
    },
  },
  {
    hash: "findings",
    controls: "main select, main input, #findings-table button.sort",
    target: "#findings-table tbody tr",
    async done(page) {
      await page.locator("#detail-preview").waitFor();
      await page.waitForURL(/#\/findings\/\d+/);
      // The keyboard goes on in the detail.
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("finding-detail");
    },
  },
  {
    hash: "sessions",
    controls: "#sessions-table a",
    target: "#sessions-table tbody a",
    async done(page) {
      await page.waitForURL(/#\/sessions\/.+/);
      await page.locator("#sc-title").waitFor();
    },
  },
  {
    hash: "audit",
    controls: "main select, main input",
    target: '#audit-table tbody a[href^="#/findings?rule="]',
    async done(page, rule) {
      await page.waitForURL(new RegExp(`#/findings\\?rule=${rule}`));
      await page.locator("#findings-table tbody tr").first().waitFor();
      const rules = await page.locator("#findings-table tbody tr td:nth-child(4)").allTextContents();
      expect(rules.filter((t) => t !== rule)).toEqual([]);
    },
  },
];

for (const p of PAGES)
  test(
    `#/${p.hash}: Tab from the top through the navigation into the table, Enter opens the row`,
    async () => {
      const { page, problems } = await env.open(p.hash);
      await page.locator(p.target).first().waitFor();
      const stops = await tabTo(page, p.target, p.controls);
      // The skip link first, then every section of the navigation in order.
      expect(stops[0]!.name).toContain("Skip to content");
      const navHrefs = await page.locator("nav a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
      const navStops = stops.filter((s) => s.inNav).map((s) => s.href);
      expect(navStops).toEqual(navHrefs);
      const firstInMain = stops.findIndex((s) => s.inMain);
      expect(firstInMain).toBeGreaterThan(stops.findLastIndex((s) => s.inNav));
      // The page's own controls come before the target, inside the page.
      expect(stops.slice(firstInMain, -1).some((s) => s.control) || stops.at(-1)!.control).toBe(true);
      // Focus is shown at every stop, and the target is scrolled into view.
      expect(stops.filter((s) => !s.visible).map((s) => s.name)).toEqual([]);
      expect(stops.at(-1)!.inViewport).toBe(true);
      const text = ((await page.locator(p.target).first().textContent()) ?? "").trim();
      await page.keyboard.press("Enter");
      await p.done(page, text);
      await page.close();
      expect(problems.errors).toEqual([]);
    },
    T,
  );

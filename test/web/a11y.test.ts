/**
 * Accessibility checks in Chromium on every page, in both themes: text contrast (WCAG AA: 4.5:1, 3:1
 * for large text), an accessible name on every form control and button, and no raw secret in the DOM.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { startUpstream, type Upstream } from "../helpers/upstream.ts";
import { launchBrowser } from "./browser.ts";
import {
  answerProviders,
  claudeCodeBody,
  fakeAwsKey,
  fakeGithubToken,
  geminiCliBody,
  sendAnthropic,
  sendClaudeCode,
  sendGeminiCli,
  sendOpenAI,
} from "./seed.ts";

let up: Upstream;
let s: InProcessSluice;
let browser: Browser;
const secrets = [fakeAwsKey(), fakeGithubToken()];

const PAGES: Array<[string, string]> = [
  ["", "#card-today"],
  ["findings", "#findings-table tbody tr"],
  ["sessions", "#sessions-table"],
  ["rules", "#rules-table tbody tr"],
  ["allowlists", "#al-test-title"],
  ["pipeline", "#stages-table"],
  ["audit", "#audit-table"],
  ["connect", "#clients section"],
  ["notifications", "#notify-channels"],
];

beforeAll(async () => {
  up = await startUpstream();
  answerProviders(up);
  s = await startSluice({ upstream: up.url });
  browser = await launchBrowser();
  // Long values of real tools too: Claude Code's project path and branch, Gemini CLI's paths.
  const withKey = claudeCodeBody();
  withKey.messages.push(
    { role: "assistant", content: [{ type: "text", text: "Done." }] },
    { role: "user", content: [{ type: "text", text: `deploy with ${fakeAwsKey()}` }] },
  );
  const res = await Promise.all([
    sendAnthropic(s.proxyUrl, `keys ${secrets[0]} and ${secrets[1]} for jane@acme-corp.io`),
    sendClaudeCode(s.proxyUrl, claudeCodeBody()),
    sendClaudeCode(s.proxyUrl, withKey),
    sendGeminiCli(s.proxyUrl, "stream", geminiCliBody("stream", `push with ${fakeGithubToken()}`)),
    sendOpenAI(s.proxyUrl, `mail jane.doe@acme-corp.io, key ${fakeAwsKey()}`),
  ]);
  await Promise.all(res.map((r) => r.arrayBuffer()));
  await s.runtime.store.flush();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await up?.[Symbol.asyncDispose]?.();
});

/** Runs in the page: every visible text node's contrast and every unnamed control. */
function audit(): { lowContrast: string[]; unnamed: string[] } {
  const parse = (c: string): [number, number, number, number] => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1]!
      .split(/[ ,/]+/)
      .filter(Boolean)
      .map(Number);
    return [p[0]!, p[1]!, p[2]!, p[3] ?? 1];
  };
  const lum = ([r, g, b]: number[]) => {
    const f = (v: number) => {
      const x = v / 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(r!) + 0.7152 * f(g!) + 0.0722 * f(b!);
  };
  const background = (el: Element | null): number[] => {
    let rgb = [255, 255, 255];
    const layers: number[][] = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    if (layers.length === 0 || layers[layers.length - 1]![3]! < 1)
      rgb = parse(getComputedStyle(document.documentElement).backgroundColor).slice(0, 3);
    for (const l of layers.reverse()) rgb = rgb.map((v, i) => l[i]! * l[3]! + v * (1 - l[3]!));
    return rgb;
  };
  const lowContrast: string[] = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set<Element>();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || seen.has(el) || !n.textContent?.trim()) continue;
    seen.add(el);
    const r = el.getBoundingClientRect();
    const st = getComputedStyle(el);
    if (
      r.width === 0 ||
      r.height === 0 ||
      st.visibility === "hidden" ||
      el.closest("[hidden],.sr-only,option")
    )
      continue;
    const fg = parse(st.color);
    const bg = background(el);
    const fgRgb = fg.slice(0, 3).map((v, i) => v * fg[3]! + bg[i]! * (1 - fg[3]!));
    const [a, b] = [lum(fgRgb), lum(bg)];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = Number.parseFloat(st.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(st.fontWeight) >= 700);
    const disabled = (el as HTMLButtonElement).disabled || el.closest(":disabled");
    if (!disabled && ratio < (large ? 3 : 4.5))
      lowContrast.push(
        `${ratio.toFixed(2)} ${el.tagName.toLowerCase()}.${el.className} "${n.textContent.trim().slice(0, 30)}"`,
      );
  }
  const unnamed: string[] = [];
  for (const el of document.querySelectorAll("input, select, textarea, button, a[href]")) {
    const e = el as HTMLElement;
    if (e.closest("[hidden]") || (e as HTMLInputElement).type === "hidden") continue;
    const labelled =
      e.getAttribute("aria-label") ||
      e.getAttribute("aria-labelledby") ||
      (e.id && document.querySelector(`label[for="${e.id}"]`)) ||
      e.closest("label") ||
      (e.tagName !== "INPUT" && e.tagName !== "SELECT" && e.tagName !== "TEXTAREA" && e.textContent?.trim());
    if (!labelled) unnamed.push(`${e.tagName.toLowerCase()}#${e.id}.${e.className}`);
  }
  return { lowContrast, unnamed };
}

async function check(page: Page) {
  const problems: string[] = [];
  for (const [hash, ready] of PAGES) {
    await page.goto(`${s.dashboardUrl}/#/${hash}`);
    await page.locator(ready).first().waitFor({ timeout: 10_000 });
    const r = await page.evaluate(audit);
    for (const x of r.lowContrast) problems.push(`#/${hash} contrast ${x}`);
    for (const x of r.unnamed) problems.push(`#/${hash} no accessible name: ${x}`);
    const html = await page.content();
    for (const secret of secrets) if (html.includes(secret)) problems.push(`#/${hash} shows a raw secret`);
  }
  return problems;
}

for (const scheme of ["light", "dark"] as const)
  test(`${scheme} theme: contrast, control names, no raw secret on any page`, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: scheme });
    const problems = await check(page);
    // The finding detail too.
    await page.goto(`${s.dashboardUrl}/#/findings`);
    await page.locator("#findings-table tbody tr").first().click();
    await page.locator("#detail-preview").waitFor();
    const d = await page.evaluate(audit);
    problems.push(
      ...d.lowContrast.map((x) => `detail contrast ${x}`),
      ...d.unnamed.map((x) => `detail ${x}`),
    );
    await page.close();
    expect(problems).toEqual([]);
  }, 30_000);

test("the checker itself flags low contrast and an unnamed control", async () => {
  const page = await browser.newPage();
  await page.setContent(
    '<body style="background:#fff"><p style="color:#bbb">faint</p><p style="color:#222">fine</p><input id="x"><label for="y">Y</label><input id="y"></body>',
  );
  const r = await page.evaluate(audit);
  await page.close();
  expect(r.lowContrast).toHaveLength(1);
  expect(r.lowContrast[0]).toContain("faint");
  expect(r.unnamed).toEqual(["input#x."]);
}, 30_000);

test("usable from 1024 px wide: no page scrolls sideways", async () => {
  const page = await browser.newPage({ viewport: { width: 1024, height: 768 } });
  const wide: string[] = [];
  for (const [hash, ready] of PAGES) {
    await page.goto(`${s.dashboardUrl}/#/${hash}`);
    await page.locator(ready).first().waitFor({ timeout: 10_000 });
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    if (w > 1024) {
      // Elements and runs of text (an unbreakable hash overflows its box) that stick out.
      const culprits = await page.evaluate(() => {
        const out: string[] = [];
        const walker = document.createTreeWalker(
          document.body,
          NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT,
        );
        for (let n = walker.nextNode(); n && out.length < 3; n = walker.nextNode()) {
          const range = document.createRange();
          range.selectNodeContents(n);
          const parent = n.parentElement;
          if (
            range.getBoundingClientRect().right > 1024 &&
            (parent?.getBoundingClientRect().right ?? 0) <= 1024
          )
            out.push(
              `${parent?.tagName.toLowerCase()}.${parent?.className}: ${(n.textContent ?? "").slice(0, 40)}`,
            );
        }
        return out;
      });
      wide.push(`#/${hash} is ${w} px wide (${culprits.join(", ")})`);
    }
  }
  await page.goto(`${s.dashboardUrl}/#/findings`);
  await page.locator("#findings-table tbody tr").first().click();
  await page.locator("#detail-preview").waitFor();
  const w = await page.evaluate(() => document.documentElement.scrollWidth);
  if (w > 1024) wide.push(`finding detail is ${w} px wide`);
  await page.close();
  expect(wide).toEqual([]);
}, 30_000);

/** Runs in the page: every table cell whose right edge passes its table's box, and by how much. */
function cellsPastTheirBox(): string[] {
  const out: string[] = [];
  for (const wrap of document.querySelectorAll(".table-wrap")) {
    const right = wrap.getBoundingClientRect().right;
    const table = wrap.querySelector("table");
    for (const cell of wrap.querySelectorAll("th, td")) {
      const past = cell.getBoundingClientRect().right - right;
      if (past > 0.5)
        out.push(
          `#${table?.id || "(table)"} ${cell.tagName.toLowerCase()} "${(cell.textContent ?? "").trim().slice(0, 30)}" by ${Math.round(past)} px`,
        );
    }
  }
  return out;
}

test("from 1024 px wide every column shows whole: no table cell passes its table's box", async () => {
  const page = await browser.newPage({ viewport: { width: 1024, height: 768 } });
  const cut: string[] = [];
  const tables: string[] = [];
  const check = async (where: string) => {
    for (const x of await page.evaluate(cellsPastTheirBox)) cut.push(`${where}: ${x}`);
    tables.push(...(await page.locator(".table-wrap table").evaluateAll((ts) => ts.map((t) => t.id))));
  };
  for (const [hash, ready] of [
    ["", "#stopped-by-project tbody tr"],
    ["findings", "#findings-table tbody tr"],
    ["audit", "#audit-table tbody tr"],
    ["sessions", "#sessions-table tbody tr"],
  ] as const) {
    await page.goto(`${s.dashboardUrl}/#/${hash}`);
    await page.locator(ready).first().waitFor({ timeout: 10_000 });
    await check(`#/${hash}`);
  }
  // The findings table with a finding's detail open, at 1024 and 1280 px.
  for (const width of [1024, 1280]) {
    await page.setViewportSize({ width, height: 768 });
    await page.goto(`${s.dashboardUrl}/#/findings`);
    await page.locator("#findings-table tbody tr").first().click();
    await page.locator("#detail-preview").waitFor();
    await check(`#/findings at ${width} px with the detail open`);
  }
  await page.close();
  expect(tables).toEqual(
    expect.arrayContaining([
      "stopped-by-tool",
      "stopped-by-project",
      "findings-table",
      "audit-table",
      "sessions-table",
    ]),
  );
  expect(cut).toEqual([]);
}, 30_000);

/**
 * Regenerate the dashboard screenshots in docs/screenshots/ (run by hand, not by `bun test`):
 *   bun test/web/screenshots.ts
 * Starts real sluice against the stand-in upstream, sends traffic from three tools through the
 * proxy (the recorded Claude Code and Gemini CLI requests among it), then photographs the overview,
 * findings, rules and connect pages in Debian Chromium.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { startSluice } from "../helpers/sluice.ts";
import { startUpstream } from "../helpers/upstream.ts";
import { launchBrowser, watchPage } from "./browser.ts";
import {
  answerProviders,
  claudeCodeBody,
  fakeAwsKey,
  fakeGithubToken,
  geminiCliBody,
  seed,
  sendAnthropic,
  sendClaudeCode,
  sendGemini,
  sendGeminiCli,
  sendOpenAI,
} from "./seed.ts";

const OUT = resolve(import.meta.dir, "../../docs/screenshots");
mkdirSync(OUT, { recursive: true });

await using up = await startUpstream();
answerProviders(up);
// A rule that redacts and one that alerts, so that the Overview shows every action it counts.
await using s = await startSluice({
  upstream: up.url,
  config: {
    custom_rules: [
      { name: "ticket_ref", pattern: "TCK-[0-9]{6}", action: "redact", severity: "warning" },
      { name: "codename", pattern: "bluebird-[0-9]{4}", action: "alert", severity: "warning" },
    ],
  },
});
const base = s.dashboardUrl!;
for (let i = 0; i < 3; i++) await seed(s.proxyUrl);
// Claude Code in its project (the recorded request, one more turn each) and a Gemini CLI run.
for (const text of [
  `release with ${fakeAwsKey()}`,
  "see TCK-204816 for the reservation bug",
  "is bluebird-2048 still on?",
]) {
  const body = claudeCodeBody();
  body.messages.push(
    { role: "assistant", content: [{ type: "text", text: "Done." }] },
    { role: "user", content: [{ type: "text", text }] },
  );
  await (await sendClaudeCode(s.proxyUrl, body)).arrayBuffer();
}
await (
  await sendGeminiCli(s.proxyUrl, "stream", geminiCliBody("stream", `push with ${fakeGithubToken()}`))
).arrayBuffer();
const session = crypto.randomUUID();
for (const text of [
  `aws creds ${fakeAwsKey()} for the deploy script`,
  "customer record: Jane Roe, jane.roe@example-customer.com, +1 415 555 0142",
  `CI token ${fakeGithubToken()}`,
])
  await (await sendAnthropic(s.proxyUrl, text, session)).arrayBuffer();
await s.runtime.store.flush();

const browser = await launchBrowser();
const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "light" });
const page = await ctx.newPage();
const problems = watchPage(page);

async function shot(name: string, hash: string, ready: string, prepare?: () => Promise<void>) {
  await page.goto(`${base}/#/${hash}`);
  await page.locator(ready).first().waitFor();
  if (prepare) await prepare();
  await page.evaluate(() => document.fonts.ready);
  const file = join(OUT, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(`wrote ${file}`);
}

await shot("overview", "", "#card-today", async () => {
  await page.locator("#live-pill.on").waitFor();
  await (await sendOpenAI(s.proxyUrl, `here is my key ${fakeAwsKey()}`)).arrayBuffer();
  await (await sendGemini(s.proxyUrl, "a question about generics")).arrayBuffer();
  await (await sendAnthropic(s.proxyUrl, `push with ${fakeGithubToken()}`)).arrayBuffer();
  await page.locator('#live-feed li[data-type="finding"]').first().waitFor();
  await page.locator("#live-feed li").nth(3).waitFor();
});
// Wide enough for the table beside a finding's detail (narrower, the detail goes above the table).
await page.setViewportSize({ width: 1440, height: 860 });
await shot("findings", "findings", "#findings-table tbody tr", async () => {
  await page.locator("#findings-table tbody tr").first().click();
  await page.locator("#detail-preview").waitFor();
});
await page.setViewportSize({ width: 1280, height: 860 });
await shot("rules", "rules", "#rules-table tbody tr", async () => {
  await page.fill("#rule-search", "aws, github");
  await page.waitForURL(/q=aws/);
  await page.locator('#rules-table tr[data-rule^="aws"]').first().waitFor();
  await page.locator("#rules-table tbody tr").nth(0).waitFor();
  await page.waitForFunction(() => !document.querySelector('#rules-table tr[data-rule="anthropic_api_key"]'));
});
await shot("connect", "connect", "#clients section");
const dark = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "dark" });
const dpage = await dark.newPage();
await dpage.goto(`${base}/#/`);
await dpage.locator("#card-today").waitFor();
await dpage.screenshot({ path: join(OUT, "overview-dark.png") });
console.log(`wrote ${join(OUT, "overview-dark.png")}`);

await browser.close();
if (problems.errors.length) {
  console.error(problems.errors.join("\n"));
  process.exitCode = 1;
}

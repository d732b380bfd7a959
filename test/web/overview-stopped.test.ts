/**
 * "What sluice stopped" on the Overview in Chromium, against real sluice fed real tool requests
 * through the proxy: its counts of requests blocked, redacted and alerted, today and this week, per
 * tool and per project, are `/api/v1/stats`'s `request_actions` and what was sent; live traffic
 * updates them. A session made by the recorded Claude Code request shows its project and branch.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import type { ActionWindow, RequestActions } from "../../src/store/records.ts";
import { startWebEnv, type WebEnv } from "./env.ts";
import {
  type ClaudeCodeBody,
  claudeCodeBody,
  claudeCodeSession,
  fakeAwsKey,
  fakeGithubToken,
  geminiCliBody,
  sendAnthropic,
  sendClaudeCode,
  sendGeminiCli,
  sendOpenAI,
} from "./seed.ts";

const T = 30_000;
let env: WebEnv;

const INVENTORY = "/home/dev/projects/inventory-service";
const SHOP = "/home/dev/projects/web-shop";
const GEMINI_WORKSPACE = "/tmp/logins-rec/work";

/** The recorded Claude Code turn, moved to `cwd` in a new session, with one more user turn saying `text`. */
function claudeCodeTurn(text: string, cwd = INVENTORY): ClaudeCodeBody {
  const base = claudeCodeBody();
  const session = claudeCodeSession(base);
  const moved = JSON.parse(
    JSON.stringify(base).replaceAll(INVENTORY, cwd).replaceAll(session, crypto.randomUUID()),
  ) as ClaudeCodeBody;
  moved.messages.push(
    { role: "assistant", content: [{ type: "text", text: "Done." }] },
    { role: "user", content: [{ type: "text", text }] },
  );
  return moved;
}

async function settle(res: Promise<Response>[]): Promise<number[]> {
  const all = await Promise.all(res);
  await Promise.all(all.map((r) => r.arrayBuffer()));
  await env.s.runtime.store.flush();
  return all.map((r) => r.status);
}

beforeAll(async () => {
  env = await startWebEnv({
    // A rule of each acted action besides the community rules' blocks.
    custom_rules: [
      { name: "ticket_ref", pattern: "TCK-[0-9]{6}", action: "redact", severity: "warning" },
      { name: "codename", pattern: "bluebird-[0-9]{4}", action: "alert", severity: "warning" },
    ],
  });
  const p = env.s.proxyUrl;
  const statuses = await settle([
    // Blocked: Claude Code in two projects (one request with two secrets counts once), Gemini CLI.
    sendClaudeCode(p, claudeCodeTurn(`deploy with ${fakeAwsKey()}`)),
    sendClaudeCode(p, claudeCodeTurn(`keys ${fakeAwsKey()} and ${fakeGithubToken()}`, SHOP)),
    sendGeminiCli(p, "stream", geminiCliBody("stream", `push with ${fakeGithubToken()}`)),
    // Redacted, alerted, and passed.
    sendClaudeCode(p, claudeCodeTurn("see ticket TCK-204816 for the reservation bug", SHOP)),
    sendOpenAI(p, "status of bluebird-2048?"),
    sendAnthropic(p, "a harmless question about generics"),
    sendClaudeCode(p, claudeCodeBody()),
  ]);
  expect(statuses).toEqual([400, 400, 403, 200, 200, 200, 200]);
}, T);

afterAll(() => env?.close());

const count = async (page: Page, sel: string) =>
  Number((await page.locator(sel).textContent())!.replace(/\D/g, ""));

/** The rows of a breakdown table as the API lists them. */
async function tableRows(page: Page, id: string, key: "client" | "project") {
  const rows = await page
    .locator(`#${id} tbody tr`)
    .evaluateAll((trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td.textContent ?? "")),
    );
  return rows.map(([name, block, redact, alert]) => ({
    [key]: key === "project" && name === "not named" ? null : name,
    block: Number(block),
    redact: Number(redact),
    alert: Number(alert),
  }));
}

async function expectShown(page: Page, w: ActionWindow, period: "today" | "week") {
  for (const action of ["block", "redact", "alert"] as const)
    expect(await count(page, `#stopped-${action} .stopped-${period} .count`)).toBe(w[action]);
  await page.locator(`#stopped button[data-period="${period}"]`).click();
  expect(await tableRows(page, "stopped-by-tool", "client")).toEqual(w.by_client);
  expect(await tableRows(page, "stopped-by-project", "project")).toEqual(w.by_project);
}

test(
  "the Overview's blocked, redacted and alerted counts, per tool and per project, match /api/v1/stats",
  async () => {
    const { request_actions: ra } = await env.apiGet<{ request_actions: RequestActions }>("/stats");
    // What was sent: each request once, under its action.
    expect([ra.today.block, ra.today.redact, ra.today.alert]).toEqual([3, 1, 1]);
    expect(ra.today.by_client).toEqual([
      { client: "claude-code", block: 2, redact: 1, alert: 0 },
      { client: "codex", block: 0, redact: 0, alert: 1 },
      { client: "gemini-cli", block: 1, redact: 0, alert: 0 },
    ]);
    expect(ra.today.by_project).toEqual([
      { project: SHOP, block: 1, redact: 1, alert: 0 },
      { project: INVENTORY, block: 1, redact: 0, alert: 0 },
      { project: GEMINI_WORKSPACE, block: 1, redact: 0, alert: 0 },
      { project: null, block: 0, redact: 0, alert: 1 },
    ]);
    // Everything happened today, so the week holds the same.
    expect({ ...ra.week, since: "" }).toEqual({ ...ra.today, since: "" });

    const { page, problems } = await env.open("");
    await page.locator("#stopped-by-tool").waitFor();
    expect(await page.getByRole("region", { name: "What sluice stopped" }).count()).toBe(1);
    await expectShown(page, ra.today, "today");
    await expectShown(page, ra.week, "week");
    expect(await page.locator("#stopped-by-tool-title").textContent()).toBe("By tool, this week");
    // Each count names itself and opens the requests it counts.
    const blockedToday = page.getByRole("link", { name: "Blocked: 3 today" });
    expect(await blockedToday.getAttribute("href")).toBe("#/audit?action=block&days=1");

    // New traffic updates the panel without a reload.
    await settle([sendClaudeCode(env.s.proxyUrl, claudeCodeTurn(`again ${fakeAwsKey()}`))]);
    await page.waitForFunction(
      () => document.querySelector("#stopped-block .stopped-today .count")?.textContent === "4",
    );
    const after = await env.apiGet<{ request_actions: RequestActions }>("/stats");
    await expectShown(page, after.request_actions.week, "week");
    await page.close();
    expect(problems.errors).toEqual([]);
  },
  T,
);

test(
  "a session made by the recorded Claude Code request shows its project and branch on the Sessions page",
  async () => {
    const id = claudeCodeSession(claudeCodeBody());
    const { page, problems } = await env.open("sessions");
    const row = page.locator("#sessions-table tbody tr", {
      has: page.locator(`a[href="#/sessions/${id}"]`),
    });
    await row.waitFor();
    const heads = await page.locator("#sessions-table thead th").allTextContents();
    const cells = await row.locator("td").allTextContents();
    expect(cells[heads.indexOf("Project")]).toBe(INVENTORY);
    expect(cells[heads.indexOf("Branch")]).toBe("feature/stock-reservations");
    expect(cells[heads.indexOf("Tool")]).toStartWith("claude-code");
    // And on the session's own page.
    await row.locator("a").first().click();
    await page.waitForURL(new RegExp(`#/sessions/${id}$`));
    await page.getByText("feature/stock-reservations").first().waitFor();
    expect(await page.locator("main").textContent()).toContain(INVENTORY);
    await page.close();
    expect(problems.errors).toEqual([]);
  },
  T,
);

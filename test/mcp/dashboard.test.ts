/**
 * `sluice mcp` next to a running `sluice serve` (the real runtime, in process): its findings and
 * `mcp-event`s, written by this separate process into the same store, reach the dashboard's live
 * stream and API; passthrough set from the dashboard turns MCP inspection off.
 */
import { describe, expect, test } from "bun:test";
import { followLive } from "../helpers/live.ts";
import { startSluice } from "../helpers/sluice.ts";
import { fixture, RawSession, sdkOverSluice } from "./helpers.ts";

/** Follow `/api/v1/live`; resolves `next(pred)` with the first matching event. */
async function live(url: string) {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return followLive(res);
}

describe("with a dashboard running", () => {
  test("sluice mcp's findings and events reach the live stream and the findings API", async () => {
    await using s = await startSluice({});
    const base = s.dashboardUrl!;
    const stream = await live(`${base}/api/v1/live`);
    {
      await using m = await sdkOverSluice(["--", "bun", fixture("poison-server.ts"), "cross-tool"], {
        home: s.configDir,
      });
      await m.client.listTools();
      const ev = await stream.next((e) => e.event === "mcp-event" && e.data.kind === "tool-poisoning");
      expect(ev.data).toMatchObject({
        type: "mcp-event",
        tool: "daily_quote",
        field: "description",
        category: "cross_tool_manipulation",
        severity: "critical",
      });
      const f = await stream.next((e) => e.event === "finding" && e.data.finding_type === "tool_poisoning");
      expect(f.data).toMatchObject({ transport: "mcp", rule: "mcp_cross_tool_manipulation" });
    }
    await stream.close();
    const r = await fetch(`${base}/api/v1/findings?finding_type=tool_poisoning`);
    const body = (await r.json()) as { total: number; findings: { transport: string }[] };
    expect(body.total).toBe(2);
    expect(body.findings.every((x) => x.transport === "mcp")).toBe(true);
  });

  test("passthrough switched on in the dashboard: sluice mcp inspects nothing", async () => {
    await using s = await startSluice({});
    const base = s.dashboardUrl!;
    const session = (await (await fetch(`${base}/api/v1/auth/session`)).json()) as { csrf_token: string };
    const put = await fetch(`${base}/api/v1/config`, {
      method: "PUT",
      headers: { "content-type": "application/json", "x-csrf-token": session.csrf_token },
      body: JSON.stringify({ "proxy.mode": "passthrough" }),
    });
    expect(put.status).toBe(200);
    await s.runtime.store.flush();
    await using raw = new RawSession(
      ["--action", "block", "--", "bun", fixture("poison-server.ts"), "cross-tool"],
      {
        home: s.configDir,
      },
    );
    await raw.initialize();
    const list = await raw.request("tools/list");
    expect((list.result as { tools: unknown[] }).tools).toHaveLength(2);
    await raw.close();
    await raw.log.ended;
    expect(raw.log.events("tool-poisoning")).toEqual([]);
  });
});

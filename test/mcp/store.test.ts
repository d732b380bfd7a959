/**
 * `sluice mcp` and the store: findings and `mcp-event` rows land in the same SQLite database the
 * dashboard reads (written by this separate process), never with a raw value; passthrough mode
 * persisted by `sluice serve` turns MCP scanning off.
 */

import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Bus } from "../../src/core/bus.ts";
import { Logger } from "../../src/core/log.ts";
import { openStore } from "../../src/store/index.ts";
import { fixture, RawSession, sdkOverSluice, tempHome } from "./helpers.ts";

describe("store", () => {
  test("poisoning and drift findings and events are recorded with transport mcp", async () => {
    const home = tempHome();
    {
      await using s = await sdkOverSluice(["--", "bun", fixture("poison-server.ts"), "hidden-tags"], {
        home,
      });
      await s.client.listTools();
      await s.log.waitFor((l) => l.kind === "tool-poisoning");
    }
    const db = new Database(join(home, "sluice.db"), { readonly: true });
    const events = db.query("SELECT kind, server, severity, message, data FROM mcp_events").all() as {
      kind: string;
      server: string;
      data: string;
      message: string;
    }[];
    const findings = db
      .query("SELECT finding_type, rule, transport, path, severity, session_id FROM findings")
      .all() as {
      finding_type: string;
      rule: string;
      transport: string;
      path: string;
    }[];
    db.close();
    expect(events.map((e) => e.kind)).toEqual([
      "session-start",
      "env-filtered",
      "tool-poisoning",
      "tool-poisoning",
      "session-end",
    ]);
    expect(events[0]!.server).toContain("poison-server.ts hidden-tags");
    expect(JSON.parse(events[2]!.data)).toMatchObject({
      tool: "add",
      field: "description",
      category: "hidden_text",
    });
    // Withheld variables are listed by name only.
    expect(JSON.parse(events[1]!.data).withheld).toEqual(["SLUICE_HOME"]);
    expect(JSON.parse(events[4]!.data)).toMatchObject({
      mode: "stdio",
      exit_code: 0,
      client: "sluice-test",
      server_name: "poison-hidden-tags",
    });
    expect(findings.map((f) => [f.finding_type, f.rule, f.transport, f.path]).sort()).toEqual([
      ["tool_poisoning", "mcp_file_exfiltration", "mcp", "tools[add].description"],
      ["tool_poisoning", "mcp_hidden_text", "mcp", "tools[add].description"],
    ]);
  });

  test("passthrough persisted in the store: no MCP scanning, nothing withheld, nothing recorded", async () => {
    const home = tempHome();
    const store = openStore({ configDir: home, bus: new Bus(), log: new Logger({ stderr: false }) });
    store.setSetting("proxy.mode", "passthrough");
    await store.flush();
    await store.close();
    await using raw = new RawSession(
      [
        "--action",
        "block",
        "--session-binding",
        "--",
        "bun",
        fixture("poison-server.ts"),
        "file-exfiltration",
      ],
      { home },
    );
    await raw.initialize();
    const list = await raw.request("tools/list");
    expect((list.result as { tools: unknown[] }).tools).toHaveLength(2);
    const r = await raw.request("tools/call", { name: "not-listed", arguments: {} });
    expect((r.error as { code?: number } | undefined)?.code).not.toBe(-32001);
    await raw.close();
    await raw.log.ended;
    expect(raw.log.events("tool-poisoning")).toEqual([]);
    expect(raw.log.events("unknown-tool")).toEqual([]);
  });

  test("--no-store: events go to the JSON log only", async () => {
    const home = tempHome();
    await using s = await sdkOverSluice(
      ["--no-store", "--", "bun", fixture("poison-server.ts"), "cross-tool"],
      { home },
    );
    await s.client.listTools();
    const e = await s.log.waitFor((l) => l.kind === "tool-poisoning");
    expect(e).toMatchObject({ level: "warning", category: "cross_tool_manipulation" });
    expect(await Bun.file(join(home, "sluice.db")).exists()).toBe(false);
  });
});

/**
 * Argument and result scanning with the real pipeline and matcher, end to end through `sluice mcp`
 * (stdio) and the SDK client. The recording fixture proves a blocked call never reached the server.
 */

import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startHttpMcpServer, startWsMcpServer } from "./fixtures/remote-servers.ts";
import { fixture, sdkOverSluice, tempHome } from "./helpers.ts";

const TOKEN = "sluicetest_4f9a1c2e8b7d6a5f";
const rule = (action: string) => ({
  custom_rules: [{ name: "test-token", pattern: "sluicetest_[a-f0-9]{16}", severity: "critical", action }],
});

describe("scanning with the payload pipeline", () => {
  test("block: error names the rule and path; server, logs and store never see the value", async () => {
    const home = tempHome(rule("block"));
    const rec = join(home, "received.jsonl");
    {
      await using s = await sdkOverSluice(["--", "bun", fixture("recording-server.ts"), rec], { home });
      const err = await s.client
        .callTool({ name: "write_file", arguments: { path: "deploy.env", content: `TOKEN=${TOKEN}` } })
        .then(
          () => null,
          (e: Error) => e,
        );
      expect(err).toBeInstanceOf(Error);
      expect(err!.message).toContain("sluice blocked tools/call write_file");
      expect(err!.message).toContain("params.arguments.content");
      expect(err!.message).toContain("test-token");
      expect(err!.message).not.toContain(TOKEN);
      // The session goes on: a clean call passes.
      const ok = await s.client.callTool({ name: "echo", arguments: { message: "clean" } });
      expect((ok.content as { text: string }[])[0]!.text).toBe("clean");
      expect(s.log.text).not.toContain(TOKEN);
    }
    const received = await Bun.file(rec).text();
    expect(received).toContain('"clean"');
    expect(received).not.toContain(TOKEN);
    expect(received).not.toContain("deploy.env");
    const db = new Database(join(home, "sluice.db"), { readonly: true });
    const rows = db.query("SELECT * FROM findings WHERE transport = 'mcp'").all();
    const events = db.query("SELECT * FROM mcp_events").all();
    db.close();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(TOKEN);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  test("--action overrides the default action for one run", async () => {
    const home = tempHome(rule(""));
    const rec = join(home, "received.jsonl");
    {
      await using s = await sdkOverSluice(["--", "bun", fixture("recording-server.ts"), rec], { home });
      await s.client.callTool({ name: "echo", arguments: { message: TOKEN } });
    }
    expect(await Bun.file(rec).text()).toContain(TOKEN); // default_action log: forwarded
    const rec2 = join(home, "received2.jsonl");
    {
      await using s = await sdkOverSluice(
        ["--action", "block", "--", "bun", fixture("recording-server.ts"), rec2],
        { home },
      );
      const err = await s.client.callTool({ name: "echo", arguments: { message: TOKEN } }).then(
        () => null,
        (e: Error) => e,
      );
      expect(err).toBeInstanceOf(Error);
    }
    expect(await Bun.file(rec2).text()).not.toContain(TOKEN);
  });

  test("redact: the server receives a placeholder instead of the value", async () => {
    const home = tempHome(rule("redact"));
    const rec = join(home, "received.jsonl");
    {
      await using s = await sdkOverSluice(["--", "bun", fixture("recording-server.ts"), rec], { home });
      const r = await s.client.callTool({ name: "echo", arguments: { message: `key ${TOKEN} end` } });
      expect((r.content as { text: string }[])[0]!.text).toMatch(/^key \[REDACTED:[^\]]+\] end$/);
    }
    expect(await Bun.file(rec).text()).not.toContain(TOKEN);
  });

  test("tool results are scanned: a secret in a result is blocked before it reaches the client", async () => {
    const home = tempHome(rule("block"));
    await using s = await sdkOverSluice(
      ["--", "bun", fixture("recording-server.ts"), join(home, "r.jsonl"), TOKEN],
      {
        home,
      },
    );
    const err = await s.client.callTool({ name: "read_secret", arguments: {} }).then(
      (r) => JSON.stringify(r),
      (e: Error) => e.message,
    );
    expect(err).toContain("sluice blocked the result of tools/call read_secret");
    expect(err).not.toContain(TOKEN);
  });
});

describe("shipped rules in the network modes", () => {
  // A GitHub token shape (not a real token): the community rule github_pat blocks by default.
  const GH = `ghp_${"R8kq2Lr0Zt7bWc5mNx4Pq9Vs3Dy6Hf1Ja2Ke"}`;

  test("a GitHub token in tools/call arguments is blocked over the HTTP and WebSocket bridges", async () => {
    await using http = startHttpMcpServer();
    await using ws = startWsMcpServer();
    for (const up of [http, ws]) {
      await using s = await sdkOverSluice(["--upstream", up.url]);
      const err = await s.client.callTool({ name: "echo", arguments: { message: `push with ${GH}` } }).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).toContain("github_pat at params.arguments.message");
      expect(err?.message).not.toContain(GH);
      expect(up.received.some((b) => b.includes(GH))).toBe(false);
      expect(s.log.text).not.toContain(GH);
    }
  });
});

describe("defence in depth", () => {
  test("with --no-env-filter, a server that echoes its environment has the result blocked, not leaked", async () => {
    const key = `AKIA${"Z7QWERTYUIOPASDF"}`;
    await using s = await sdkOverSluice(["--no-env-filter", "--", "bun", fixture("env-server.ts")], {
      env: { DEPLOY_KEY_ID: key },
    });
    const out = await s.client.callTool({ name: "env", arguments: {} }).then(
      (r) => JSON.stringify(r),
      (e: Error) => e.message,
    );
    expect(out).toContain("sluice blocked the result of tools/call env");
    expect(out).not.toContain(key);
  });
});

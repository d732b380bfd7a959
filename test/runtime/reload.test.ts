/**
 * The runtime's reload path (`PUT /api/v1/config` and SIGHUP share it) and mode persistence:
 * flat keys are validated, persisted into config.yaml (comments kept) and swapped in whole; an
 * invalid patch leaves file and config untouched; proxy.mode survives a restart; custom_rules are
 * reconciled into the rule set.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startSluice } from "../helpers/sluice.ts";
import { json, startUpstream } from "../helpers/upstream.ts";

test("reload(patch) validates, persists into config.yaml keeping comments, and swaps the config", async () => {
  await using s = await startSluice({ dashboard: false });
  const file = join(s.configDir, "config.yaml");
  writeFileSync(file, `# my settings\n${readFileSync(file, "utf8")}`);
  const reloaded: string[][] = [];
  s.runtime.bus.on("config-reloaded", (e) => reloaded.push(e.changes));
  const r = await s.runtime.reload({ "proxy.timeout": 42, "proxy.retries": 3 }, "api");
  expect(r.ok).toBe(true);
  expect(r.changes).toEqual(["proxy.timeout: 120 -> 42", "proxy.retries: 1 -> 3"]);
  expect(s.runtime.config().proxy.timeout).toBe(42);
  const text = readFileSync(file, "utf8");
  expect(text).toContain("# my settings");
  expect(text).toMatch(/timeout: 42/);
  expect(reloaded).toEqual([r.changes]);

  const bad = await s.runtime.reload({ "proxy.timeout": 0 }, "api");
  expect(bad.ok).toBe(false);
  expect(bad.error).toContain("proxy.timeout = 0 is invalid: allowed range 1 to 300");
  expect(bad.error).not.toContain(".tmp");
  expect(s.runtime.config().proxy.timeout).toBe(42);
  expect(readFileSync(file, "utf8")).toBe(text);
});

test("proxy.mode through reload switches mode, emits mode-changed, and survives a restart", async () => {
  await using up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({}));
  let home: string;
  {
    await using s = await startSluice({ upstream: up.url, dashboard: false });
    home = s.configDir;
    const modes: string[] = [];
    s.runtime.bus.on("mode-changed", (e) => modes.push(`${e.previous}->${e.mode}`));
    const r = await s.runtime.reload({ "proxy.mode": "passthrough" }, "api");
    expect(r.ok).toBe(true);
    expect(s.runtime.mode()).toBe("passthrough");
    expect(modes).toEqual(["active->passthrough"]);
  }
  await using again = await startSluice({
    upstream: up.url,
    dashboard: false,
    home,
    config: { proxy: { mode: "active" } },
  });
  expect(again.runtime.mode()).toBe("passthrough");
});

test("custom_rules are reconciled on reload and bump the rules version", async () => {
  await using s = await startSluice({ dashboard: false, noDefaultRules: true });
  const v0 = s.runtime.rulesVersion();
  const r = await s.runtime.reload(
    {
      custom_rules: [
        { name: "internal-host", pattern: "corp\\.internal", severity: "high", action: "block" },
      ],
    },
    "api",
  );
  expect(r.ok).toBe(true);
  expect(s.runtime.rulesVersion()).toBeGreaterThan(v0);
  expect(s.runtime.rules().map((x) => x.name)).toContain("internal-host");
});

test("a busy host queues requests beyond proxy.max_connections and warns once", async () => {
  await using up = await startUpstream();
  const gates: (() => void)[] = [];
  let concurrent = 0;
  let peak = 0;
  up.on("POST", "/v1/chat/completions", async () => {
    concurrent++;
    peak = Math.max(peak, concurrent);
    await new Promise<void>((r) => gates.push(r));
    concurrent--;
    return json({ ok: true });
  });
  await using s = await startSluice({
    upstream: up.url,
    dashboard: false,
    config: { proxy: { max_connections: 2 } },
  });
  const lines: string[] = [];
  let warned!: () => void;
  const busyWarning = new Promise<void>((r) => (warned = r));
  s.runtime.log.follow((l) => {
    lines.push(l);
    if (l.includes("are busy")) warned();
  });
  const send = () =>
    fetch(`${s.proxyUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-x" },
      body: "{}",
    });
  const all = [send(), send(), send(), send()];
  while (gates.length < 2) await up.nextRequest();
  // Two are upstream; the others wait in sluice's queue.
  expect(up.requests.length).toBe(2);
  await busyWarning;
  for (let released = 0; released < 4; released++) {
    while (gates.length === 0) await up.nextRequest();
    gates.shift()!();
  }
  const statuses = (await Promise.all(all)).map((r) => r.status);
  expect(statuses).toEqual([200, 200, 200, 200]);
  expect(peak).toBe(2);
  expect(lines.filter((l) => l.includes("are busy")).length).toBe(1);
});

test("the community rules are imported on first serve unless --no-default-rules or rules.auto_import: false", async () => {
  const { loadBuiltinRules } = await import("../../src/detect/builtin.ts");
  const builtin = loadBuiltinRules().filter((r) => r.enabled).length;
  const count = (rt: { rules(): { source: string }[] }) =>
    rt.rules().filter((r) => r.source === "builtin").length;
  {
    await using s = await startSluice({ dashboard: false });
    expect(count(s.runtime)).toBe(builtin);
  }
  {
    await using s = await startSluice({ dashboard: false, noDefaultRules: true });
    expect(count(s.runtime)).toBe(0);
  }
  {
    await using s = await startSluice({ dashboard: false, config: { rules: { auto_import: false } } });
    expect(count(s.runtime)).toBe(0);
  }
});

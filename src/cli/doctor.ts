/**
 * `sluice doctor`: whether each installed tool's settings route it through sluice, when sluice last
 * saw it, and what of its traffic sluice could not read. Exit 0 when every installed tool is routed,
 * 1 otherwise, with the fix printed. Sends nothing anywhere.
 */
import { defineCommand } from "citty";
import { type Fail, failer, readConfig } from "./_flags.ts";

const fail: Fail = failer("doctor");

export default defineCommand({
  meta: {
    name: "doctor",
    description:
      "Check that every installed AI tool is routed through sluice, for the sign-in mode it uses; show when sluice last saw it and what it could not read. Exit 0: all routed, 1: something is not.",
  },
  args: {
    json: { type: "boolean", description: "Print the checks as JSON" },
    config: { type: "string", alias: "c", description: "Config file (default {config_dir}/config.yaml)" },
  },
  async run({ args }) {
    const { tools, proxyUrlOf } = await import("../connect/tools.ts");
    const { checkTools } = await import("../connect/doctor.ts");
    const { homedir } = await import("node:os");
    const { existsSync } = await import("node:fs");
    const { join } = await import("node:path");
    const loaded = await readConfig(fail, args.config);
    const proxy = proxyUrlOf(loaded.config.port);
    let store = null;
    const dbFile = join(loaded.configDir, "sluice.db");
    if (existsSync(dbFile)) {
      try {
        const { Database } = await import("bun:sqlite");
        const { ClientTrafficRepo } = await import("../store/client-traffic.ts");
        const db = new Database(dbFile, { readonly: true });
        const repo = new ClientTrafficRepo(db);
        store = { traffic: repo.traffic(), unscanned: repo.unscanned(7) };
        db.close();
      } catch {
        /* an older or busy database: checks without traffic */
      }
    }
    const home = process.env.HOME ?? homedir();
    const checks = checkTools(
      tools(proxy),
      proxy,
      { home, shell: process.env.SHELL, configDir: loaded.configDir, vars: process.env },
      store,
    );
    const installed = checks.filter((c) => c.installed);
    process.exitCode = installed.every((c) => c.routed) ? 0 : 1;
    if (args.json) {
      console.log(JSON.stringify({ proxy, tools: checks }, null, 2));
      return;
    }
    console.log(`sluice at ${proxy}${store ? "" : " (no traffic recorded yet)"}`);
    for (const c of checks) {
      if (!c.installed) {
        console.log(`- ${c.name}: not installed`);
        continue;
      }
      console.log(
        `${c.routed ? "✓" : "✗"} ${c.name}${c.login ? ` (${c.login})` : ""}: ${c.routed ? "routed through sluice" : "NOT routed"}`,
      );
      for (const p of c.problems) console.log(`    ${p}`);
      if (c.fix) console.log(`    fix: ${c.fix}`);
      for (const s of c.seen)
        console.log(`    last seen ${s.last_seen} (${s.login}, ${s.requests} requests)`);
      if (c.seen.length === 0) console.log("    no traffic seen yet");
      for (const u of c.unscanned)
        console.log(
          `    ${u.count} request(s) forwarded unread (${u.reason}) in the last 7 days, last ${u.last_seen}`,
        );
    }
  },
});

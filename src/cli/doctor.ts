/**
 * `sluice doctor`: whether each installed tool's settings route it through sluice, when sluice last
 * saw it, and what of its traffic sluice could not read. Exit 0 when every installed tool is routed,
 * 1 otherwise, with the fix printed. Sends nothing anywhere, except with `--live`, which runs each
 * tool that has a non-interactive mode once and checks that the running sluice saw its request.
 */
import { defineCommand } from "citty";
import type { ToolCheck } from "../connect/doctor.ts";
import type { LiveResult } from "../connect/live.ts";
import { type Fail, failer, readConfig } from "./_flags.ts";

const fail: Fail = failer("doctor");

/** The `--timeout` of `--live`, in seconds. */
function timeoutFlag(v: string | undefined): number {
  const n = Number(v ?? "60");
  if (v === "" || !Number.isFinite(n) || n <= 0 || n > 3600)
    fail(`--timeout = ${JSON.stringify(v)} is invalid: seconds, more than 0 and at most 3600`);
  return n;
}

/** The lines of a tool's static check: what is wrong and the fix. */
function printProblems(c: ToolCheck) {
  for (const p of c.problems) console.log(`    ${p}`);
  if (c.fix) console.log(`    fix: ${c.fix}`);
}

function printCheck(c: ToolCheck) {
  console.log(
    `${c.routed ? "✓" : "✗"} ${c.name}${c.login ? ` (${c.login})` : ""}: ${c.routed ? "routed through sluice" : "NOT routed"}`,
  );
  printProblems(c);
  for (const s of c.seen) console.log(`    last seen ${s.last_seen} (${s.login}, ${s.requests} requests)`);
  if (c.seen.length === 0) console.log("    no traffic seen yet");
  for (const u of c.unscanned)
    console.log(
      `    ${u.count} request(s) forwarded unread (${u.reason}) in the last 7 days, last ${u.last_seen}`,
    );
}

async function printLive(c: ToolCheck, r: LiveResult, probe: string[], timeoutS: number) {
  const { loginLabel, total } = await import("../connect/live.ts");
  const requests = Object.entries(r.logins)
    .map(([l, n]) => `${loginLabel(l, c.id)}, ${n} request${n === 1 ? "" : "s"}`)
    .join("; ");
  const unread = () => {
    for (const [reason, n] of Object.entries(r.unscanned))
      if (reason !== "bypass") console.log(`    ${n} of them forwarded unread (${reason})`);
  };
  if (r.status === "seen") {
    console.log(`✓ ${c.name}: seen through sluice (${requests})`);
    unread();
    return;
  }
  const login = c.login ? ` (${c.login})` : "";
  if (r.status === "failed") {
    const ended = r.timed_out
      ? `timed out after ${timeoutS} s`
      : `exit ${r.exit_code ?? "by a signal"}${r.last_line ? `: ${r.last_line}` : ""}`;
    console.log(`✗ ${c.name}${login}: the tool failed (${ended})`);
  } else console.log(`✗ ${c.name}${login}: NOT seen by sluice: its request went elsewhere`);
  if (total(r.logins) > 0) {
    console.log(`    sluice saw some of its traffic (${requests}), but no completed prompt`);
    unread();
  }
  if (r.unscanned.bypass) {
    // Codex signed in with ChatGPT takes its conversation's address from the account check's answer,
    // when sluice could not take it out (its log says why) and openai_base_url does not keep it.
    console.log("    its account check sent the conversation to another back end directly, around sluice");
    console.log(
      "    fix: sluice connect codex --apply (openai_base_url on sluice, chatgpt_base_url on sluice as localhost: the conversation then comes to sluice whatever the answer says)",
    );
    return;
  }
  printProblems(c);
  if (c.fix) return;
  const by = `\`${probe.join(" ")} "hi"\``;
  if (c.new_shells_only.length > 0)
    console.log(
      `    ${c.new_shells_only.join(", ")}: in the shell profile, not in this shell: open a new shell and run this again`,
    );
  else if (r.status === "failed")
    console.log(`    its settings route it through sluice: run ${by} yourself to see why it failed`);
  else
    console.log(
      `    its settings name sluice, yet its request did not reach it: run ${by} yourself and watch sluice's log`,
    );
}

export default defineCommand({
  meta: {
    name: "doctor",
    description:
      "Check that every installed AI tool is routed through sluice, for the sign-in mode it uses; show when sluice last saw it and what it could not read. With --live, run each tool that has a non-interactive mode (claude -p, codex exec, gemini -p, opencode run, aider --message) once, as it is set up now, and check that the running sluice saw its request: this costs one tiny model call per tool on your account. Exit 0: all routed (with --live: all seen), 1: something is not.",
  },
  args: {
    live: {
      type: "boolean",
      description:
        "Prove it by traffic: send each tool a one-word prompt (one tiny model call on your account) and check that sluice saw it",
    },
    timeout: { type: "string", description: "Seconds each tool may take with --live", default: "60" },
    json: { type: "boolean", description: "Print the checks as JSON" },
    config: { type: "string", alias: "c", description: "Config file (default {config_dir}/config.yaml)" },
  },
  async run({ args }) {
    const { tools, proxyUrlOf } = await import("../connect/tools.ts");
    const { checkTools } = await import("../connect/doctor.ts");
    const { homedir } = await import("node:os");
    const { existsSync } = await import("node:fs");
    const { join } = await import("node:path");
    const timeoutS = timeoutFlag(args.timeout);
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
    const all = tools(proxy, process.env);
    const checks = checkTools(
      all,
      proxy,
      { home, shell: process.env.SHELL, configDir: loaded.configDir, vars: process.env },
      store,
    );
    const installed = checks.filter((c) => c.installed);
    let live = new Map<string, LiveResult>();
    if (args.live) {
      const { liveCheck, stopProbes, SluiceUnreachable } = await import("../connect/live.ts");
      const probed = all.filter((t) => t.probe && installed.some((c) => c.id === t.id));
      if (!args.json)
        console.error(
          `sluice doctor: asking ${probed.map((t) => t.name).join(", ") || "no tool"} for one word each through the current settings (up to ${timeoutS} s)…`,
        );
      process.once("SIGINT", () => {
        stopProbes();
        process.exit(130);
      });
      try {
        live = await liveCheck(probed, {
          proxy,
          env: process.env,
          timeoutMs: timeoutS * 1000,
          config: loaded.config,
        });
      } catch (e) {
        if (!(e instanceof SluiceUnreachable)) throw e;
        console.error(`sluice doctor: ${e.message}`);
        process.exitCode = 1;
        return;
      }
    }
    const passed = (c: ToolCheck) => (live.has(c.id) ? live.get(c.id)!.status === "seen" : c.routed);
    process.exitCode = installed.every(passed) ? 0 : 1;
    if (args.json) {
      const out = args.live ? checks.map((c) => ({ ...c, live: live.get(c.id) ?? null })) : checks;
      console.log(JSON.stringify({ proxy, tools: out }, null, 2));
      return;
    }
    const note = args.live
      ? ": each tool was asked through its current settings"
      : store
        ? ""
        : " (no traffic recorded yet)";
    console.log(`sluice at ${proxy}${note}`);
    for (const c of checks) {
      const r = live.get(c.id);
      if (!c.installed) console.log(`- ${c.name}: not installed`);
      else if (r) await printLive(c, r, all.find((t) => t.id === c.id)?.probe?.args ?? [], timeoutS);
      else printCheck(c);
    }
  },
});

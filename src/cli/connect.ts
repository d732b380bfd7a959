/**
 * `sluice connect <tool>`: the settings that route a tool through sluice for each of its sign-in
 * modes, printed (default, `--print`), written (`--apply`, with backups) or put back (`--undo`).
 */
import { defineCommand } from "citty";
import { type Fail, failer, readConfig } from "./_flags.ts";

const fail: Fail = failer("connect");

export default defineCommand({
  meta: {
    name: "connect",
    description:
      "Route a tool through sluice: print its settings (--print), write them with a backup of each file (--apply), or put the files back (--undo). Tools: claude, codex, gemini, opencode, aider, sdk.",
  },
  args: {
    tool: {
      type: "positional",
      required: true,
      description: "claude, codex, gemini, opencode, aider or sdk",
    },
    print: { type: "boolean", description: "Show the settings (the default)" },
    apply: { type: "boolean", description: "Write the settings, keeping a backup of each file changed" },
    undo: { type: "boolean", description: "Put back the files the last --apply changed" },
    config: { type: "string", alias: "c", description: "Config file (default {config_dir}/config.yaml)" },
  },
  async run({ args }) {
    const { TOOL_IDS, tools, settingLines, proxyUrlOf } = await import("../connect/tools.ts");
    const { applyTool, undoTool } = await import("../connect/apply.ts");
    const { homedir } = await import("node:os");
    const id = String(args.tool);
    if (!(TOOL_IDS as readonly string[]).includes(id))
      fail(`unknown tool "${id}": one of ${TOOL_IDS.join(", ")}`);
    if (args.apply && args.undo) fail("--apply and --undo: choose one");
    const loaded = await readConfig(fail, args.config);
    const proxy = proxyUrlOf(loaded.config.port);
    const tool = tools(proxy, process.env).find((t) => t.id === id)!;
    const env = {
      home: process.env.HOME ?? homedir(),
      shell: process.env.SHELL,
      configDir: loaded.configDir,
    };
    if (args.undo) {
      const r = undoTool(tool.id, env);
      for (const f of r.restored) console.log(`restored ${f}`);
      for (const f of r.removed) console.log(`removed ${f} (sluice had created it)`);
      for (const f of r.kept) console.error(`kept ${f}: it changed since sluice wrote it; edit it by hand`);
      if (r.restored.length + r.removed.length + r.kept.length === 0)
        console.log(`nothing to undo for ${tool.name}`);
      process.exitCode = r.kept.length > 0 ? 1 : 0;
      return;
    }
    if (args.apply) {
      try {
        const r = applyTool(tool, env);
        for (const c of r.changed)
          console.log(`wrote ${c.file}${c.backup ? ` (backup: ${c.backup})` : " (new file)"}`);
        for (const f of r.unchanged) console.log(`${f} already routes ${tool.name} through sluice`);
        console.log(
          `${tool.name} now goes through sluice at ${proxy} (open a new shell for environment variables).`,
        );
        console.log(`Undo: sluice connect ${tool.id} --undo`);
      } catch (e) {
        fail((e as Error).message);
      }
      return;
    }
    console.log(`# ${tool.name} through sluice at ${proxy}`);
    for (const line of settingLines(tool)) console.log(line);
    if (tool.note) console.log(`# ${tool.note}`);
    console.log(`# Write these for you (with backups): sluice connect ${tool.id} --apply`);
  },
});

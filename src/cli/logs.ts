import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "citty";
import pkg from "../../package.json" with { type: "json" };

const exportCmd = defineCommand({
  meta: {
    name: "export",
    description: "Bundle the audit and application logs into one sanitized file for a bug report",
  },
  args: {
    sanitize: { type: "boolean", default: true, description: "Sanitize (always on: the only mode)" },
    out: { type: "string", alias: "o", description: "Output file (default stdout)" },
    config: { type: "string", alias: "c", description: "Config file (default {config_dir}/config.yaml)" },
    "log-dir": {
      type: "string",
      description: "Audit log directory (default logging.dir or {config_dir}/audit)",
    },
  },
  async run({ args }) {
    const { ConfigError, loadConfig } = await import("../config/load.ts");
    const { exportLogs } = await import("../scan/log-export.ts");
    let loaded: ReturnType<typeof loadConfig>;
    try {
      loaded = loadConfig({ configPath: args.config });
    } catch (e) {
      if (e instanceof ConfigError) {
        process.stderr.write(`sluice logs: ${e.message}\n`);
        process.exit(1);
      }
      throw e;
    }
    if (args.sanitize === false)
      process.stderr.write("sluice logs: exports are always sanitized; --no-sanitize is ignored\n");
    const auditDir = args["log-dir"] ?? loaded.config.logging.dir ?? join(loaded.configDir, "audit");
    const res = exportLogs({
      auditDir,
      appLogFile: join(loaded.configDir, "logs", "sluice.log"),
      version: pkg.version,
      config: loaded.config,
    });
    if (args.out) {
      writeFileSync(args.out, res.text, { mode: 0o600 });
      chmodSync(args.out, 0o600);
    } else process.stdout.write(res.text);
    process.stderr.write(
      `sluice logs: exported ${res.auditEntries} audit entries (${res.auditFiles.length} files) and ${res.appLogLines} application log lines (${res.appLogFiles.length} files), sanitized${args.out ? `, to ${args.out}` : ""}\n`,
    );
  },
});

export default defineCommand({
  meta: { name: "logs", description: "Application and audit logs" },
  subCommands: { export: exportCmd },
});

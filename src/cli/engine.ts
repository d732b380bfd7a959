/**
 * `sluice engine --port <port>`: the inspection engine alone (split mode): the full proxy
 * (scan and forward) on `engine.port`, for a relay in front of it. The dashboard runs with it.
 */
import { defineCommand } from "citty";
import { failer, logFlags, portFlag } from "./_flags.ts";

const fail = failer("engine");

export default defineCommand({
  meta: {
    name: "engine",
    description: "Start the inspection engine alone (split mode) on engine.port (8090)",
  },
  args: {
    port: {
      type: "string",
      alias: "p",
      description: "Listen port (default engine.port, 8090; 0 = any free port)",
    },
    config: { type: "string", alias: "c", description: "Config file (default {config_dir}/config.yaml)" },
    "log-dir": { type: "string", description: "Audit log directory (default {config_dir}/audit)" },
    format: { type: "string", alias: "f", description: "Log format: text or json" },
    color: { type: "boolean", default: true, description: "ANSI colour in logs (--no-color to disable)" },
    "log-level": { type: "string", description: "debug, info, warning or error (default warning)" },
    "default-rules": { type: "boolean", default: true, description: "--no-default-rules to skip the import" },
    "dashboard-port": { type: "string", description: "Dashboard port (default 8081; 0 = any free port)" },
  },
  async run({ args }) {
    const log = logFlags(fail, args);
    const { startRuntime, ConfigError } = await import("../runtime/index.ts");
    const { loadConfig } = await import("../config/load.ts");
    try {
      const port =
        portFlag(fail, "port", args.port) ?? loadConfig({ configPath: args.config }).config.engine.port;
      await startRuntime({
        configPath: args.config,
        port,
        dashboardPort: portFlag(fail, "dashboard-port", args["dashboard-port"]),
        logDir: args["log-dir"],
        ...log,
        noDefaultRules: args["default-rules"] === false,
        installSignals: true,
      });
    } catch (e) {
      if (e instanceof ConfigError) fail(e.message);
      fail(`cannot start: ${(e as Error)?.message ?? String(e)}`);
    }
  },
});

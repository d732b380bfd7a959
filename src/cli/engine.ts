/**
 * `sluice engine --port <port>`: the inspection engine alone (split mode, SPEC §1): the full proxy
 * (scan and forward) on `engine.port`, for a relay in front of it. The dashboard runs with it.
 */
import { defineCommand } from "citty";
import { LEVELS, type Level } from "../core/log.ts";

function fail(msg: string): never {
  process.stderr.write(`sluice engine: ${msg}\n`);
  process.exit(2);
}

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
    const level = args["log-level"];
    if (level !== undefined && !(LEVELS as readonly string[]).includes(level))
      fail(`--log-level = ${JSON.stringify(level)} is invalid: allowed values: ${LEVELS.join(", ")}`);
    if (args.format !== undefined && args.format !== "text" && args.format !== "json")
      fail(`--format = ${JSON.stringify(args.format)} is invalid: allowed values: "text", "json"`);
    const portOf = (name: string, v: string | undefined) => {
      if (v === undefined) return undefined;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535)
        fail(`--${name} = ${JSON.stringify(v)} is invalid: allowed range 0 to 65535`);
      return n;
    };
    const { startRuntime, ConfigError } = await import("../runtime/index.ts");
    const { loadConfig } = await import("../config/load.ts");
    try {
      const port = portOf("port", args.port) ?? loadConfig({ configPath: args.config }).config.engine.port;
      await startRuntime({
        configPath: args.config,
        port,
        dashboardPort: portOf("dashboard-port", args["dashboard-port"]),
        logDir: args["log-dir"],
        format: args.format as "text" | "json" | undefined,
        logLevel: level as Level | undefined,
        color: args.color === false || process.env.NO_COLOR ? false : undefined,
        noDefaultRules: args["default-rules"] === false,
        installSignals: true,
      });
    } catch (e) {
      if (e instanceof ConfigError) fail(e.message);
      fail(`cannot start: ${(e as Error)?.message ?? String(e)}`);
    }
  },
});

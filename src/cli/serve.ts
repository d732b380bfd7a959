/**
 * `sluice serve`: start the proxy (and the dashboard). Flags `--port`, `--config`, `--log-level`, `--dashboard-port`,
 * `--engine-port`, `--fail-mode`, `--no-default-rules`. A configuration problem prints one message and
 * exits 2, never a stack trace.
 */
import { defineCommand } from "citty";
import { failer, logFlags, oneOf, portFlag } from "./_flags.ts";

const fail = failer("serve");

export default defineCommand({
  meta: {
    name: "serve",
    description: "Start the proxy on 127.0.0.1:8080 and the dashboard on 127.0.0.1:8081",
  },
  args: {
    port: { type: "string", alias: "p", description: "Proxy listen port (default 8080; 0 = any free port)" },
    config: { type: "string", alias: "c", description: "Config file (default {config_dir}/config.yaml)" },
    "log-dir": { type: "string", description: "Audit log directory (default {config_dir}/audit)" },
    format: { type: "string", alias: "f", description: "Log format: text or json" },
    color: { type: "boolean", default: true, description: "ANSI colour in logs (--no-color to disable)" },
    "log-level": { type: "string", description: "debug, info, warning or error (default warning)" },
    "default-rules": {
      type: "boolean",
      default: true,
      description: "Import the community rules on first start (--no-default-rules to skip)",
    },
    "dashboard-port": { type: "string", description: "Dashboard port (default 8081; 0 = any free port)" },
    "engine-port": { type: "string", description: "Engine port for split mode (default 8090)" },
    "fail-mode": { type: "string", description: "Split mode: open or closed (default open)" },
  },
  async run({ args }) {
    const log = logFlags(fail, args);
    const failMode = oneOf(fail, "fail-mode", args["fail-mode"], ["open", "closed"] as const);
    const { startRuntime, ConfigError } = await import("../runtime/index.ts");
    try {
      await startRuntime({
        configPath: args.config,
        logDir: args["log-dir"],
        port: portFlag(fail, "port", args.port),
        dashboardPort: portFlag(fail, "dashboard-port", args["dashboard-port"]),
        enginePort: portFlag(fail, "engine-port", args["engine-port"]),
        failMode,
        ...log,
        noDefaultRules: args["default-rules"] === false,
        installSignals: true,
      });
    } catch (e) {
      if (e instanceof ConfigError) fail(e.message);
      const err = e as { code?: string; message?: string };
      if (err?.code === "EADDRINUSE" || /address.*in use|EADDRINUSE/i.test(err?.message ?? ""))
        fail(`cannot listen: ${err.message} (is another sluice running? use --port)`);
      fail(`cannot start: ${err?.message ?? String(e)}`);
    }
  },
});

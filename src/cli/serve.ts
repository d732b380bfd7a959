/**
 * `sluice serve`: start the proxy (and the dashboard). Flags of SPEC §1 plus `--dashboard-port`,
 * `--engine-port`, `--fail-mode`, `--no-default-rules`. A configuration problem prints one message and
 * exits 2, never a stack trace.
 */
import { defineCommand } from "citty";
import { LEVELS, type Level } from "../core/log.ts";

function fail(msg: string): never {
  process.stderr.write(`sluice serve: ${msg}\n`);
  process.exit(2);
}

function portArg(name: string, v: unknown): number | undefined {
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    fail(`--${name} = ${JSON.stringify(v)} is invalid: allowed range 0 to 65535`);
  return n;
}

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
    const format = args.format;
    if (format !== undefined && format !== "text" && format !== "json")
      fail(`--format = ${JSON.stringify(format)} is invalid: allowed values: "text", "json"`);
    const level = args["log-level"];
    if (level !== undefined && !(LEVELS as readonly string[]).includes(level))
      fail(
        `--log-level = ${JSON.stringify(level)} is invalid: allowed values: ${LEVELS.map((l) => `"${l}"`).join(", ")}`,
      );
    const failMode = args["fail-mode"];
    if (failMode !== undefined && failMode !== "open" && failMode !== "closed")
      fail(`--fail-mode = ${JSON.stringify(failMode)} is invalid: allowed values: "open", "closed"`);
    const noColor = args.color === false || !!process.env.NO_COLOR;
    const { startRuntime, ConfigError } = await import("../runtime/index.ts");
    try {
      await startRuntime({
        configPath: args.config,
        logDir: args["log-dir"],
        port: portArg("port", args.port),
        dashboardPort: portArg("dashboard-port", args["dashboard-port"]),
        enginePort: portArg("engine-port", args["engine-port"]),
        failMode: failMode as "open" | "closed" | undefined,
        format: format as "text" | "json" | undefined,
        logLevel: level as Level | undefined,
        color: noColor ? false : undefined,
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

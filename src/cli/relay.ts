/**
 * `sluice relay --port <port> --engine <url> --fail-mode open|closed`: the split-mode relay alone
 * in split mode. Forwards through the engine while it is healthy; otherwise fail_mode decides.
 */
import { defineCommand } from "citty";
import { failer, logFlags, oneOf, portFlag } from "./_flags.ts";

const fail = failer("relay");

export default defineCommand({
  meta: {
    name: "relay",
    description: "Start the split-mode relay (forwards through the engine, or fail_mode)",
  },
  args: {
    port: {
      type: "string",
      alias: "p",
      description: "Listen port (default relay.port, 8080; 0 = any free port)",
    },
    engine: {
      type: "string",
      description: "Engine base URL (default relay.engine_url, http://localhost:8090)",
    },
    "fail-mode": {
      type: "string",
      description: "open (forward uninspected) or closed (503) while the engine is down",
    },
    config: { type: "string", alias: "c", description: "Config file (default {config_dir}/config.yaml)" },
    format: { type: "string", alias: "f", description: "Log format: text or json" },
    color: { type: "boolean", default: true, description: "ANSI colour in logs (--no-color to disable)" },
    "log-level": { type: "string", description: "debug, info, warning or error (default warning)" },
  },
  async run({ args }) {
    const failMode = oneOf(fail, "fail-mode", args["fail-mode"], ["open", "closed"] as const);
    const log = logFlags(fail, args);
    const port = portFlag(fail, "port", args.port);
    if (args.engine !== undefined && !/^https?:\/\/[^\s]+$/.test(args.engine))
      fail(`--engine = ${JSON.stringify(args.engine)} is invalid: expected an http:// or https:// URL`);
    const { startRelay, ConfigError } = await import("../runtime/relay.ts");
    try {
      await startRelay({
        configPath: args.config,
        port,
        engineUrl: args.engine,
        failMode,
        ...log,
        installSignals: true,
      });
    } catch (e) {
      if (e instanceof ConfigError) fail(e.message);
      fail(`cannot start: ${(e as Error)?.message ?? String(e)}`);
    }
  },
});

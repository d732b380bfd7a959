/**
 * `sluice relay --port <port> --engine <url> --fail-mode open|closed`: the split-mode relay alone
 * (SPEC §1, §3). Forwards through the engine while it is healthy; otherwise fail_mode decides.
 */
import { defineCommand } from "citty";
import { LEVELS, type Level } from "../core/log.ts";

function fail(msg: string): never {
  process.stderr.write(`sluice relay: ${msg}\n`);
  process.exit(2);
}

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
    const failMode = args["fail-mode"];
    if (failMode !== undefined && failMode !== "open" && failMode !== "closed")
      fail(`--fail-mode = ${JSON.stringify(failMode)} is invalid: allowed values: "open", "closed"`);
    const level = args["log-level"];
    if (level !== undefined && !(LEVELS as readonly string[]).includes(level))
      fail(`--log-level = ${JSON.stringify(level)} is invalid: allowed values: ${LEVELS.join(", ")}`);
    if (args.format !== undefined && args.format !== "text" && args.format !== "json")
      fail(`--format = ${JSON.stringify(args.format)} is invalid: allowed values: "text", "json"`);
    let port: number | undefined;
    if (args.port !== undefined) {
      port = Number(args.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        fail(`--port = ${JSON.stringify(args.port)} is invalid: allowed range 0 to 65535`);
    }
    if (args.engine !== undefined && !/^https?:\/\/[^\s]+$/.test(args.engine))
      fail(`--engine = ${JSON.stringify(args.engine)} is invalid: expected an http:// or https:// URL`);
    const { startRelay, ConfigError } = await import("../runtime/relay.ts");
    try {
      await startRelay({
        configPath: args.config,
        port,
        engineUrl: args.engine,
        failMode: failMode as "open" | "closed" | undefined,
        logLevel: level as Level | undefined,
        format: args.format as "text" | "json" | undefined,
        color: args.color === false || process.env.NO_COLOR ? false : undefined,
        installSignals: true,
      });
    } catch (e) {
      if (e instanceof ConfigError) fail(e.message);
      fail(`cannot start: ${(e as Error)?.message ?? String(e)}`);
    }
  },
});

/**
 * `sluice mcp`: security proxy between an AI tool and an MCP server.
 * Flags are parsed here (repeatable --env/--header and `--` need more than citty offers); the work is
 * in src/mcp/.
 */
import { defineCommand } from "citty";
import { LEVELS, type Level } from "../core/log.ts";
import type { McpCliOptions } from "../mcp/index.ts";

export const USAGE = `Usage:
  sluice mcp [options] -- <command> [args...]           stdio server as a subprocess
  sluice mcp [options] --upstream http(s)://host/mcp    stdio client <-> Streamable HTTP server
  sluice mcp [options] --listen :<port> --upstream URL  HTTP reverse proxy on loopback
  sluice mcp [options] --upstream ws(s)://host/mcp      stdio client <-> WebSocket server

Options:
  --env KEY=VALUE       pass a variable to the stdio server (repeatable; KEY alone copies ours)
  --no-env-filter       pass the whole environment to the stdio server
  --action ACTION       default action for this run: log, alert, redact, block
  --session-binding     only allow tools from the first tools/list (mcp.session_binding)
  --accept-drift        accept the server's current tool definitions as the new baseline
  --name ID             server identity for drift baselines (default: command line or URL)
  --header "K: V"       extra header for the upstream (repeatable), e.g. Authorization
  --config, -c PATH     config file (default {config_dir}/config.yaml)
  --format, -f FORMAT   log format: text or json
  --log-level LEVEL     debug, info, warning, error
  --no-color            no ANSI colour in logs
  --no-store            do not record findings and events in the store
`;

const ACTIONS = new Set(["log", "alert", "redact", "block"]);
const LEVEL_NAMES = new Set<string>(LEVELS);

/** One case per flag of the usage above, in its order (which is why it is longer than most functions). */
export function parseMcpArgs(argv: string[]): McpCliOptions {
  const o: McpCliOptions = {
    command: [],
    upstream: null,
    listen: null,
    env: [],
    envFilter: true,
    headers: [],
    acceptDrift: false,
    store: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i]!;
    if (raw === "--") {
      o.command = argv.slice(i + 1);
      break;
    }
    const eq = raw.startsWith("--") ? raw.indexOf("=") : -1;
    const flag = eq === -1 ? raw : raw.slice(0, eq);
    const value = (): string => {
      if (eq !== -1) return raw.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "--upstream":
        o.upstream = value();
        break;
      case "--listen":
        o.listen = value();
        break;
      case "--env":
      case "-e":
        o.env.push(value());
        break;
      case "--no-env-filter":
        o.envFilter = false;
        break;
      case "--config":
      case "-c":
        o.configPath = value();
        break;
      case "--action": {
        const a = value();
        if (!ACTIONS.has(a)) throw new Error(`--action ${a}: expected log, alert, redact or block`);
        o.action = a as McpCliOptions["action"];
        break;
      }
      case "--format":
      case "-f": {
        const f = value();
        if (f !== "text" && f !== "json") throw new Error(`--format ${f}: expected text or json`);
        o.format = f;
        break;
      }
      case "--log-level": {
        const l = value();
        if (!LEVEL_NAMES.has(l)) throw new Error(`--log-level ${l}: expected debug, info, warning or error`);
        o.logLevel = l as Level;
        break;
      }
      case "--no-color":
        o.color = false;
        break;
      case "--name":
        o.name = value();
        break;
      case "--header":
      case "-H": {
        const h = value();
        const c = h.indexOf(":");
        if (c < 1) throw new Error(`--header ${JSON.stringify(h)}: expected "Name: value"`);
        o.headers.push([h.slice(0, c).trim(), h.slice(c + 1).trim()]);
        break;
      }
      case "--session-binding":
        o.sessionBinding = true;
        break;
      case "--no-session-binding":
        o.sessionBinding = false;
        break;
      case "--accept-drift":
        o.acceptDrift = true;
        break;
      case "--no-store":
        o.store = false;
        break;
      default:
        // A command given without `--` (its first word is not a flag): the rest is its argv.
        if (!raw.startsWith("-")) {
          o.command = argv.slice(i);
          i = argv.length;
          break;
        }
        throw new Error(`unknown option ${flag}`);
    }
  }
  return o;
}

export default defineCommand({
  meta: {
    name: "mcp",
    description:
      "Security proxy between AI tools and MCP servers: sluice mcp [options] -- <command> [args] | --upstream <url> [--listen :<port>]",
  },
  // Declared for `--help`; the flags are parsed by parseMcpArgs (repeatable flags, `--`).
  args: {
    upstream: { type: "string", description: "http(s):// (Streamable HTTP) or ws(s):// MCP server" },
    listen: { type: "string", description: "with --upstream http(s)://: serve HTTP on loopback, e.g. :8765" },
    env: {
      type: "string",
      description: "KEY=VALUE for the stdio server (repeatable; KEY alone copies ours)",
    },
    "env-filter": {
      type: "boolean",
      description: "--no-env-filter passes the whole environment",
      default: true,
    },
    action: { type: "string", description: "default action for this run: log, alert, redact, block" },
    "session-binding": { type: "boolean", description: "only allow tools from the first tools/list" },
    "accept-drift": { type: "boolean", description: "take the current tool definitions as the baseline" },
    name: { type: "string", description: "server identity for drift baselines" },
    header: { type: "string", description: '"Name: value" header for the upstream (repeatable)' },
    config: { type: "string", alias: "c", description: "config file" },
    format: { type: "string", alias: "f", description: "log format: text or json" },
    "log-level": { type: "string", description: "debug, info, warning, error" },
    color: { type: "boolean", description: "--no-color disables ANSI colour", default: true },
    store: { type: "boolean", description: "--no-store keeps findings in the log only", default: true },
  },
  async run({ rawArgs }) {
    let opts: McpCliOptions;
    try {
      opts = parseMcpArgs(rawArgs);
    } catch (err) {
      process.stderr.write(`sluice mcp: ${(err as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    const { runMcp, UsageError } = await import("../mcp/index.ts");
    try {
      const code = await runMcp(opts);
      process.exit(code);
    } catch (err) {
      const e = err as Error;
      const usage = e instanceof UsageError;
      process.stderr.write(`sluice mcp: ${e.message}\n${usage ? `\n${USAGE}` : ""}`);
      process.exit(2);
    }
  },
});

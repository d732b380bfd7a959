#!/usr/bin/env bun
/**
 * sluice command line. One file per command under src/cli/, loaded on demand so that `sluice scan`
 * does not pay for the dashboard and `sluice mcp` does not pay for the proxy.
 */
import { defineCommand, runCommand } from "citty";
import pkg from "../package.json" with { type: "json" };
import { GIT_COMMIT, STANDALONE, VERSION } from "./core/build-info.ts";

export const versionString = STANDALONE
  ? `${VERSION} (${GIT_COMMIT})`
  : `${pkg.version}-dev (from source; build VERSION unknown)`;

const main = defineCommand({
  meta: { name: "sluice", version: versionString, description: "Local security proxy for AI coding tools" },
  subCommands: {
    serve: () => import("./cli/serve.ts").then((m) => m.default),
    engine: () => import("./cli/engine.ts").then((m) => m.default),
    relay: () => import("./cli/relay.ts").then((m) => m.default),
    scan: () => import("./cli/scan.ts").then((m) => m.default),
    rules: () => import("./cli/rules.ts").then((m) => m.default),
    logs: () => import("./cli/logs.ts").then((m) => m.default),
    mcp: () => import("./cli/mcp.ts").then((m) => m.default),
    connect: () => import("./cli/connect.ts").then((m) => m.default),
    doctor: () => import("./cli/doctor.ts").then((m) => m.default),
    allowlist: () => import("./cli/allowlist.ts").then((m) => m.default),
    version: defineCommand({
      meta: { name: "version", description: "Print version and build identity" },
      async run() {
        const { buildInfo } = await import("./core/build-info.ts");
        console.log(JSON.stringify(buildInfo(), null, 2));
      },
    }),
  },
});

/** Examples shown at the end of each command's help. */
const EXAMPLES: Record<string, string[]> = {
  "": ["sluice serve", "sluice scan --diff", "sluice mcp -- npx -y @modelcontextprotocol/server-everything"],
  serve: [
    "sluice serve",
    "sluice serve --port 9090 --dashboard-port 9091",
    "sluice serve --log-level info --format json",
  ],
  engine: ["sluice engine --port 8090"],
  relay: ["sluice relay --engine http://127.0.0.1:8090 --fail-mode closed"],
  scan: [
    "sluice scan src/",
    "sluice scan --diff                 # the staged changes",
    "sluice scan --diff main..HEAD --format sarif -o sluice.sarif",
    "git diff | sluice scan -",
    "sluice scan . --create-baseline .sluice-baseline.json",
  ],
  rules: ["sluice rules list --detector secrets", "sluice rules validate my-rules.yaml"],
  "rules list": ["sluice rules list --detector pii"],
  "rules validate": ["sluice rules validate my-rules.yaml"],
  "rules import": ["sluice rules import my-rules.yaml"],
  "rules export": ["sluice rules export > rules.yaml"],
  logs: ["sluice logs export --sanitize > audit.jsonl"],
  "logs export": ["sluice logs export --sanitize > audit.jsonl"],
  mcp: [
    "sluice mcp -- npx -y @modelcontextprotocol/server-filesystem ~/work",
    "sluice mcp --upstream https://mcp.example.com/mcp",
    "sluice mcp --upstream https://mcp.example.com/mcp --listen :8765",
  ],
  version: ["sluice version"],
  connect: ["sluice connect claude", "sluice connect codex --apply", "sluice connect codex --undo"],
  doctor: ["sluice doctor", "sluice doctor --json", "sluice doctor --live --timeout 120"],
  allowlist: [
    "sluice allowlist list",
    "sluice allowlist add 'AKIA…the value…' --type secrets",
    "sluice allowlist remove 3",
  ],
  "allowlist list": ["sluice allowlist list", "sluice allowlist list --json"],
  "allowlist add": [
    "sluice allowlist add 'the exact value' --type secrets",
    "sluice allowlist add '*@mycompany.example' --type pii",
    "sluice allowlist add 'test/fixtures/*' --type paths",
  ],
  "allowlist remove": ["sluice allowlist remove 3"],
};

/** Usage lines that the flags alone cannot say. */
const USAGE: Record<string, string> = {
  mcp: "sluice mcp [options] -- <command> [args...]  |  sluice mcp --upstream <url> [--listen :<port>] [options]",
};

/**
 * Every command line: the command is found and its flags checked (`cli/_args.ts`) before it runs, so
 * a typo is refused instead of ignored. Arguments after `--` belong to the wrapped command (`sluice
 * mcp -- server -h host`) and are not looked at.
 */
async function start(argv: string[]) {
  if (argv[0] === "scan") {
    // The common `sluice scan` command lines skip citty (see parseScanArgs); the rest go through it.
    const scan = await import("./cli/scan.ts");
    const args = scan.parseScanArgs(argv.slice(1));
    if (args) {
      try {
        return await scan.scanCommand(args, argv.slice(1));
      } catch (err) {
        console.error(err, "\n"); // an unexpected error: its stack helps the report
        process.exit(1);
      }
    }
  }
  const { checkFlags, renderHelp, resolveCommand, UsageProblem } = await import("./cli/_args.ts");
  const dd = argv.indexOf("--");
  const own = dd === -1 ? argv : argv.slice(0, dd);
  if (own.length === 1 && (own[0] === "--version" || own[0] === "-v")) return console.log(versionString);
  let rawArgs: string[];
  try {
    const r = await resolveCommand(main, own);
    if (own.includes("--help") || own.includes("-h") || (r.path.length === 0 && own.length === 0)) {
      const key = r.path.join(" ");
      const tty = process.stdout.isTTY === true;
      process.stdout.write(
        await renderHelp(r, {
          color: tty && !process.env.NO_COLOR,
          width: tty ? (process.stdout.columns ?? 80) : 80,
          examples: EXAMPLES[key] ?? [],
          usage: USAGE[key],
        }),
      );
      return;
    }
    const rest = await checkFlags({ ...r, rest: dd === -1 ? r.rest : [...r.rest, ...argv.slice(dd)] });
    rawArgs = [...r.path, ...rest];
  } catch (err) {
    if (!(err instanceof UsageProblem)) throw err;
    process.stderr.write(`${["sluice", ...err.path].join(" ")}: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  try {
    await runCommand(main, { rawArgs });
  } catch (err) {
    console.error(`sluice: ${(err as Error).message}`);
    process.exit(1);
  }
}

if (import.meta.main) await start(process.argv.slice(2));

#!/usr/bin/env bun
/**
 * sluice command line. One file per command under src/cli/, loaded on demand so that `sluice scan`
 * does not pay for the dashboard and `sluice mcp` does not pay for the proxy.
 */
import { defineCommand, runCommand, runMain } from "citty";
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
    version: defineCommand({
      meta: { name: "version", description: "Print version and build identity" },
      async run() {
        const { buildInfo } = await import("./core/build-info.ts");
        console.log(JSON.stringify(buildInfo(), null, 2));
      },
    }),
  },
});

/**
 * citty's runMain treats `--help`/`-h` anywhere as a request for sluice's usage, even after `--`
 * (`sluice mcp -- server -h host`). Arguments after `--` belong to the wrapped command: when sluice's
 * own part has no help flag, run the command directly.
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
        console.error(err, "\n"); // as citty's runMain reports an unexpected error
        process.exit(1);
      }
    }
  }
  const dd = argv.indexOf("--");
  const own = dd === -1 ? argv : argv.slice(0, dd);
  if (dd === -1 || own.includes("--help") || own.includes("-h")) return runMain(main, { rawArgs: argv });
  try {
    await runCommand(main, { rawArgs: argv });
  } catch (err) {
    console.error(`sluice: ${(err as Error).message}`);
    process.exit(1);
  }
}

if (import.meta.main) await start(process.argv.slice(2));

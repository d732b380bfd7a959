#!/usr/bin/env bun
/**
 * sluice command line. One file per command under src/cli/, loaded on demand so that `sluice scan`
 * does not pay for the dashboard and `sluice mcp` does not pay for the proxy.
 */
import { defineCommand, runMain } from "citty";
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

if (import.meta.main) await runMain(main);

/**
 * A split-mode relay for tests, in this process on port 0: health checks every 0.1 s, no startup
 * queue (unless `relay` overrides them), the stand-in `upstream` as every provider.
 *
 * @example
 * await using r = await startTestRelay(up.url, engine.proxyUrl, "closed", { queue_on_startup: 5 });
 * await fetch(`${r.url}/v1/messages`, …);
 */
import { startRelay } from "../../src/runtime/relay.ts";
import { writeTestConfig } from "./sluice.ts";

export async function startTestRelay(
  upstream: string,
  engineUrl: string,
  failMode: "open" | "closed",
  relay: Record<string, unknown> = {},
) {
  const home = writeTestConfig({
    upstream,
    config: {
      relay: { health_check_interval: 0.1, health_check_timeout: 0.5, queue_on_startup: 0, ...relay },
    },
  });
  const r = await startRelay({
    env: { ...process.env, SLUICE_HOME: home },
    projectDir: null,
    port: 0,
    engineUrl,
    failMode,
    stderr: false,
    printBanner: false,
  });
  return { ...r, [Symbol.asyncDispose]: () => r.stop() };
}

/**
 * Scanning a proxied payload (an HTTP body, a WebSocket frame) through the request-scanning hook,
 * fail-open (a fault forwards it unscanned with a critical `scan_error`), and reporting what was
 * found: `finding` events on the bus, metrics, and a log line when scanning failed.
 */
import type { Bus } from "../core/bus.ts";
import type { RequestHook, ScanRequest, Verdict } from "../core/hook.ts";
import type { Logger } from "../core/log.ts";
import type { Metrics } from "../metrics/index.ts";
import { callHook } from "../policy/pipeline.ts";

export interface ScanDeps {
  hook: RequestHook;
  bus: Bus;
  log: Logger;
  metrics: Metrics;
}

/** Run the hook; never throws. Emits `finding` events and counts metrics. */
export async function scanGuarded(deps: ScanDeps, req: ScanRequest, requestId: string): Promise<Verdict> {
  const t0 = performance.now();
  const verdict = await callHook(deps.hook, req);
  if (verdict.error)
    deps.log.error("scan failed; forwarding unscanned", { request_id: requestId, error: verdict.error });
  deps.metrics.observeScan((performance.now() - t0) / 1000, verdict.scanned_bytes || 0);
  for (const f of verdict.findings) {
    deps.metrics.countFinding(f.finding_type);
    deps.bus.emit("finding", {
      finding: f,
      session: req.session,
      provider: req.provider,
      request_id: requestId,
      transport: req.transport,
    });
  }
  return verdict;
}

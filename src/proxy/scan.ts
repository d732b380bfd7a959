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

/**
 * Run the hook; never throws. Emits `finding` events and counts metrics. A hook that answers at once
 * is answered at once (`callHook`).
 */
export function scanGuarded(deps: ScanDeps, req: ScanRequest, requestId: string): Verdict | Promise<Verdict> {
  const t0 = performance.now();
  const verdict = callHook(deps.hook, req);
  return verdict instanceof Promise
    ? verdict.then((v) => reported(deps, req, requestId, v, t0))
    : reported(deps, req, requestId, verdict, t0);
}

function reported(
  deps: ScanDeps,
  req: ScanRequest,
  requestId: string,
  verdict: Verdict,
  t0: number,
): Verdict {
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

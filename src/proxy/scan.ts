/**
 * Calling the request-scanning hook safely (SPEC §1 Fail-open): an exception forwards the request
 * unscanned and records a critical `scan_error`; findings and metrics are emitted here for HTTP and
 * WebSocket alike.
 */
import { createHash } from "node:crypto";
import type { Bus } from "../core/bus.ts";
import type { RequestHook, ScanRequest, Verdict } from "../core/hook.ts";
import type { Logger } from "../core/log.ts";
import type { Finding } from "../core/types.ts";
import type { Metrics } from "../metrics/index.ts";

export interface ScanDeps {
  hook: RequestHook;
  bus: Bus;
  log: Logger;
  metrics: Metrics;
}

/** A `scan_error` finding: no value, only where it happened and why. */
export function scanErrorFinding(err: unknown, where: string): Finding {
  const message = err instanceof Error ? err.message : String(err);
  return {
    rule: "scan_error",
    detector: "secrets",
    finding_type: "scan_error",
    severity: "critical",
    action: "log",
    path: where,
    start: 0,
    end: 0,
    preview: "",
    content_hash: createHash("sha256").update(`scan_error:${where}:${message}`).digest("hex"),
    value_hash: null,
    decoded: null,
    description: `scanning failed, request forwarded unscanned: ${message.slice(0, 300)}`,
  };
}

/** Run the hook; never throws. Emits `finding` events and counts metrics. */
export async function scanGuarded(deps: ScanDeps, req: ScanRequest, requestId: string): Promise<Verdict> {
  const t0 = performance.now();
  let verdict: Verdict;
  try {
    verdict = await deps.hook(req);
    if (!verdict || typeof verdict.action !== "string" || !Array.isArray(verdict.findings))
      throw new Error("the scanner returned no verdict");
    if (verdict.action === "redact" && !(verdict.body instanceof Uint8Array))
      throw new Error("the scanner chose redact without a body");
  } catch (err) {
    const finding = scanErrorFinding(err, `${req.transport}:${req.path.split("?")[0]}`);
    deps.log.error(`scan failed; forwarding unscanned`, {
      request_id: requestId,
      error: (err as Error)?.message ?? String(err),
    });
    verdict = { action: "pass", findings: [finding], scanned_bytes: 0 };
  }
  deps.metrics.observeScan((performance.now() - t0) / 1000, verdict.scanned_bytes || 0);
  for (const f of verdict.findings) {
    deps.metrics.countFinding(f.finding_type);
    deps.bus.emit("finding", {
      finding: f,
      session: req.session,
      provider: req.provider,
      request_id: requestId,
      transport: req.transport === "mcp" ? "mcp" : req.transport,
    });
  }
  return verdict;
}

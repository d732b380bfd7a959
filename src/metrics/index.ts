/**
 * Prometheus text exposition of `GET /metrics` (SPEC §4, prefix `sluice_`): every metric with its
 * `# HELP` and `# TYPE` lines, label sets pre-seeded so a fresh process shows zeros.
 */
import { type Action, PROVIDER_LABELS, type ProviderLabel } from "../core/types.ts";

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const REQUEST_ACTIONS = ["pass", "log", "alert", "block", "redact"] as const;

function esc(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

export class Metrics {
  activeRequests = 0;
  readonly requestsByAction = new Map<string, number>(REQUEST_ACTIONS.map((a) => [a, 0]));
  bytesScanned = 0;
  readonly findingsByType = new Map<string, number>();
  readonly requestsByProvider = new Map<string, number>(PROVIDER_LABELS.map((p) => [p, 0]));
  scanSeconds = 0;
  scanCount = 0;
  totalRequests = 0;
  totalFindings = 0;

  countRequest(action: Action) {
    this.requestsByAction.set(action, (this.requestsByAction.get(action) ?? 0) + 1);
    this.totalRequests++;
  }
  countProvider(provider: ProviderLabel) {
    this.requestsByProvider.set(provider, (this.requestsByProvider.get(provider) ?? 0) + 1);
  }
  countFinding(type: string) {
    this.findingsByType.set(type, (this.findingsByType.get(type) ?? 0) + 1);
    this.totalFindings++;
  }
  observeScan(seconds: number, bytes: number) {
    this.scanSeconds += seconds;
    this.scanCount++;
    this.bytesScanned += bytes;
  }

  render(): string {
    const out: string[] = [];
    const head = (name: string, type: string, help: string) => {
      out.push(`# HELP sluice_${name} ${help}`, `# TYPE sluice_${name} ${type}`);
    };
    head("active_requests", "gauge", "Requests being proxied right now.");
    out.push(`sluice_active_requests ${this.activeRequests}`);
    head("requests_total", "counter", "Proxied requests by resolved action.");
    for (const [a, n] of this.requestsByAction) out.push(`sluice_requests_total{action="${esc(a)}"} ${n}`);
    head("bytes_scanned_total", "counter", "Bytes of request bodies scanned.");
    out.push(`sluice_bytes_scanned_total ${this.bytesScanned}`);
    head("findings_total", "counter", "Findings by detector finding type.");
    for (const [t, n] of [...this.findingsByType].sort())
      out.push(`sluice_findings_total{type="${esc(t)}"} ${n}`);
    head("provider_requests_total", "counter", "Requests by detected provider.");
    for (const [p, n] of this.requestsByProvider)
      out.push(`sluice_provider_requests_total{provider="${esc(p)}"} ${n}`);
    head("scan_duration_seconds", "summary", "Time spent scanning request bodies.");
    out.push(`sluice_scan_duration_seconds_sum ${this.scanSeconds}`);
    out.push(`sluice_scan_duration_seconds_count ${this.scanCount}`);
    return `${out.join("\n")}\n`;
  }
}

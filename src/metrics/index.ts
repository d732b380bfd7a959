/**
 * Prometheus text exposition of `GET /metrics` (every name prefixed `sluice_`): every metric with its
 * `# HELP` and `# TYPE` lines, label sets pre-seeded so a fresh process shows zeros.
 */
import {
  type Action,
  type Login,
  PROVIDER_LABELS,
  type ProviderLabel,
  type UnscannedReason,
} from "../core/types.ts";

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const REQUEST_ACTIONS = ["pass", "log", "alert", "block", "redact"] as const;
/**
 * Label sets per client: client names come from User-Agent headers, so past this many the rest are
 * counted under `client="other"` and a noisy client cannot grow the exposition without bound.
 */
const MAX_CLIENT_LABELS = 200;

function esc(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

/** What the audit trail reports (the store's audit log). */
export interface AuditCounts {
  written: number;
  pending: number;
  dropped: number;
  errors: number;
}

export class Metrics {
  activeRequests = 0;
  /** The audit trail's counts, when this process keeps one. */
  audit: () => AuditCounts | null = () => null;
  /** The extensions' gauges and fault counter, as Prometheus text ("" when none). */
  extensions: () => string = () => "";
  readonly requestsByAction = new Map<string, number>(REQUEST_ACTIONS.map((a) => [a, 0]));
  bytesScanned = 0;
  readonly findingsByType = new Map<string, number>();
  readonly requestsByProvider = new Map<string, number>(PROVIDER_LABELS.map((p) => [p, 0]));
  scanSeconds = 0;
  scanCount = 0;
  totalRequests = 0;
  totalFindings = 0;
  /** By `client\u0000login`. */
  readonly requestsByClient = new Map<string, number>();
  /** By `client\u0000reason`. */
  readonly unscannedByClient = new Map<string, number>();

  #bump(map: Map<string, number>, client: string, second: string) {
    let key = `${client}\u0000${second}`;
    if (!map.has(key) && map.size >= MAX_CLIENT_LABELS) key = `other\u0000${second}`;
    map.set(key, (map.get(key) ?? 0) + 1);
  }
  countClient(client: string, login: Login) {
    this.#bump(this.requestsByClient, client || "unknown", login);
  }
  /** A request sluice could not read (see UNSCANNED_REASONS): never silent. */
  countUnscanned(client: string, reason: UnscannedReason) {
    this.#bump(this.unscannedByClient, client || "unknown", reason);
  }

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
    head("client_requests_total", "counter", "Requests by client (tool) and how it signed in.");
    for (const [k, n] of [...this.requestsByClient].sort()) {
      const [client, login] = k.split("\u0000");
      out.push(`sluice_client_requests_total{client="${esc(client!)}",login="${esc(login!)}"} ${n}`);
    }
    head(
      "unscanned_requests_total",
      "counter",
      "Requests sluice could not read, by client and reason (non_json, encoded, unknown_shape, unknown_provider, too_large, bypass).",
    );
    for (const [k, n] of [...this.unscannedByClient].sort()) {
      const [client, reason] = k.split("\u0000");
      out.push(`sluice_unscanned_requests_total{client="${esc(client!)}",reason="${esc(reason!)}"} ${n}`);
    }
    head("scan_duration_seconds", "summary", "Time spent scanning request bodies.");
    out.push(`sluice_scan_duration_seconds_sum ${this.scanSeconds}`);
    out.push(`sluice_scan_duration_seconds_count ${this.scanCount}`);
    const extensions = this.extensions();
    if (extensions) out.push(extensions.trimEnd());
    const audit = this.audit();
    if (audit) {
      head("audit_lines_written_total", "counter", "Lines appended to the JSONL audit trail.");
      out.push(`sluice_audit_lines_written_total ${audit.written}`);
      head(
        "audit_lines_pending",
        "gauge",
        "Audit lines waiting because the audit file could not be written.",
      );
      out.push(`sluice_audit_lines_pending ${audit.pending}`);
      head(
        "audit_lines_dropped_total",
        "counter",
        "Audit lines lost (the audit disk failed for too long, or at shutdown).",
      );
      out.push(`sluice_audit_lines_dropped_total ${audit.dropped}`);
      head(
        "audit_write_errors_total",
        "counter",
        "Failed appends to the audit trail (full disk, I/O error).",
      );
      out.push(`sluice_audit_write_errors_total ${audit.errors}`);
    }
    return `${out.join("\n")}\n`;
  }
}

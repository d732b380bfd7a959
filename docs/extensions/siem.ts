/**
 * An example sluice plugin: sends every finding of a payload that policy did not simply pass to a
 * SIEM's HTTP collector, in batches, as JSON lines. Name it in the config:
 *
 *   extensions: [./siem.ts]        # relative to the config directory
 *
 * and set SLUICE_SIEM_URL (and SLUICE_SIEM_TOKEN if the collector wants a bearer token). Findings
 * carry masked previews and keyed hashes only: no raw value reaches the SIEM.
 */
import type { SluicePlugin } from "../../src/extensions/types.ts";

const url = process.env.SLUICE_SIEM_URL;
const token = process.env.SLUICE_SIEM_TOKEN;
/** Lines waiting to be sent; bounded, so that a SIEM that is down costs a fixed amount of memory. */
const pending: string[] = [];
const MAX_PENDING = 10_000;
let sent = 0;
let failed = 0;
let dropped = 0;

async function flush(): Promise<void> {
  if (!url || pending.length === 0) return;
  const batch = pending.splice(0, 500);
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/x-ndjson",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: `${batch.join("\n")}\n`,
      signal: AbortSignal.timeout(5000),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    sent += batch.length;
  } catch {
    failed += batch.length; // sent again with the next batch, while there is room
    pending.unshift(...batch.slice(0, MAX_PENDING - pending.length));
  }
}
setInterval(() => void flush(), 1000).unref();

export default {
  name: "siem",
  post_scan(payload, outcome, { session }) {
    if (outcome.action === "pass") return;
    for (const f of outcome.findings) {
      if (pending.length >= MAX_PENDING) {
        dropped++;
        continue;
      }
      pending.push(
        JSON.stringify({
          ts: new Date().toISOString(),
          source: "sluice",
          action: outcome.action,
          rule: f.rule,
          finding_type: f.finding_type,
          severity: f.severity,
          path: f.path,
          preview: f.preview,
          content_hash: f.content_hash,
          provider: payload.provider,
          request_id: payload.request_id,
          session_id: session.session_id,
          client: session.client,
          working_directory: session.working_directory,
        }),
      );
    }
    if (pending.length >= 500) void flush();
  },
  health: () => ({ collector: url ?? "not set", pending: pending.length, sent, failed, dropped }),
  metrics: () => ({ pending: pending.length, sent, failed, dropped }),
} satisfies SluicePlugin;

/**
 * The dashboard: Elysia app with the JSON API and the web UI on 127.0.0.1:8081.
 * SEAM (owned by store/dashboard): the signature is fixed.
 */
import type { Runtime } from "../core/runtime.ts";
import type { Store } from "../store/index.ts";

export interface DashboardHandle {
  port: number;
  stop(): Promise<void>;
}

export async function startDashboard(
  _rt: Runtime,
  _store: Store,
  opts: { port: number; hostname: string },
): Promise<DashboardHandle> {
  return { port: opts.port, stop: async () => {} };
}

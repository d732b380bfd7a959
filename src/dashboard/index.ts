/**
 * The dashboard: Elysia app with the JSON API and the web UI on 127.0.0.1:8081.
 *
 * The web UI (src/dashboard/ui.ts) is mounted as Bun.serve `routes`; every other path falls through
 * to the API app. The hostname is always loopback whatever the caller passes.
 */
import { badHostResponse, requestUrl } from "../core/request-url.ts";
import type { Runtime } from "../runtime/contract.ts";
import type { Store } from "../store/index.ts";
import { type AppOptions, createApp } from "./app.ts";
import { errorResponse } from "./http.ts";
import { uiServeOptions } from "./ui.ts";

export interface DashboardHandle {
  port: number;
  stop(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export async function startDashboard(
  rt: Runtime,
  store: Store,
  opts: { port: number; hostname: string } & Partial<Omit<AppOptions, "port">>,
): Promise<DashboardHandle> {
  const hostname = LOOPBACK.has(opts.hostname) ? opts.hostname : "127.0.0.1";
  if (hostname !== opts.hostname)
    rt.log.warn("dashboard: refusing a non-loopback address", { requested: opts.hostname, using: hostname });
  let port = opts.port;
  // The store reads retention and audit rotation limits from the configuration in force.
  store.setConfigSource(() => rt.config());
  const { app, hub } = createApp(rt, store, { ...opts, port: () => port });
  const server = Bun.serve({
    hostname,
    port: opts.port,
    ...uiServeOptions,
    idleTimeout: 30,
    maxRequestBodySize: 2 * 1024 * 1024,
    fetch(req, srv) {
      const url = requestUrl(req);
      if (!url) return badHostResponse();
      if (url.pathname === "/api/v1/live") srv.timeout(req, 0);
      return app.handle(req);
    },
    error(err) {
      rt.log.error("dashboard: request failed", { error: err.message });
      return errorResponse(500, "internal_error", "internal error (see the application log)");
    },
  });
  port = server.port ?? opts.port;
  rt.log.info("dashboard listening", { url: `http://${hostname === "::1" ? "[::1]" : hostname}:${port}` });
  return {
    port,
    async stop() {
      hub.close();
      await server.stop(true);
    },
  };
}

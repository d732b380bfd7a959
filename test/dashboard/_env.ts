/**
 * In-process dashboard for API tests: a small real Runtime-shaped object (real Bus, Logger, config
 * validation and reload through src/config), a real store on a temp directory, and the Elysia app
 * answered through `app.handle(new Request(...))`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diffConfig, mergeConfig, unflatten, validateConfig } from "../../src/config/load.ts";
import type { Config } from "../../src/config/schema.ts";
import { Bus } from "../../src/core/bus.ts";
import { Logger } from "../../src/core/log.ts";
import { blankSession } from "../../src/core/types.ts";
import { createApp } from "../../src/dashboard/app.ts";
import { contentHash } from "../../src/policy/mask.ts";
import { systemFinding } from "../../src/policy/system-finding.ts";
import type { ProxyMode, ReloadResult, Runtime } from "../../src/runtime/contract.ts";
import { openStore, type Store } from "../../src/store/index.ts";

export const PORT = 18081;
/** The installation key of the test runtime (what `contentHash` keys with). */
export const TEST_HMAC_KEY = new Uint8Array(32).fill(7);

export interface TestRuntime extends Runtime {
  counters: { requests: number; findings: number };
}

export function makeRuntime(
  store: () => Store,
  raw: Record<string, unknown> = {},
  configDir = "/tmp",
): TestRuntime {
  const bus = new Bus();
  const log = new Logger({ stderr: false, level: "debug" });
  let fileRaw = raw;
  let config: Config = validateConfig(fileRaw).config;
  let modeNow: ProxyMode | null = null;
  const currentMode = (): ProxyMode =>
    (modeNow ??= (store().getSetting("proxy.mode") as ProxyMode | null) ?? config.proxy.mode);
  let version = 1;
  const counters = { requests: 0, findings: 0 };
  const rt: TestRuntime = {
    configDir,
    bus,
    log,
    startedAt: new Date(),
    version: "0.0.0-test",
    counters,
    config: () => config,
    notifications: () => null,
    mode: currentMode,
    setMode(next, source) {
      const previous = currentMode();
      if (next === previous) return;
      modeNow = next;
      store().setSetting("proxy.mode", next);
      if (next === "passthrough") {
        const finding = systemFinding(
          "mode_changed",
          "proxy.mode",
          `proxy mode changed to passthrough by ${source}`,
          `${Date.now()}:${Math.random()}`,
        );
        bus.emit("finding", {
          finding,
          session: blankSession(),
          provider: "unknown",
          request_id: "",
          transport: "system",
        });
      }
      bus.emit("mode-changed", { mode: next, previous });
    },
    async reload(patch, source = "sighup"): Promise<ReloadResult> {
      const next = patch ? mergeConfig(fileRaw, unflatten(patch)) : fileRaw;
      try {
        const { config: c, warnings } = validateConfig(next);
        const changes = diffConfig(config, c);
        config = c;
        fileRaw = next;
        bus.emit("config-reloaded", { changes, source });
        return { ok: true, changes, warnings };
      } catch (e) {
        return { ok: false, changes: [], error: (e as Error).message, warnings: [] };
      }
    },
    rules: () => store().enabledRules(),
    rulesVersion: () => version,
    rulesChanged: () => void version++,
    stats: () => ({
      requests: counters.requests,
      active_requests: 0,
      findings: counters.findings,
      by_action: {},
    }),
    proxyAddress: () => ({ host: "127.0.0.1", port: 18080 }),
    extensionClients: () => [],
    contentHash: (value) => contentHash(value, TEST_HMAC_KEY),
  };
  return rt;
}

export interface Env {
  dir: string;
  store: Store;
  rt: TestRuntime;
  app: ReturnType<typeof createApp>["app"];
  hub: ReturnType<typeof createApp>["hub"];
  /** Call the API the way a same-origin page or a script does (Host set, CSRF token added for mutations). */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  json<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: T }>;
  csrf(): Promise<string>;
  close(): Promise<void>;
}

export async function makeEnv(
  opts: { config?: Record<string, unknown>; dir?: string; heartbeatMs?: number; pollMs?: number } = {},
): Promise<Env> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "sluice-dash-"));
  let store: Store;
  const rt = makeRuntime(() => store, opts.config ?? {}, dir);
  store = openStore({
    configDir: dir,
    bus: rt.bus,
    log: rt.log,
    config: () => rt.config(),
    flushIntervalMs: 5,
  });
  const { app, hub } = createApp(rt, store, {
    port: () => PORT,
    heartbeatMs: opts.heartbeatMs,
    pollMs: opts.pollMs,
  });
  let token: string | null = null;
  const env: Env = {
    dir,
    store,
    rt,
    app,
    hub,
    async csrf() {
      if (!token) {
        const r = await app.handle(new Request(`http://127.0.0.1:${PORT}/api/v1/auth/session`));
        token = ((await r.json()) as { csrf_token: string }).csrf_token;
      }
      return token;
    },
    async api(method, path, body, headers = {}) {
      const h: Record<string, string> = { ...headers };
      if (method !== "GET" && !("x-csrf-token" in h)) h["x-csrf-token"] = await env.csrf();
      if (body !== undefined && !("content-type" in h)) h["content-type"] = "application/json";
      return app.handle(
        new Request(`http://127.0.0.1:${PORT}${path}`, {
          method,
          headers: h,
          body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
        }),
      );
    },
    async json(method, path, body, headers) {
      const r = await env.api(method, path, body, headers);
      const text = await r.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: r.status, body: parsed as any };
    },
    async close() {
      hub.close();
      await store.close();
    },
  };
  return env;
}

/**
 * Attack: a request whose Host is missing (HTTP/1.0) or is not a host at all
 * (`127.0.0.1:8081@evil.com`, spaces, an open bracket) once crashed the dashboard with a 500
 * (`new URL(req.url)` threw) and made the proxy answer 502. Each listener sluice opens (dashboard,
 * proxy, split-mode relay) now answers 400 `bad_host` and keeps serving.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { startRelay } from "../../src/runtime/relay.ts";
import { deadEndpoint, type InProcessSluice, startSluice, writeTestConfig } from "../helpers/sluice.ts";

/** Send raw bytes, read until the server closes (or the response is complete), return status and body. */
function raw(base: string, text: string): Promise<{ status: number; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const c = connect(Number(u.port), u.hostname, () => c.write(text));
    let buf = "";
    const done = () => {
      const head = buf.slice(0, buf.indexOf("\r\n\r\n"));
      const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? Number.NaN);
      const body = buf.slice(head.length + 4);
      if (head && Number.isFinite(len) && Buffer.byteLength(body) >= len) {
        c.destroy();
        resolve({ status: Number(buf.split(" ")[1]), body });
      }
    };
    c.on("data", (d) => {
      buf += d;
      done();
    });
    c.on("error", reject);
    c.on("close", () =>
      resolve({ status: Number(buf.split(" ")[1]), body: buf.slice(buf.indexOf("\r\n\r\n") + 4) }),
    );
  });
}

const TRICKS: [string, string][] = [
  ["HTTP/1.0 without Host", "GET /api/v1/config HTTP/1.0\r\n\r\n"],
  ["HTTP/1.1 without Host", "GET /api/v1/config HTTP/1.1\r\nConnection: close\r\n\r\n"],
  [
    "userinfo in Host",
    "GET /api/v1/config HTTP/1.1\r\nHost: 127.0.0.1:8081@evil.com\r\nConnection: close\r\n\r\n",
  ],
  ["space in Host", "GET /api/v1/config HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n"],
  ["empty Host", "GET /api/v1/config HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n"],
  ["open bracket", "GET /api/v1/config HTTP/1.1\r\nHost: [::1\r\nConnection: close\r\n\r\n"],
  ["provider path, HTTP/1.0", "POST /v1/messages HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}"],
  ["health, HTTP/1.0", "GET /health HTTP/1.0\r\n\r\n"],
];

let s: InProcessSluice;
let relayUrl = "";
let stopRelay: () => Promise<void> = async () => {};
let dead: ReturnType<typeof deadEndpoint>;
beforeAll(async () => {
  s = await startSluice({});
  dead = deadEndpoint();
  const r = await startRelay({
    env: { ...process.env, SLUICE_HOME: writeTestConfig({}) },
    projectDir: null,
    port: 0,
    engineUrl: dead.url,
    failMode: "closed",
    stderr: false,
    printBanner: false,
  });
  relayUrl = r.url;
  stopRelay = r.stop;
});
afterAll(async () => {
  await stopRelay();
  dead?.[Symbol.dispose]();
  await s?.stop();
});

for (const listener of ["dashboard", "proxy", "relay"] as const)
  for (const [name, text] of TRICKS)
    test(`${listener}: ${name} → 400 bad_host`, async () => {
      const base = listener === "dashboard" ? s.dashboardUrl! : listener === "proxy" ? s.proxyUrl : relayUrl;
      const r = await raw(base, text);
      expect(r.status).toBe(400);
      // Either our answer, or Bun's own parser refusing the request before it reaches us.
      if (r.body) expect(JSON.parse(r.body).error.code).toBe("bad_host");
    });

test("the listeners keep serving after the tricks", async () => {
  expect((await fetch(`${s.proxyUrl}/health`)).status).toBe(200);
  expect((await fetch(`${s.dashboardUrl}/api/v1/status`)).status).toBe(200);
  expect((await fetch(`${relayUrl}/health`)).status).toBe(200);
});

/**
 * `GET /ws?url=` must not be a door into the machine: a page or a prompt-injected tool that reaches
 * sluice names a target, and sluice opens it. Every spelling of a loopback, private, link-local,
 * carrier-grade NAT, multicast, metadata or unspecified address is refused before a connection is
 * made: a listener on every local address counts the connections it gets, and gets none. Browser
 * origins, credentials and redirects are covered too, and an explicitly allowed private target works.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TCPSocketListener } from "bun";
import { MIGRATIONS, migrate } from "../../src/store/migrations.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { startUpstream, type Upstream } from "../helpers/upstream.ts";

let listener: TCPSocketListener;
let connections = 0;
let up: Upstream;
let s: InProcessSluice;

beforeAll(async () => {
  // Dual-stack: counts connections to 127.0.0.1, ::1 and every other local address on this port.
  listener = Bun.listen({
    hostname: "::",
    port: 0,
    socket: {
      open() {
        connections++;
      },
      data() {},
    },
  });
  up = await startUpstream();
  up.ws("/echo");
  s = await startSluice({ upstream: up.url });
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
  listener?.stop(true);
});

const UPGRADE = {
  upgrade: "websocket",
  connection: "Upgrade",
  "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
  "sec-websocket-version": "13",
};

function wsUrl(proxyUrl: string, target: string): string {
  return `${proxyUrl}/ws?url=${encodeURIComponent(target)}`;
}

async function refused(target: string, headers: Record<string, string> = {}, via = s) {
  const res = await fetch(wsUrl(via.proxyUrl, target), { headers: { ...UPGRADE, ...headers } });
  const body = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, ...body.error };
}

function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers } as unknown as string[]);
    ws.onopen = () => resolve(ws);
    ws.onerror = () => reject(new Error("websocket failed to open"));
  });
}

describe("every spelling of a local or private address is refused with no connection", () => {
  const spellings = (port: number) => [
    `ws://127.0.0.1:${port}/`,
    `ws://localhost:${port}/`,
    `ws://LOCALHOST.:${port}/`,
    `ws://127.0.0.1.:${port}/`,
    `ws://2130706433:${port}/`, // decimal
    `ws://0x7f000001:${port}/`, // hex
    `ws://0x7f.0.0.1:${port}/`,
    `ws://0177.0.0.1:${port}/`, // octal
    `ws://017700000001:${port}/`,
    `ws://127.1:${port}/`, // short form
    `ws://127.0.1:${port}/`,
    `ws://%31%32%37.0.0.1:${port}/`, // percent-encoded
    `wss://127.0.0.1:${port}/`,
    `ws://[::1]:${port}/`,
    `ws://[0:0:0:0:0:0:0:1]:${port}/`,
    `ws://[::ffff:127.0.0.1]:${port}/`, // IPv4-mapped
    `ws://[::ffff:7f00:1]:${port}/`,
    `ws://[0:0:0:0:0:ffff:7f00:1]:${port}/`,
    `ws://[::127.0.0.1]:${port}/`, // IPv4-compatible
    `ws://[64:ff9b::127.0.0.1]:${port}/`, // NAT64
    `ws://[2002:7f00:1::]:${port}/`, // 6to4
    `ws://0.0.0.0:${port}/`, // unspecified
    `ws://0:${port}/`,
    `ws://[::]:${port}/`,
    `ws://user:token@127.0.0.1:${port}/`,
  ];

  test("loopback and unspecified, in 25 spellings", async () => {
    const port = listener.port;
    for (const target of spellings(port)) {
      const r = await refused(target);
      expect({ target, status: r.status, code: r.code }).toEqual({
        target,
        status: 403,
        code: "bad_ws_target",
      });
      expect(r.message).toMatch(/is not public: .* is (loopback|unspecified)/);
      expect(r.message).not.toContain("token");
    }
    expect(connections).toBe(0);
  });

  test("private, link-local, carrier-grade NAT, metadata, multicast and reserved ranges", async () => {
    const cases: [string, RegExp][] = [
      ["ws://10.0.0.1/", /private/],
      ["ws://172.16.5.4/", /private/],
      ["ws://192.168.1.1/", /private/],
      ["ws://169.254.169.254/latest/meta-data/", /link-local/], // cloud metadata
      ["ws://0251.0376.0251.0376/", /link-local/], // 169.254.169.254 in octal
      ["ws://100.100.100.200/", /carrier-grade NAT/], // Alibaba metadata
      ["ws://100.64.0.1/", /carrier-grade NAT/],
      ["ws://[fd00:ec2::254]/", /private/], // AWS IPv6 metadata
      ["ws://[fe80::1]/", /link-local/],
      ["ws://[::ffff:a9fe:a9fe]/", /link-local/],
      ["ws://[64:ff9b::10.0.0.1]/", /private/],
      ["ws://224.0.0.1/", /multicast/],
      ["ws://[ff02::1]/", /multicast/],
      ["ws://240.0.0.1/", /reserved/],
      ["ws://255.255.255.255/", /reserved/],
      ["ws://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", /reserved/], // Teredo
    ];
    for (const [target, kind] of cases) {
      const r = await refused(target);
      expect({ target, status: r.status }).toEqual({ target, status: 403 });
      expect(r.message).toMatch(kind);
    }
    expect(connections).toBe(0);
  });

  test("other schemes are refused", async () => {
    for (const target of [
      "http://127.0.0.1/",
      "https://example.com/",
      "file:///etc/passwd",
      "gopher://x/",
      "no",
    ])
      expect((await refused(target)).status).toBe(400);
    expect(connections).toBe(0);
  });
});

test("a browser origin is refused unless websocket.allowed_origins lists it", async () => {
  const target = `ws://127.0.0.1:${listener.port}/`;
  const r = await refused(target, { origin: "https://evil.example" });
  expect(r.status).toBe(403);
  expect(r.message).toContain("websocket.allowed_origins");
  expect(connections).toBe(0);
});

describe("an allowed private target", () => {
  let allowed: InProcessSluice;
  beforeAll(async () => {
    allowed = await startSluice({
      upstream: up.url,
      config: {
        websocket: {
          allowed_private_targets: ["localhost", "127.0.0.1"],
          allowed_origins: ["https://app.example"],
        },
      },
    });
  });
  afterAll(async () => {
    await allowed?.stop();
  });

  test("opens, by the address it checked, with the client's Host name, and without credentials", async () => {
    const target = `${up.url.replace("https://127.0.0.1", "wss://user:pw@localhost")}/echo?x=1`;
    const before = up.requests.length;
    const ws = await open(wsUrl(allowed.proxyUrl.replace("http", "ws"), target), {
      authorization: "Bearer sk-should-stay",
      cookie: "session=abc",
      origin: "https://app.example",
    });
    const echoed = new Promise((r) => ws.addEventListener("message", (e) => r(e.data), { once: true }));
    ws.send("ping");
    expect(await echoed).toBe("ping");
    ws.close();
    const req = up.requests.slice(before).find((r) => r.path.startsWith("/echo"))!;
    expect(req.headers.get("host")).toBe(new URL(target).host);
    expect(req.headers.get("authorization")).toBeNull();
    expect(req.headers.get("cookie")).toBeNull();
  });

  test("sluice's own ports stay refused", async () => {
    const own = new URL(allowed.proxyUrl).port;
    const r = await refused(`ws://127.0.0.1:${own}/ws`, {}, allowed);
    expect(r.status).toBe(403);
    expect(r.message).toContain("sluice's own port");
  });

  test("a redirect is not followed", async () => {
    up.on(
      "GET",
      "/moved",
      () => new Response(null, { status: 302, headers: { location: `ws://127.0.0.1:${listener.port}/` } }),
    );
    const res = await fetch(wsUrl(allowed.proxyUrl, `${up.url.replace("https", "wss")}/moved`), {
      headers: UPGRADE,
    });
    expect(res.status).toBe(502);
    expect(connections).toBe(0);
  });

  test("credentials in the target URL are in no record: not the store, not the API", async () => {
    const target = `${up.url.replace("https://", "wss://alice:s3cr3t-url-token@")}/echo?key=also-secret`;
    const ws = await open(wsUrl(allowed.proxyUrl.replace("http", "ws"), target));
    ws.close();
    await allowed.runtime.store.flush();
    const res = await fetch(`${allowed.dashboardUrl}/api/v1/ws/connections`);
    const text = await res.text();
    expect(text).toContain("/echo");
    expect(text).not.toContain("s3cr3t-url-token");
    expect(text).not.toContain("also-secret");
  });
});

test("rows stored with credentials before are rewritten by the migration", () => {
  const db = new Database(":memory:");
  const key = new Uint8Array(32).fill(7);
  for (const m of MIGRATIONS.slice(0, 5)) {
    if (typeof m === "string") db.run(m);
    else m(db, { hmacKey: () => key, afterCommit: (fn) => fn() });
  }
  db.run("PRAGMA user_version = 5");
  const insert = db.query(
    "INSERT INTO ws_connections (connection_id, opened_at, opened_ms, state, target_url) VALUES (?, '', 0, 'closed', ?)",
  );
  insert.run("a", "wss://bob:tok-123@example.org:9443/feed");
  insert.run("b", "ws://example.net/plain");
  migrate(db, { hmacKey: () => key });
  const urls = db.query("SELECT connection_id, target_url FROM ws_connections ORDER BY connection_id").all();
  expect(urls).toEqual([
    { connection_id: "a", target_url: "wss://example.org:9443/feed" },
    { connection_id: "b", target_url: "ws://example.net/plain" },
  ]);
});

/**
 * A bare WebSocket relay, the floor for the Codex rows of `bun run bench network`
 * (`SLUICE_BENCH_RELAY=1`): `Bun.serve` takes the client's socket, a client `WebSocket` opens the
 * same path at `SLUICE_RELAY_TARGET` (wss://, trusting the CA file `SLUICE_RELAY_CA`), and every
 * frame is forwarded as it is, both ways. No compression on the client's side, as in sluice.
 * Prints `relay listening on <port>`.
 */
import { readFileSync } from "node:fs";

const target = process.env.SLUICE_RELAY_TARGET!;
const ca = readFileSync(process.env.SLUICE_RELAY_CA!, "utf8");

const server = Bun.serve<{ up: WebSocket }>({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req, srv) {
    const { pathname, search } = new URL(req.url);
    const up = new WebSocket(`${target}${pathname}${search}`, {
      headers: { authorization: req.headers.get("authorization") ?? "" },
      tls: { ca },
    } as unknown as string[]);
    up.binaryType = "arraybuffer";
    await new Promise<void>((resolve, reject) => {
      up.onopen = () => resolve();
      up.onerror = () => reject(new Error("relay: upstream WebSocket failed"));
    });
    return srv.upgrade(req, { data: { up } }) ? undefined : new Response("upgrade failed", { status: 400 });
  },
  websocket: {
    open(ws) {
      ws.data.up.onmessage = (e) => ws.send(e.data as string | ArrayBuffer);
    },
    message(ws, m) {
      ws.data.up.send(m);
    },
    close(ws) {
      ws.data.up.close();
    },
  },
});
console.log(`relay listening on ${server.port}`);

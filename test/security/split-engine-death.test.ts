/**
 * Split mode when the engine dies with a request in its hands. The relay used to send such a request
 * again, straight to the provider (fail_mode open: the provider got it twice), or to say it "was not
 * sent" (closed) while the provider had it. Now a request whose bytes reached the engine is never
 * resent: the client gets a 502 saying the outcome is unknown. Only an engine that refused the
 * connection (nothing sent) leaves the request to fail_mode.
 *
 * The engine dies 100 times (50 per fail mode, half mid-request, half mid-stream) by cutting every
 * connection between the relay and it at once, which is what the relay sees when the engine's process
 * dies; then twice as a real `sluice engine` process killed with SIGKILL. Every time: the provider got
 * the request exactly once, the client got an answer or a cut stream (never a hang), and each fail
 * mode kept its word.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startTestRelay } from "../helpers/relay.ts";
import { type SlowLink, startSlowLink } from "../helpers/slow-link.ts";
import { deadEndpoint, type InProcessSluice, spawnSluice, startSluice } from "../helpers/sluice.ts";
import {
  type RecordedRequest,
  type SseControl,
  sse,
  startUpstream,
  type Upstream,
} from "../helpers/upstream.ts";

const CLI = join(import.meta.dir, "../../src/cli.ts");
const ANTH = { "content-type": "application/json", "x-api-key": "k" };

let up: Upstream;
/** What the stand-in does with the next request: set per iteration. */
let onRequest: (req: RecordedRequest) => Response = () => Response.json({ id: "msg" });
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", (req) => onRequest(req));
});
afterAll(async () => {
  await up?.stop();
});

const relayTo = (engineUrl: string, failMode: "open" | "closed") =>
  startTestRelay(up.url, engineUrl, failMode);

/** Resolves once the relay's health checks see the engine healthy again. */
async function engineHealthy(relayUrl: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const h = (await (await fetch(`${relayUrl}/health`)).json()) as { engine: string };
    if (h.engine === "healthy") return;
    await new Promise((r) => setTimeout(r, 10)); // the next health check is at most 100 ms away
  }
  throw new Error("the relay never saw the engine healthy again");
}

const deliveries = (marker: string) =>
  up.requests.filter((r) => new TextDecoder().decode(r.body).includes(marker)).length;

function message(marker: string, stream = false) {
  return JSON.stringify({ model: "m", max_tokens: 1, stream, messages: [{ role: "user", content: marker }] });
}

/** A fetch that must settle: a hung client fails the test instead of hanging it. */
async function settled<T>(p: Promise<T>, what: string): Promise<T> {
  let timer!: ReturnType<typeof setTimeout>;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`client hung: ${what}`)), 15_000);
  });
  try {
    return await Promise.race([p, hung]);
  } finally {
    clearTimeout(timer);
  }
}

describe.each(["open", "closed"] as const)("the engine dies 50 times, fail_mode %s", (failMode) => {
  let engine: InProcessSluice;
  let link: SlowLink;
  let relay: Awaited<ReturnType<typeof relayTo>>;
  beforeAll(async () => {
    engine = await startSluice({ upstream: up.url, dashboard: false });
    link = await startSlowLink({ port: Number(new URL(engine.proxyUrl).port), rttMs: 0, scheme: "http" });
    relay = await relayTo(link.url, failMode);
  });
  afterAll(async () => {
    await relay?.stop();
    link?.stop();
    await engine?.stop();
  });

  test("mid-request, 25 times: delivered once, the client told the outcome is unknown", async () => {
    for (let i = 0; i < 25; i++) {
      await engineHealthy(relay.url);
      const marker = `mid-request-${failMode}-${i}`;
      onRequest = () => {
        link.cut(); // the engine has sent the request on, and dies before answering
        return Response.json({ id: "msg" });
      };
      const res = await settled(
        fetch(`${relay.url}/v1/messages`, { method: "POST", headers: ANTH, body: message(marker) }),
        marker,
      );
      const body = (await res.json()) as { error?: { message: string } };
      expect({ marker, status: res.status }).toEqual({ marker, status: 502 });
      expect(body.error?.message).toContain("may or may not have reached the provider");
      expect({ marker, deliveries: deliveries(marker) }).toEqual({ marker, deliveries: 1 });
    }
  }, 60_000);

  test("mid-stream, 25 times: delivered once, the client's stream ends cut", async () => {
    for (let i = 0; i < 25; i++) {
      await engineHealthy(relay.url);
      const marker = `mid-stream-${failMode}-${i}`;
      let ctl!: SseControl;
      onRequest = () => {
        ctl = sse();
        ctl.send("event: message_start\ndata: {}\n\n");
        return ctl.response();
      };
      const res = await settled(
        fetch(`${relay.url}/v1/messages`, { method: "POST", headers: ANTH, body: message(marker, true) }),
        marker,
      );
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      expect(new TextDecoder().decode((await settled(reader.read(), marker)).value)).toContain(
        "message_start",
      );
      link.cut();
      const rest = await settled(
        reader.read().then(
          (r) => (r.done ? "ended" : "more"),
          () => "cut",
        ),
        marker,
      );
      expect(["cut", "ended"]).toContain(rest);
      ctl.end();
      expect({ marker, deliveries: deliveries(marker) }).toEqual({ marker, deliveries: 1 });
    }
  }, 60_000);
});

test("an engine that refused the connection leaves the request to fail_mode: open sends it once, closed not at all", async () => {
  using dead = deadEndpoint();
  onRequest = () => Response.json({ id: "msg" });
  const open = await relayTo(dead.url, "open");
  const closed = await relayTo(dead.url, "closed");
  try {
    const a = await fetch(`${open.url}/v1/messages`, {
      method: "POST",
      headers: ANTH,
      body: message("refused-open"),
    });
    expect(a.status).toBe(200);
    expect(deliveries("refused-open")).toBe(1);
    const b = await fetch(`${closed.url}/v1/messages`, {
      method: "POST",
      headers: ANTH,
      body: message("refused-closed"),
    });
    expect(b.status).toBe(503);
    expect(((await b.json()) as { error: { message: string } }).error.message).toContain("was not sent");
    expect(deliveries("refused-closed")).toBe(0);
  } finally {
    await open.stop();
    await closed.stop();
  }
});

test("a real `sluice engine` killed with SIGKILL mid-request and mid-stream: delivered once each", async () => {
  for (const failMode of ["open", "closed"] as const) {
    await using engine = await spawnSluice(["--port", "0"], {
      upstream: up.url,
      command: [process.execPath, CLI, "engine"],
      portFlags: false,
      dashboard: false,
    });
    const relay = await relayTo(engine.proxyUrl, failMode);
    try {
      await engineHealthy(relay.url);
      const marker = `sigkill-${failMode}`;
      onRequest = () => {
        engine.kill("SIGKILL");
        return Response.json({ id: "msg" });
      };
      const res = await settled(
        fetch(`${relay.url}/v1/messages`, { method: "POST", headers: ANTH, body: message(marker) }),
        marker,
      );
      expect(res.status).toBe(502);
      await res.arrayBuffer();
      await engine.exited;
      expect(deliveries(marker)).toBe(1);
    } finally {
      await relay.stop();
    }
  }

  await using engine = await spawnSluice(["--port", "0"], {
    upstream: up.url,
    command: [process.execPath, CLI, "engine"],
    portFlags: false,
    dashboard: false,
  });
  const relay = await relayTo(engine.proxyUrl, "open");
  try {
    await engineHealthy(relay.url);
    let ctl!: SseControl;
    onRequest = () => {
      ctl = sse();
      ctl.send("event: message_start\ndata: {}\n\n");
      return ctl.response();
    };
    const res = await fetch(`${relay.url}/v1/messages`, {
      method: "POST",
      headers: ANTH,
      body: message("sigkill-stream", true),
    });
    const reader = res.body!.getReader();
    await settled(reader.read(), "first chunk");
    engine.kill("SIGKILL");
    await engine.exited;
    await settled(
      reader.read().then(
        () => undefined,
        () => undefined,
      ),
      "after SIGKILL",
    );
    ctl.end();
    expect(deliveries("sigkill-stream")).toBe(1);
  } finally {
    await relay.stop();
  }
}, 60_000);

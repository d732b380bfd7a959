/**
 * Regression for the Bun pitfall "Bun.serve idleTimeout defaults to 10 s": a stream silent for longer
 * than that must not be cut by sluice; only proxy.timeout's idle timer may cut a silent stream.
 */
import { expect, test } from "bun:test";
import { startSluice } from "../helpers/sluice.ts";
import { type SseControl, sse, startUpstream } from "../helpers/upstream.ts";

const ANTH = { "content-type": "application/json", "x-api-key": "k" };
const body = JSON.stringify({ model: "m", stream: true, messages: [] });

/** A streaming request through sluice whose first event has been read; the upstream waits on `ctl`. */
async function openStream(timeout: number) {
  const up = await startUpstream();
  let ctl!: SseControl;
  const got = new Promise<void>((r) =>
    up.on("POST", "/v1/messages", () => {
      ctl = sse();
      r();
      return ctl.response();
    }),
  );
  const s = await startSluice({ upstream: up.url, dashboard: false, config: { proxy: { timeout } } });
  const resP = fetch(`${s.proxyUrl}/v1/messages`, { method: "POST", headers: ANTH, body });
  await got;
  ctl.send("data: first\n\n");
  const reader = (await resP).body!.getReader();
  await reader.read();
  return {
    ctl,
    reader,
    async [Symbol.asyncDispose]() {
      await s[Symbol.asyncDispose]();
      await up[Symbol.asyncDispose]();
    },
  };
}

test("a stream silent for 11 s (longer than Bun's default idle timeout) is not cut", async () => {
  await using st = await openStream(30);
  // The silence under test: the upstream says nothing for 11 s.
  setTimeout(() => {
    st.ctl.send("data: second\n\n");
    st.ctl.end();
  }, 11_000);
  const second = await st.reader.read();
  expect(new TextDecoder().decode(second.value)).toBe("data: second\n\n");
}, 20_000);

test("proxy.timeout's idle timer cuts a stream silent for longer than the timeout, and the upstream is told", async () => {
  await using st = await openStream(1);
  await expect(st.reader.read()).rejects.toThrow();
  await st.ctl.cancelled;
});

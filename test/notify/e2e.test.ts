/**
 * Through sluice the way a user runs it: a webhook channel in config.yaml, a request carrying a
 * secret through the proxy, the signed message at a local receiver; then none of the raw values
 * (the matched secret, the webhook signing secret) in the database, the logs or the receiver's capture.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { verifyWebhook } from "../../src/notify/webhook-sign.ts";
import { startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

const RAW = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");
const HOOK_SECRET = ["e2e", "hook", "signing", "secret"].join("-");
const captured: string[] = [];
let arrived: (body: Record<string, unknown>) => void = () => {};
const hook = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const raw = await req.text();
    captured.push(raw, JSON.stringify([...req.headers]), req.url);
    const ok = verifyWebhook(
      HOOK_SECRET,
      raw,
      { signature: req.headers.get("x-sluice-signature"), timestamp: req.headers.get("x-sluice-timestamp") },
      Math.floor(Date.now() / 1000),
    );
    if (!ok) return new Response("bad signature", { status: 401 });
    arrived(JSON.parse(raw));
    return new Response("ok");
  },
});

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ ok: true }));
});
afterAll(async () => {
  hook.stop(true);
  await up?.stop();
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

test("a finding through the proxy reaches the webhook signed, and no raw value is stored or sent", async () => {
  await using s = await startSluice({
    upstream: up.url,
    config: {
      notifications: {
        channels: [
          {
            name: "hook",
            type: "webhook",
            url: `${hook.url.href}in`,
            secret: HOOK_SECRET,
            events: ["finding", "block"],
          },
        ],
      },
    },
  });
  const message = new Promise<Record<string, unknown>>((r) => {
    arrived = r;
  });
  const res = await fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "m", max_tokens: 1, messages: [{ role: "user", content: `key ${RAW}` }] }),
  });
  await res.text();
  const body = await message;
  expect(body).toMatchObject({ severity: "critical", count: 1 });
  expect(["finding", "block"]).toContain(body.type as string);
  expect((body.where as { path: string }).path).toContain("messages[0]");
  expect(String(body.link)).toStartWith(s.dashboardUrl ?? "");
  await s.stop();
  // config.yaml is the user's own file, where they wrote the secret; everything sluice wrote is checked.
  const written = filesUnder(s.configDir).filter((f) => !f.endsWith("config.yaml"));
  expect(written.some((f) => f.endsWith(".db"))).toBe(true);
  const stored = written.map((f) => readFileSync(f, "latin1"));
  for (const text of [...stored, ...captured]) {
    expect(text).not.toContain(RAW);
    expect(text).not.toContain(HOOK_SECRET);
  }
});

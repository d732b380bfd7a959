/**
 * The warm-up of the request path at start (src/proxy/warm-up.ts): it runs, says so in `/health`,
 * leaves nothing behind (no request recorded or counted, no session memory), never finds anything
 * in its own texts, and a conversation through sluice while and after it runs is scanned as ever.
 */
import { expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { defaultConfig } from "../../src/config/schema.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { createPipeline } from "../../src/policy/pipeline.ts";
import { warmUp } from "../../src/proxy/warm-up.ts";
import { startSluice } from "../helpers/sluice.ts";
import { anthropicMessage, json, startUpstream } from "../helpers/upstream.ts";

const OK = JSON.stringify([{ type: "text", text: "ok" }]);
// A fake key assembled at run time (never a literal in the source).
const AWS_KEY = ["AKIA", "IOSFODNN7", "EXAMPLQ"].join("");

/** The pipeline a sluice with its default configuration and built-in rules scans with. */
function defaultPipeline() {
  const rules = loadBuiltinRules();
  const cfg = defaultConfig();
  return createPipeline({
    config: () => cfg,
    rules: () => rules,
    rulesVersion: () => 1,
    hmacKey: new Uint8Array(32),
  });
}

test("its synthetic turns match no built-in rule, and the pipeline forgets their sessions", async () => {
  const pipeline = defaultPipeline();
  const seen: string[] = [];
  let most = 0;
  const hook: typeof pipeline.hook = (req) => {
    seen.push(`${req.provider} ${req.path} ${req.uniqueKeys ? "reparsed" : "parsed"}`);
    const v = pipeline.hook(req);
    // Its conversations' sessions are forgotten as it goes: never more than two held at once.
    most = Math.max(most, pipeline.stats().sessions);
    return v;
  };
  const r = await warmUp({ hook, forget: pipeline.forget, hmacKey: new Uint8Array(32) }, 120);
  expect(r).toEqual({ turns: 120 });
  // Both shapes, and most turns parsed from the previous one as a real conversation's are.
  expect(new Set(seen)).toEqual(
    new Set([
      "anthropic /v1/messages parsed",
      "anthropic /v1/messages reparsed",
      "openai /v1/responses parsed",
      "openai /v1/responses reparsed",
    ]),
  );
  expect(seen.filter((s) => s.endsWith("reparsed")).length).toBeGreaterThan(100);
  expect(pipeline.stats().sessions).toBe(0);
  expect(most).toBe(2);
});

test("stops at once when aborted", async () => {
  const pipeline = defaultPipeline();
  const abort = new AbortController();
  abort.abort();
  const r = await warmUp(
    { hook: pipeline.hook, forget: pipeline.forget, hmacKey: new Uint8Array(32) },
    1000,
    abort.signal,
  );
  expect(r).toEqual({ turns: 0, stopped: "aborted" });
});

test("a sluice that warms up: /health says so, nothing is recorded, and turns during and after it are scanned", async () => {
  await using up = await startUpstream();
  up.on("POST", "/v1/messages", () => json(anthropicMessage("ok")));
  await using s = await startSluice({ upstream: up.url, warmUp: true });
  expect(((await (await fetch(`${s.proxyUrl}/health`)).json()) as { warm_up: string }).warm_up).toBe(
    "running",
  );
  const client = new Anthropic({ baseURL: s.proxyUrl, apiKey: "sk-ant-api03-test", maxRetries: 0 });
  const turn = (text: string) =>
    client.messages
      .create({ model: "claude-test", max_tokens: 64, messages: [{ role: "user", content: text }] })
      .then(
        (m) => JSON.stringify(m.content),
        (e: Error) => e.message,
      );

  // While it runs (or just after, on a fast machine): a clean turn passes, a key is blocked.
  expect(await turn("Rename the helper in cache.ts")).toBe(OK);
  expect(await turn(`deploy with ${AWS_KEY}`)).toContain("sluice blocked this request: aws_access_key_id");

  await s.runtime.warmedUp();
  const h = (await (await fetch(`${s.proxyUrl}/health`)).json()) as Record<string, unknown>;
  expect(h.warm_up).toBe("done");
  // Only the two real turns were counted and recorded; only the clean one reached the upstream.
  expect(h.requests).toBe(2);
  expect(up.requests.length).toBe(1);
  const records = s.runtime.store.audit.list({}, 10, 0);
  expect(records.total).toBe(2);
  expect(records.entries.map((r) => r.action).sort()).toEqual(["block", "pass"]);

  // After it: the same again, in a conversation of several turns.
  expect(await turn("Now run the tests")).toBe(OK);
  expect(await turn(`the key is ${AWS_KEY}`)).toContain("sluice blocked this request: aws_access_key_id");
  expect(up.requests.length).toBe(2);
});

test("proxy.warm_up: false (the tests' default) runs none", async () => {
  await using s = await startSluice({ dashboard: false });
  const h = (await (await fetch(`${s.proxyUrl}/health`)).json()) as Record<string, unknown>;
  expect(h.warm_up).toBe("off");
});

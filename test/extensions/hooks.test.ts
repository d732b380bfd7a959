/**
 * Extension hooks as a team writing a plugin uses them: plugin files named in `extensions`, loaded by
 * real sluice, driven by real requests through the proxy (the Anthropic SDK, a Codex WebSocket) to the
 * local HTTPS stand-in. Each hook fires with its documented arguments; `evaluate` turns an alert into
 * a block; `pre_request` refuses; a throwing or hanging plugin leaves requests working, counted and
 * logged; an edited plugin is read again on reload; the compiled binary loads a plugin too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { hostBinaries } from "../helpers/binaries.ts";
import { type InProcessSluice, openWebSocket, spawnSluice, startSluice } from "../helpers/sluice.ts";
import { anthropicMessage, json, startUpstream, type Upstream } from "../helpers/upstream.ts";
import { fixture, sdkOverSluice, tempHome } from "../mcp/helpers.ts";

type Entry = [string, ...unknown[]];
const LOG_KEY = "__sluiceHookLog";
const log = (): Entry[] => ((globalThis as Record<string, unknown>)[LOG_KEY] ??= []) as Entry[];
const calls = (hook: string) => log().filter((e) => e[0] === hook);

const SSN = ["219", "09", "9999"].join("-");
const GH = ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"].join("");

/** A plugin that records every hook it gets into a list this test reads. */
const RECORDER = `
const log = (globalThis.${LOG_KEY} ??= []);
export default {
  name: "recorder",
  pre_request(p, session) {
    log.push(["pre_request", p, session.session_id]);
    if (p.path.includes("refuse-me")) return { block: "this path is not allowed by the recorder" };
  },
  evaluate(p, outcome, session) {
    log.push(["evaluate", p.request_id, outcome.action, outcome.findings.map((f) => f.rule)]);
    if (outcome.findings.some((f) => f.rule === "us_ssn")) return "block";
  },
  post_scan(p, outcome, extra) { log.push(["post_scan", outcome.action, extra.session.session_id]); },
  redact(p, redacted) { log.push(["redact", redacted.map((f) => f.rule)]); },
  rule_metrics(hits, p) { log.push(["rule_metrics", hits]); },
  request_trace(t) { log.push(["request_trace", t]); },
  config_reload(changes) { log.push(["config_reload", changes]); },
  accelerator(rules) {
    log.push(["accelerator", rules.length]);
    return (text) => !text.includes("NOTHING-TO-SEE-HERE");
  },
  health() { return { events: log.length, version: "v1" }; },
  metrics() { return { events: log.length }; },
  clients() { return [{ id: "acme-cli", display_name: "Acme CLI", setup: "export ACME_BASE_URL=http://127.0.0.1:8080" }]; },
  open(ws) { log.push(["open", ws]); },
  finding_detected(ws, finding) { log.push(["finding_detected", ws.connection_id, finding.rule, finding.preview, ws.frame]); },
  close(ws) { log.push(["close", ws]); },
};
`;

/** A plugin whose every hook throws or never answers. */
const FAULTY = `
export default {
  name: "faulty",
  pre_request() { throw new Error("pre_request exploded"); },
  evaluate() { return new Promise(() => {}); },
  post_scan() { throw new Error("post_scan exploded"); },
  health() { throw new Error("health exploded"); },
  metrics() { return new Promise(() => {}); },
  accelerator() { return () => { throw new Error("prefilter exploded"); }; },
};
`;

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json(anthropicMessage("ok")));
  up.ws("/v1/responses", {
    message(ws) {
      ws.send(JSON.stringify({ type: "response.completed" }));
    },
  });
});
afterAll(async () => {
  await up?.stop();
});

function pluginDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "sluice-plugins-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const client = (s: InProcessSluice) =>
  new Anthropic({ apiKey: "sk-ant-test", baseURL: s.proxyUrl, maxRetries: 0 });
const ask = (s: InProcessSluice, text: string) =>
  client(s).messages.create({
    model: "claude-test-model",
    max_tokens: 8,
    messages: [{ role: "user", content: text }],
  });

/** A request on a path the recorder's `pre_request` refuses. */
const refusable = (proxyUrl: string) =>
  fetch(`${proxyUrl}/v1/messages?refuse-me=1`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k" },
    body: JSON.stringify({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "hi" }] }),
  });

describe("a recording plugin", () => {
  let s: InProcessSluice;
  let dir: string;
  beforeAll(async () => {
    log().length = 0;
    dir = pluginDir({ "recorder.ts": RECORDER });
    s = await startSluice({
      upstream: up.url,
      config: {
        extensions: [join(dir, "recorder.ts")],
        detectors: { pii: { action: "alert" } },
        custom_rules: [
          { name: "acme_secret", pattern: "acme_[a-z]{12}", severity: "high", action: "redact" },
        ],
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
  });

  test("pre_request, evaluate, post_scan, rule_metrics and request_trace fire with their arguments", async () => {
    const msg = await ask(s, "hello there");
    expect(msg.content[0]).toMatchObject({ text: "ok" });
    const [pre] = calls("pre_request");
    expect(pre![1]).toMatchObject({
      provider: "anthropic",
      transport: "http",
      method: "POST",
      path: "/v1/messages",
    });
    expect((pre![1] as { request_id: string }).request_id).toMatch(/^req-\d+$/);
    expect(typeof pre![2]).toBe("string");
    expect(calls("evaluate")[0]!.slice(2)).toEqual(["pass", []]);
    expect(calls("post_scan")[0]![1]).toBe("pass");
    expect(calls("post_scan")[0]![2]).toBe(pre![2]);
    await s.runtime.store.flush();
    const trace = calls("request_trace").at(-1)![1] as Record<string, unknown>;
    expect(trace).toMatchObject({
      provider: "anthropic",
      method: "POST",
      action: "pass",
      upstream_status: 200,
    });
    expect(calls("accelerator")[0]![1]).toBeGreaterThan(300);
  });

  test("evaluate turns an alert into a block, and rule_metrics counts the rule", async () => {
    const before = up.requests.length;
    const err = await ask(s, `my ssn is ${SSN}`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
    expect(up.requests.length).toBe(before);
    const ev = calls("evaluate").at(-1)!;
    expect(ev[2]).toBe("alert"); // what policy chose: detectors.pii.action
    expect(ev[3]).toEqual(["us_ssn"]);
    expect(calls("post_scan").at(-1)![1]).toBe("block");
    expect(calls("rule_metrics").at(-1)![1]).toEqual({ us_ssn: 1 });
    expect(JSON.stringify(log())).not.toContain(SSN);
  });

  test("redact is told which findings were replaced, never their values", async () => {
    const before = up.requests.length;
    await ask(s, "deploy with acme_abcdefghijkl please");
    const sent = new TextDecoder().decode(up.requests.slice(before).at(-1)!.body);
    expect(sent).not.toContain("acme_abcdefghijkl");
    expect(calls("redact").at(-1)![1]).toEqual(["acme_secret"]);
    expect(calls("post_scan").at(-1)![1]).toBe("redact");
    expect(JSON.stringify(log())).not.toContain("acme_abcdefghijkl");
  });

  test("pre_request refuses a payload with its reason, before any scan", async () => {
    const res = await refusable(s.proxyUrl);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("extension_block");
    await s.runtime.store.flush();
    const stored = (await (
      await fetch(`${s.dashboardUrl}/api/v1/findings?finding_type=extension_block`)
    ).json()) as {
      findings: { action: string; description: string }[];
    };
    expect(stored.findings[0]).toMatchObject({
      action: "block",
      description: "blocked by extension recorder: this path is not allowed by the recorder",
    });
  });

  test("an accelerator that says a text cannot match skips its scan", async () => {
    const evaluated = calls("evaluate").length;
    const res = await ask(s, `NOTHING-TO-SEE-HERE ${GH}`); // the plugin's word is taken: not scanned
    expect(res.content[0]).toMatchObject({ text: "ok" });
    expect(calls("evaluate").length).toBe(evaluated);
  });

  test("health, metrics and clients show the plugin's answers", async () => {
    const health = (await (await fetch(`${s.proxyUrl}/health`)).json()) as {
      extensions: Record<string, { version: string }>;
    };
    expect(health.extensions.recorder!.version).toBe("v1");
    const metrics = await (await fetch(`${s.proxyUrl}/metrics`)).text();
    expect(metrics).toMatch(/^sluice_extension_recorder_events \d+$/m);
    const clients = (await (await fetch(`${s.dashboardUrl}/api/v1/clients`)).json()) as {
      clients: { id: string }[];
    };
    expect(clients.clients.map((c) => c.id)).toContain("acme-cli");
  });

  test("WebSocket open, finding_detected and close carry the connection id", async () => {
    const ws = await openWebSocket(s.proxyUrl, "/v1/responses", { authorization: "Bearer sk-test" });
    const answered = new Promise((r) => ws.addEventListener("message", r, { once: true }));
    ws.send(JSON.stringify({ type: "response.create", input: `my token ${GH}` }));
    await answered; // a secret in a frame: blocked, answered with an error event
    const closed = new Promise((r) => ws.addEventListener("close", r, { once: true }));
    ws.close();
    await closed;
    await s.runtime.store.flush();
    const open = calls("open").at(-1)![1] as { connection_id: string; provider: string };
    expect(open.provider).toBe("openai");
    const found = calls("finding_detected").at(-1)!;
    expect(found[1]).toBe(open.connection_id);
    expect(found[4]).toBe(1);
    expect(found[2]).toBe("github_pat");
    expect(String(found[3])).not.toContain(GH.slice(4));
    for (let i = 0; i < 100 && calls("close").length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect((calls("close").at(-1)![1] as { connection_id: string }).connection_id).toBe(open.connection_id);
  });

  test("on reload an edited plugin is read again, and config_reload gets the changes", async () => {
    writeFileSync(join(dir, "recorder.ts"), RECORDER.replace('version: "v1"', 'version: "v2"'));
    const r = await s.runtime.reload({ "proxy.timeout": 90 }, "api");
    expect(r.ok).toBe(true);
    for (let i = 0; i < 100; i++) {
      const h = (await (await fetch(`${s.proxyUrl}/health`)).json()) as {
        extensions: Record<string, { version: string }>;
      };
      if (h.extensions.recorder?.version === "v2") break;
      await new Promise((res) => setTimeout(res, 10));
    }
    const h = (await (await fetch(`${s.proxyUrl}/health`)).json()) as {
      extensions: Record<string, { version: string }>;
    };
    expect(h.extensions.recorder!.version).toBe("v2");
    expect(calls("config_reload").some((e) => JSON.stringify(e[1]).includes("proxy.timeout"))).toBe(true);
  });
});

test("a plugin that throws and hangs in every hook leaves requests working; faults are counted and logged", async () => {
  const dir = pluginDir({ "faulty.ts": FAULTY });
  await using s = await startSluice({
    upstream: up.url,
    config: { extensions: [join(dir, "faulty.ts")], extension_timeout_ms: 100 },
  });
  const ok = await ask(s, "hello");
  expect(ok.content[0]).toMatchObject({ text: "ok" });
  const blocked = await ask(s, `token ${GH}`).catch((e: unknown) => e);
  expect((blocked as InstanceType<typeof Anthropic.APIError>).status).toBe(400); // policy still blocks
  const health = await fetch(`${s.proxyUrl}/health`);
  expect(health.status).toBe(200);
  const metrics = await (await fetch(`${s.proxyUrl}/metrics`)).text();
  expect(metrics).toContain('sluice_extension_errors_total{plugin="faulty",hook="pre_request"}');
  expect(metrics).toContain('sluice_extension_errors_total{plugin="faulty",hook="evaluate"}');
  expect(metrics).toContain('sluice_extension_errors_total{plugin="faulty",hook="accelerator"}');
});

test("a plugin file that does not load is reported, and sluice runs without it", async () => {
  const dir = pluginDir({ "broken.ts": "export default 42;" });
  await using s = await startSluice({
    upstream: up.url,
    config: { extensions: [join(dir, "broken.ts"), join(dir, "missing.ts")] },
  });
  expect((await ask(s, "hello")).content[0]).toMatchObject({ text: "ok" });
  expect(s.runtime.extensions.names).toEqual([]);
});

test("the compiled binary loads a plugin", async () => {
  const dir = pluginDir({ "recorder.ts": RECORDER });
  const { sluice } = await hostBinaries();
  await using p = await spawnSluice([], {
    binary: sluice,
    upstream: up.url,
    config: { extensions: [join(dir, "recorder.ts")] },
  });
  const res = await refusable(p.proxyUrl);
  expect(res.status).toBe(400);
  expect(await res.text()).toContain("extension_block");
  const health = (await (await fetch(`${p.proxyUrl}/health`)).json()) as {
    extensions: Record<string, unknown>;
  };
  expect(health.extensions.recorder).toMatchObject({ version: "v1" });
}, 120_000);

test("the example plugin of docs/extensions sends findings to a collector, masked", async () => {
  const lines: Record<string, unknown>[] = [];
  let got!: () => void;
  const arrived = new Promise<void>((r) => (got = r));
  const collector = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      for (const l of (await req.text()).trim().split("\n")) lines.push(JSON.parse(l));
      got();
      return new Response("ok");
    },
  });
  process.env.SLUICE_SIEM_URL = `http://127.0.0.1:${collector.port}/ingest`;
  try {
    await using s = await startSluice({
      upstream: up.url,
      config: { extensions: [join(import.meta.dir, "../../docs/extensions/siem.ts")] },
    });
    const err = await ask(s, `token ${GH}`).catch((e: unknown) => e);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
    await arrived; // the plugin flushes once a second
    expect(lines[0]).toMatchObject({
      source: "sluice",
      action: "block",
      rule: "github_pat",
      provider: "anthropic",
    });
    expect(JSON.stringify(lines)).not.toContain(GH.slice(4));
    // The collector answered; the plugin counts the batch once it has read that answer.
    let sent = 0;
    for (let i = 0; i < 200 && sent === 0; i++) {
      const health = (await (await fetch(`${s.proxyUrl}/health`)).json()) as {
        extensions: { siem: { sent: number } };
      };
      sent = health.extensions.siem.sent;
    }
    expect(sent).toBeGreaterThanOrEqual(1);
  } finally {
    delete process.env.SLUICE_SIEM_URL;
    collector.stop(true);
  }
});

test("sluice mcp runs the plugins too: evaluate blocks a tool call policy only alerted on", async () => {
  const home = tempHome({
    custom_rules: [
      { name: "test-token", pattern: "sluicetest_[a-f0-9]{16}", severity: "high", action: "alert" },
    ],
    extensions: ["./strict.ts"],
  });
  writeFileSync(
    join(home, "strict.ts"),
    `export default { name: "strict", evaluate(payload, outcome) { if (payload.transport === "mcp" && outcome.action === "alert") return "block"; } };`,
  );
  const rec = join(home, "received.jsonl");
  {
    await using s = await sdkOverSluice(["--", "bun", fixture("recording-server.ts"), rec], { home });
    const err = await s.client
      .callTool({ name: "echo", arguments: { message: "sluicetest_4f9a1c2e8b7d6a5f" } })
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(err?.message).toContain("sluice blocked tools/call echo");
    const ok = await s.client.callTool({ name: "echo", arguments: { message: "clean" } });
    expect((ok.content as { text: string }[])[0]!.text).toBe("clean");
  }
  expect(await Bun.file(rec).text()).not.toContain("sluicetest_4f9a1c2e8b7d6a5f");
});

/**
 * The write side of `/api/v1/notifications` through a running sluice, over HTTP as the dashboard
 * calls it: create (validation naming the field), change, delete, test against real receivers,
 * batch; config-file channels read-only except `enabled`; CSRF and Origin; channels kept across a
 * restart with their secrets sealed, so neither the database nor the logs hold them.
 */
import { afterAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { startSluice, writeTestConfig } from "../helpers/sluice.ts";
import { signedReceiver } from "./receivers.ts";

const HOOK_SECRET = ["api", "hook", "signing", "secret"].join("-");
const URL_TOKEN = ["tok", "en", "in", "the", "path", "9f3a"].join("");
const SLACK_URL = `https://hooks.slack.com/services/T0/B0/${["yaml", "slack", "path", "value"].join("")}`;

const hook = signedReceiver(HOOK_SECRET);
const arrived = hook.arrived;
const failing = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response("receiver is down", { status: 503 }),
});
afterAll(() => {
  hook.stop();
  failing.stop(true);
});

const yamlChannels = {
  notifications: { channels: [{ name: "sec-slack", type: "slack", webhook_url: SLACK_URL }] },
};

function client(base: string) {
  let csrf: string | null = null;
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const h: Record<string, string> = { "content-type": "application/json", ...headers };
    if (method !== "GET" && !("x-csrf-token" in headers)) {
      csrf ??= (await (await fetch(`${base}/api/v1/auth/session`)).json()).csrf_token as string;
      h["x-csrf-token"] = csrf;
    }
    const r = await fetch(`${base}${path}`, {
      method,
      headers: h,
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, text, json: text.startsWith("{") ? JSON.parse(text) : null };
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

const webhook = () => ({
  name: "ops-hook",
  type: "webhook",
  url: `${hook.url}in/${URL_TOKEN}`,
  secret: HOOK_SECRET,
  events: ["block"],
  min_severity: "critical",
});

test("create validates and names the bad field; nothing is stored on bad input", async () => {
  await using s = await startSluice({ config: yamlChannels });
  const api = client(s.dashboardUrl!);
  const bad = async (body: unknown, field: RegExp, status = 400) => {
    const r = await api("POST", "/api/v1/notifications", body);
    expect(r.status).toBe(status);
    expect(r.json.error.message).toMatch(field);
  };
  await bad({ name: "x", type: "sms" }, /^type: must be one of "webhook"/);
  await bad({ name: "x", type: "webhook", secret: "s" }, /^url: /);
  await bad({ name: "x", type: "webhook", url: "ftp://h/x", secret: "s" }, /^url: /);
  await bad({ name: "x y", type: "slack", webhook_url: SLACK_URL }, /^name: /);
  await bad({ name: "x", type: "slack", webhook_url: SLACK_URL, colour: "red" }, /^colour: not a field/);
  await bad({ name: "x", type: "slack", webhook_url: SLACK_URL, events: ["lunch"] }, /^events\.0: /);
  await bad(
    { name: "x", type: "email", smtp_host: "h", from_addr: "alerts@example.com", to_addrs: [] },
    /^to_addrs: /,
  );
  await bad({ ...webhook(), name: "sec-slack" }, /^name: a channel named sec-slack exists/, 409);
  await bad("[1]", /JSON object/);
  const list = await api("GET", "/api/v1/notifications");
  expect(list.json.channels.map((c: { name: string }) => c.name)).toEqual(["sec-slack"]);
});

test("CRUD, masking, config channels read-only except enabled, batch, CSRF and Origin", async () => {
  await using s = await startSluice({ config: yamlChannels });
  const api = client(s.dashboardUrl!);

  expect((await api("POST", "/api/v1/notifications", webhook(), { "x-csrf-token": "wrong" })).status).toBe(
    403,
  );
  const foreign = await api("POST", "/api/v1/notifications", webhook(), { origin: "http://evil.example" });
  expect(foreign.status).toBe(403);
  expect((await api("GET", "/api/v1/notifications/ops-hook")).status).toBe(404);

  const created = await api("POST", "/api/v1/notifications", webhook());
  expect(created.status).toBe(201);
  expect(created.text).not.toContain(URL_TOKEN);
  expect(created.text).not.toContain(HOOK_SECRET);
  expect(created.json).toMatchObject({
    name: "ops-hook",
    source: "api",
    read_only: false,
    cooldown_seconds: 300,
  });

  const list = await api("GET", "/api/v1/notifications");
  expect(list.text).not.toContain(URL_TOKEN);
  expect(list.text).not.toContain(HOOK_SECRET);
  expect(list.json.channels.map((c: { name: string; source: string }) => `${c.name}:${c.source}`)).toEqual([
    "sec-slack:config",
    "ops-hook:api",
  ]);
  const types = await api("GET", "/api/v1/notifications/types");
  expect(types.json).toMatchObject({ count: 2, limit: null });
  expect(types.json.types[0]).toMatchObject({ type: "webhook", secret_fields: ["url", "secret"] });

  // Partial change; the masked secret sent back as shown keeps the stored one.
  const one = (await api("GET", "/api/v1/notifications/ops-hook")).json;
  const put = await api("PUT", "/api/v1/notifications/ops-hook", {
    cooldown_seconds: 60,
    url: one.url,
    secret: one.secret,
  });
  expect(put.status).toBe(200);
  expect(put.json).toMatchObject({ cooldown_seconds: 60, events: ["block"], min_severity: "critical" });
  const tested = await api("POST", "/api/v1/notifications/ops-hook/test");
  expect(tested.json).toMatchObject({ channel: "ops-hook", ok: true, answer: "200 accepted" });
  expect(arrived.at(-1)).toMatchObject({ signed: true, body: { action: "test", count: 1 } });

  expect(
    (await api("PUT", "/api/v1/notifications/ops-hook", { cooldown_seconds: -1 })).json.error.message,
  ).toMatch(/^cooldown_seconds: /);
  expect((await api("PUT", "/api/v1/notifications/ops-hook", { name: "other" })).status).toBe(400);
  expect((await api("PUT", "/api/v1/notifications/ops-hook", { type: "slack" })).status).toBe(400);
  expect((await api("GET", "/api/v1/notifications/ops-hook")).json.cooldown_seconds).toBe(60);

  // The config file's channel: only enabled, and it is not deleted.
  const ro = await api("PUT", "/api/v1/notifications/sec-slack", { cooldown_seconds: 5 });
  expect(ro.status).toBe(409);
  expect(ro.json.error).toMatchObject({ code: "read_only" });
  expect(ro.json.error.message).toMatch(/^cooldown_seconds: /);
  expect((await api("DELETE", "/api/v1/notifications/sec-slack")).status).toBe(409);
  const off = await api("PUT", "/api/v1/notifications/sec-slack", { enabled: false });
  expect(off.json).toMatchObject({ name: "sec-slack", enabled: false, read_only: true });

  await api("POST", "/api/v1/notifications", {
    name: "pager",
    type: "pagerduty",
    routing_key: "R".repeat(32),
  });
  const batch = await api("POST", "/api/v1/notifications/batch", {
    action: "disable",
    names: ["ops-hook", "pager", "missing"],
  });
  expect(batch.json).toMatchObject({
    ok: false,
    results: [
      { name: "ops-hook", ok: true },
      { name: "pager", ok: true },
      { name: "missing", ok: false, error: { code: "not_found" } },
    ],
  });
  const enabled = async () =>
    Object.fromEntries(
      (await api("GET", "/api/v1/notifications")).json.channels.map(
        (c: { name: string; enabled: boolean }) => [c.name, c.enabled],
      ),
    );
  expect(await enabled()).toEqual({ "sec-slack": false, "ops-hook": false, pager: false });
  await api("POST", "/api/v1/notifications/batch", { action: "enable", names: ["sec-slack", "pager"] });
  expect(await enabled()).toEqual({ "sec-slack": true, "ops-hook": false, pager: true });
  expect((await api("POST", "/api/v1/notifications/batch", { action: "explode", names: ["x"] })).status).toBe(
    400,
  );
  expect((await api("POST", "/api/v1/notifications/batch", { action: "delete", names: [] })).status).toBe(
    400,
  );

  const del = await api("POST", "/api/v1/notifications/batch", {
    action: "delete",
    names: ["pager", "sec-slack"],
  });
  expect(del.json.results).toMatchObject([
    { name: "pager", ok: true },
    { name: "sec-slack", ok: false, error: { code: "read_only" } },
  ]);
  expect((await api("DELETE", "/api/v1/notifications/ops-hook")).json).toEqual({
    ok: true,
    deleted: "ops-hook",
  });
  expect((await api("DELETE", "/api/v1/notifications/ops-hook")).status).toBe(404);
});

test("a restart keeps API channels; the database and logs hold no secret; a failed send is one log line", async () => {
  let home: string;
  {
    await using s = await startSluice();
    home = s.configDir;
    const api = client(s.dashboardUrl!);
    expect((await api("POST", "/api/v1/notifications", webhook())).status).toBe(201);
    const down = {
      name: "down-hook",
      type: "webhook",
      url: `${failing.url.href}x/${URL_TOKEN}`,
      secret: HOOK_SECRET,
    };
    expect((await api("POST", "/api/v1/notifications", down)).status).toBe(201);
    const t = await api("POST", "/api/v1/notifications/down-hook/test");
    expect(t.json).toMatchObject({ ok: false, error: "receiver answered 503 receiver is down" });
    expect(statSync(join(home, "notify.key")).mode & 0o777).toBe(0o600);
  }
  await using s = await startSluice({ home });
  const api = client(s.dashboardUrl!);
  const names = (await api("GET", "/api/v1/notifications")).json.channels.map(
    (c: { name: string }) => c.name,
  );
  expect(names).toEqual(["down-hook", "ops-hook"]);
  const before = arrived.length;
  expect((await api("POST", "/api/v1/notifications/ops-hook/test")).json).toMatchObject({ ok: true });
  expect(arrived.length).toBe(before + 1);
  expect(arrived.at(-1)?.signed).toBe(true);
  await s.runtime.store.flush();

  const log = readFileSync(join(home, "logs", "sluice.log"), "utf8");
  const failed = log.split("\n").filter((l) => l.includes("notification delivery failed"));
  expect(failed.length).toBe(1);
  expect(failed[0]).toContain("down-hook");
  expect(failed[0]).toContain("webhook");
  expect(failed[0]).toContain("1/1");
  expect(failed[0]).toContain("503");
  for (const f of filesUnder(home)) {
    const bytes = readFileSync(f).toString("latin1");
    expect({ f, secret: bytes.includes(HOOK_SECRET) }).toEqual({ f, secret: false });
    expect({ f, token: bytes.includes(URL_TOKEN) }).toEqual({ f, token: false });
  }
});

test("a config-file channel added later under an API channel's name wins; the API one is shown unused and can be deleted", async () => {
  await using s = await startSluice();
  const api = client(s.dashboardUrl!);
  expect((await api("POST", "/api/v1/notifications", { ...webhook(), name: "dup" })).status).toBe(201);
  writeTestConfig({
    home: s.configDir,
    config: { notifications: { channels: [{ name: "dup", type: "slack", webhook_url: SLACK_URL }] } },
  });
  expect((await s.runtime.reload()).ok).toBe(true);
  const list = (await api("GET", "/api/v1/notifications")).json.channels;
  expect(
    list.map((c: { name: string; source: string; error: string | null }) => [c.name, c.source, c.error]),
  ).toEqual([
    ["dup", "config", null],
    ["dup", "api", "the config file has a channel of this name, which is used instead"],
  ]);
  expect((await api("GET", "/api/v1/notifications/dup")).json).toMatchObject({
    source: "config",
    type: "slack",
  });
  expect((await api("DELETE", "/api/v1/notifications/dup")).status).toBe(200);
  const after = (await api("GET", "/api/v1/notifications")).json.channels;
  expect(after.map((c: { name: string; source: string }) => `${c.name}:${c.source}`)).toEqual(["dup:config"]);
  expect((await api("DELETE", "/api/v1/notifications/dup")).json.error.code).toBe("read_only");
});

/**
 * `sluice allowlist` against a running sluice: a value a block message names is allowed from the
 * command line and the next request passes at once; removed, it is blocked again. The command prints
 * the value masked, refuses a misspelt flag, logs in when the dashboard has a password, and says so
 * when no dashboard answers.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { deadEndpoint, type InProcessSluice, runSluice, startSluice } from "../helpers/sluice.ts";
import { anthropicMessage, json, startUpstream, type Upstream } from "../helpers/upstream.ts";

// A fake key assembled at run time (never a literal in the source).
const AWS_ID = ["AKIA", "IOSFODNN7", "EXAMPLW"].join("");

let up: Upstream;
let s: InProcessSluice;

beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json(anthropicMessage("ok", "claude-test")));
  s = await startSluice({ upstream: up.url });
});
afterAll(async () => {
  await s?.stop();
  await up?.stop();
});

const send = () =>
  fetch(`${s.proxyUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": "k" },
    body: JSON.stringify({
      model: "claude-test",
      max_tokens: 1,
      messages: [{ role: "user", content: `the key is ${AWS_ID}` }],
    }),
  });

test("a blocked value allowed with `sluice allowlist add` passes at once; removed, it is blocked again", async () => {
  const blocked = await send();
  expect(blocked.status).toBe(400);
  const message = ((await blocked.json()) as { error: { message: string } }).error.message;
  expect(message).toContain("sluice allowlist add '<the value>' --type secrets");

  const added = await runSluice([
    "allowlist",
    "add",
    AWS_ID,
    "--type",
    "secrets",
    "--dashboard",
    s.dashboardUrl!,
  ]);
  expect(added.stderr).toBe("");
  expect(added.code).toBe(0);
  const id = /allowed \(secrets, #(\d+)\)/.exec(added.stdout)?.[1];
  expect(id).toBeDefined();
  expect(added.stdout).not.toContain(AWS_ID);
  expect(added.stdout).toContain("AKIA********");

  const before = up.requests.length;
  const passed = await send();
  expect(passed.status).toBe(200);
  expect(up.requests.length).toBe(before + 1);

  const again = await runSluice(["allowlist", "add", AWS_ID, "--dashboard", s.dashboardUrl!]);
  expect(again.code).toBe(0);
  expect(again.stdout).toContain("already allowed (secrets)");

  const listed = await runSluice(["allowlist", "list", "--dashboard", s.dashboardUrl!]);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain(`secrets\t#${id}\tAKIA********`);
  expect(listed.stdout).not.toContain(AWS_ID);
  const asJson = await runSluice(["allowlist", "list", "--json", "--dashboard", s.dashboardUrl!]);
  const lists = JSON.parse(asJson.stdout) as Record<string, { id?: number; pattern: string }[]>;
  expect(lists.secrets).toContainEqual({ id: Number(id), pattern: AWS_ID, source: "api" } as never);

  const removed = await runSluice(["allowlist", "remove", id!, "--dashboard", s.dashboardUrl!]);
  expect(removed.code).toBe(0);
  expect(removed.stdout).toContain(`removed allowlist entry #${id}`);
  expect((await send()).status).toBe(400);
});

test("mistakes: a misspelt flag, a wrong type, a bad entry number, a missing pattern (exit 2, one line)", async () => {
  const typo = await runSluice(["allowlist", "add", "x", "--tpye", "pii", "--dashboard", s.dashboardUrl!]);
  expect(typo.code).toBe(2);
  expect(typo.stderr).toContain("--tpye");
  expect(typo.stderr).toContain("--type");
  const type = await runSluice([
    "allowlist",
    "add",
    "x",
    "--type",
    "password",
    "--dashboard",
    s.dashboardUrl!,
  ]);
  expect(type.code).toBe(2);
  expect(type.stderr).toContain('allowed values: "secrets", "pii", "paths"');
  const id = await runSluice(["allowlist", "remove", "abc", "--dashboard", s.dashboardUrl!]);
  expect(id.code).toBe(2);
  expect(id.stderr).toContain('"abc" is not an entry number');
  const missing = await runSluice(["allowlist", "add", "--dashboard", s.dashboardUrl!]);
  expect(missing.code).toBe(2);
  const gone = await runSluice(["allowlist", "remove", "999999", "--dashboard", s.dashboardUrl!]);
  expect(gone.code).toBe(2);
  expect(gone.stderr).toContain("removing entry #999999 failed (404");
});

test("no dashboard answering: says where it looked and how to start one", async () => {
  await using dead = deadEndpoint();
  const r = await runSluice(["allowlist", "list", "--dashboard", dead.url]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`no sluice dashboard answers at ${dead.url}`);
  expect(r.stderr).toContain("sluice serve");
});

test("a dashboard with a password: refused without it, logged in with SLUICE_DASHBOARD_PASSWORD", async () => {
  const password = ["correct", "horse", "battery"].join("-");
  await using locked = await startSluice({ upstream: up.url, config: { dashboard: { password } } });
  const without = await runSluice(
    ["allowlist", "add", "*@partner.example", "--type", "pii", "--dashboard", locked.dashboardUrl!],
    {
      env: { SLUICE_DASHBOARD_PASSWORD: "" },
    },
  );
  expect(without.code).toBe(2);
  expect(without.stderr).toContain("set SLUICE_DASHBOARD_PASSWORD");
  const wrong = await runSluice(["allowlist", "list", "--dashboard", locked.dashboardUrl!], {
    env: { SLUICE_DASHBOARD_PASSWORD: "wrong" },
  });
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toContain("logging in to the dashboard");
  const ok = await runSluice(
    ["allowlist", "add", "*@partner.example", "--type", "pii", "--dashboard", locked.dashboardUrl!],
    {
      env: { SLUICE_DASHBOARD_PASSWORD: password },
    },
  );
  expect(ok.stderr).toBe("");
  expect(ok.code).toBe(0);
  expect(ok.stdout).toContain("allowed (pii, #");
  const listed = await (await fetch(`${locked.dashboardUrl}/api/v1/allowlists`)).status;
  expect(listed).toBe(401);
});

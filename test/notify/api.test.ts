import { afterAll, expect, test } from "bun:test";
import { startSluice } from "../helpers/sluice.ts";

const SLACK_URL = `https://hooks.slack.com/services/T0/B0/${["sec", "ret", "path", "value"].join("")}`;
const failing = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response("no", { status: 500 }),
});
afterAll(() => failing.stop(true));

test("types, list (masked, with status) and single GET of config channels", async () => {
  await using s = await startSluice({
    config: {
      notifications: {
        channels: [
          { name: "sec-slack", type: "slack", webhook_url: SLACK_URL },
          {
            name: "pager",
            type: "pagerduty",
            routing_key: "R0123456789abcdef0123456789abcd",
            url: failing.url.href,
          },
        ],
      },
    },
  });
  const get = async (p: string) => {
    const r = await fetch(`${s.dashboardUrl}${p}`);
    return { status: r.status, text: await r.text() };
  };
  const types = JSON.parse((await get("/api/v1/notifications/types")).text);
  expect(types.types.map((t: { type: string }) => t.type)).toEqual([
    "webhook",
    "email",
    "slack",
    "teams",
    "pagerduty",
    "opsgenie",
    "jira",
  ]);
  expect(types).toMatchObject({ count: 2, limit: null });

  const list = await get("/api/v1/notifications");
  expect(list.status).toBe(200);
  expect(list.text).not.toContain("secretpathvalue");
  expect(list.text).not.toContain("0123456789abcdef");
  const { channels } = JSON.parse(list.text);
  expect(channels[0]).toMatchObject({
    name: "sec-slack",
    type: "slack",
    webhook_url: "http****alue",
    read_only: true,
    status: { pending: 0, sent: 0, dropped: 0, last_error: null },
  });

  const one = await get("/api/v1/notifications/pager");
  expect(JSON.parse(one.text)).toMatchObject({ name: "pager", routing_key: "R012****abcd" });
  expect((await get("/api/v1/notifications/nope")).status).toBe(404);
});

import { expect, test } from "bun:test";
import { parse } from "yaml";
import { configSchema } from "../../src/config/schema.ts";
import { channelSchema, maskedChannel } from "../../src/notify/channel-schema.ts";

test("the YAML shape scripts rely on parses, with defaults filled in", () => {
  const yaml = `
notifications:
  channels:
    - name: sec-slack
      type: slack
      enabled: true
      events: [finding, block]
      min_severity: high
      cooldown_seconds: 300
      webhook_url: https://hooks.slack.com/services/T0/B0/xyz
    - name: pager
      type: pagerduty
      routing_key: R0123456789abcdef0123456789abcd
      url: http://127.0.0.1:9/v2/enqueue
`;
  const c = configSchema.parse(parse(yaml));
  expect(c.notifications.channels.map((ch) => [ch.name, ch.type, ch.cooldown_seconds, ch.events])).toEqual([
    ["sec-slack", "slack", 300, ["finding", "block"]],
    ["pager", "pagerduty", 300, ["finding", "block"]],
  ]);
});

test("a missing or wrong field is named", () => {
  const r = channelSchema.safeParse({
    name: "j",
    type: "jira",
    url: "https://x.atlassian.net",
    email: "dev@example.com",
  });
  expect(r.success).toBe(false);
  expect(r.error?.issues.map((i) => i.path.join("."))).toEqual(["api_token", "project_key"]);
  const t = channelSchema.safeParse({ name: "x", type: "fax" });
  expect(t.error?.issues[0]?.path).toEqual(["type"]);
  const dup = configSchema.safeParse({
    notifications: {
      channels: [
        { name: "a", type: "slack", webhook_url: "https://h.example/1" },
        { name: "a", type: "teams", webhook_url: "https://h.example/2" },
      ],
    },
  });
  expect(dup.error?.issues[0]?.message).toBe("channel names must be unique");
});

test("masking leaves no secret field readable", () => {
  const token = ["ATATT3x", "FfGF0", "tokenvalue"].join("");
  const c = channelSchema.parse({
    name: "j",
    type: "jira",
    url: "https://x.atlassian.net",
    email: "dev@example.com",
    api_token: token,
    project_key: "SEC",
  });
  const m = maskedChannel(c);
  expect(JSON.stringify(m)).not.toContain(token);
  expect(m).toMatchObject({ api_token: "ATAT****alue", url: "https://x.atlassian.net" });
});

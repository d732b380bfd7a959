import { afterAll, expect, test } from "bun:test";
import type { FindingEvent } from "../../src/core/bus.ts";
import { Bus } from "../../src/core/bus.ts";
import { blankSession } from "../../src/core/types.ts";
import { createDispatcher } from "../../src/notify/dispatcher.ts";
import { webhookRequest } from "../../src/notify/payloads.ts";
import { signedReceiver } from "./receivers.ts";
import { inflight, manualScheduler } from "./scheduler.ts";

const SECRET = ["storm", "hook", "key"].join("-");
// The messages are signed with the hand-driven clock's time: the receiver takes it as its own.
const hook = signedReceiver(SECRET, "ok", (req) => Number(req.headers.get("x-sluice-timestamp")));
const received = () => hook.arrived.filter((a) => a.signed).map((a) => a.body);
afterAll(() => hook.stop());

function finding(severity: "critical" | "info", i: number): FindingEvent {
  return {
    finding: {
      rule: severity === "critical" ? "aws_access_key" : "email_address",
      detector: "secrets",
      finding_type: "x",
      severity,
      action: "alert",
      action_source: "rule",
      matched_rules: [],
      path: `messages[${i}].content`,
      start: 0,
      end: 1,
      preview: "AKIA****MPLE",
      content_hash: "0".repeat(64),
      value_hash: null,
      decoded: null,
      description: "",
    },
    session: blankSession({
      session_id: "s-1",
      client: "claude-code",
      client_name: "Claude Code",
      working_directory: "/w",
    }),
    provider: "anthropic",
    request_id: `req-${i}`,
    transport: "http",
  } as FindingEvent;
}

test("a storm of 1,000 findings in 10 s: one message, then one summary carrying the count; min_severity filters", async () => {
  const s = manualScheduler();
  const bus = new Bus();
  const d = createDispatcher(bus, "http://127.0.0.1:1", { scheduler: s });
  d.setChannels([
    {
      name: "hook",
      type: "webhook",
      enabled: true,
      events: ["finding"],
      min_severity: "high",
      cooldown_seconds: 300,
      send: async (delivery, signal) => {
        const r = webhookRequest(hook.url, SECRET, delivery, Math.floor(s.now() / 1000));
        const p = fetch(r.url, { method: "POST", headers: r.headers, body: r.body, signal }).then(
          async (res) => {
            if (!res.ok) throw new Error(`receiver answered ${res.status}`);
            return res.text();
          },
        );
        inflight.add(p.catch(() => {}));
        return p;
      },
    },
  ]);
  for (let i = 0; i < 1000; i++) {
    bus.emit("finding", finding("critical", i));
    bus.emit("finding", finding("info", i)); // below min_severity: never sent
    await s.advance(10);
  }
  expect(received()).toEqual([expect.objectContaining({ type: "finding", count: 1 })]);
  await s.advance(300_000);
  expect(received().length).toBe(2);
  // the summary counts the 999 held back; with the first message, all 1,000 are accounted for
  expect(received()[1]).toMatchObject({ type: "finding", count: 999, rule: "aws_access_key" });
  expect(d.status("hook")).toMatchObject({ sent: 2, dropped: 0, pending: 0, last_error: null });
  d.stop();
});

test("each failed delivery attempt is one log line: channel, type, event, attempt, error; no secret", async () => {
  const s = manualScheduler();
  const bus = new Bus();
  const lines: { msg: string; fields: Record<string, unknown> }[] = [];
  const d = createDispatcher(bus, "http://127.0.0.1:1", {
    scheduler: s,
    delivery: { attempts: 3, baseDelayMs: 100, random: () => 0.5 },
    log: { warn: (msg, fields) => void lines.push({ msg, fields: fields ?? {} }) },
  });
  d.setChannels([
    {
      name: "pager",
      type: "pagerduty",
      enabled: true,
      events: ["finding"],
      min_severity: "high",
      cooldown_seconds: 0,
      send: async () => {
        throw new Error("receiver answered 500 down");
      },
    },
  ]);
  bus.emit("finding", finding("critical", 1));
  await s.advance(10_000);
  expect(lines).toEqual(
    [1, 2, 3].map((n) => ({
      msg: "notification delivery failed",
      fields: {
        channel: "pager",
        channel_type: "pagerduty",
        event: "finding",
        attempt: `${n}/3`,
        error: "receiver answered 500 down",
        dropped: n === 3,
      },
    })),
  );
  expect(d.status("pager")).toMatchObject({ dropped: 1, pending: 0 });
  d.stop();
});

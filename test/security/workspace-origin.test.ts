/**
 * The ChatGPT account check names, per account, the back end its conversation goes to, and sluice
 * forwards that account's conversation there. That must not make sluice a forwarder to hosts of
 * anyone's choosing: an answer naming an origin that is not HTTPS on the configured upstream's host
 * (or a name under it) is never followed, whatever the answer or the client says; the client never
 * learns the origin either (it is taken out of every answer), so it cannot go there around sluice.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { zstdCompressSync } from "node:zlib";
import { forwardableOrigin } from "../../src/proxy/workspace-routing.ts";
import { recorded } from "../helpers/recorded.ts";
import { type InProcessSluice, startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

let up: Upstream;
let plain: Upstream; // a plain-HTTP listener on this machine, to be named as an origin
let other: Upstream; // an HTTPS listener on this machine, to be named with a path or credentials
let s: InProcessSluice;
let named = "";

beforeAll(async () => {
  up = await startUpstream();
  plain = await startUpstream({ tls: false });
  other = await startUpstream();
  for (const u of [up, plain, other])
    u.on("POST", "/backend-api/codex/responses", () => json({ id: "resp_1", status: "completed" }));
  up.on("GET", "/backend-api/wham/accounts/check", () =>
    json({
      accounts: [
        { id: "acct-1", workspace_backend_origin: named, account_routing_override: "us" },
        { id: "acct-2", account: { id: "acct-2", workspace_backend_origin: named } },
      ],
    }),
  );
  s = await startSluice({ upstream: up.url });
});
afterAll(async () => {
  await s?.stop();
  for (const u of [up, plain, other]) await u?.stop();
});

async function conversationAfterCheck(origin: string, account: string) {
  named = origin;
  const check = recorded("codex-chatgpt-accounts-check");
  const answer = await fetch(`${s.proxyUrl}${check.path}`, { headers: check.headers("t") });
  const text = await answer.text();
  const r = recorded("codex-chatgpt-responses");
  const before = [up, plain, other].map((u) => u.requests.length);
  const res = await fetch(`${s.proxyUrl}/v1/responses`, {
    method: "POST",
    headers: { ...r.headers("t"), "chatgpt-account-id": account },
    body: zstdCompressSync(r.body),
  });
  await res.arrayBuffer();
  const [u, p, o] = [up, plain, other].map((x, i) => x.requests.length - before[i]!);
  return { text, status: res.status, reached: { up: u, plain: p, other: o } };
}

describe("an account check answer cannot send sluice elsewhere", () => {
  const odd = () => [
    `http://127.0.0.1:${plain.port}`, // not HTTPS
    `https://user:pass@127.0.0.1:${other.port}`, // credentials
    `https://127.0.0.1:${other.port}/elsewhere`, // a path
    `https://127.0.0.1:${other.port}/?next=x`, // a query
    ` https://127.0.0.1:${other.port}`, // padded
    "https://10.1.2.3", // a private address
    "https://169.254.169.254", // the cloud metadata address
    "https://evil.example", // another host
    "https://127.0.0.1.evil.example", // a name that merely starts like the upstream's
    "file:///etc/passwd",
    "javascript:alert(1)",
  ];

  test("each odd origin: the conversation goes to the configured upstream, the client never sees the origin", async () => {
    for (const origin of odd())
      for (const account of ["acct-1", "acct-2"]) {
        const r = await conversationAfterCheck(origin, account);
        expect({ origin, status: r.status, reached: r.reached }).toEqual({
          origin,
          status: 200,
          reached: { up: 1, plain: 0, other: 0 },
        });
        expect(r.text).not.toContain(origin.trim());
        expect(r.text).toContain('"workspace_backend_origin":"NO_CONSTRAINT"');
      }
  });

  test("a client cannot name the back end: no header of its own moves the conversation", async () => {
    named = "";
    const r = recorded("codex-chatgpt-responses");
    const before = other.requests.length;
    const res = await fetch(`${s.proxyUrl}/v1/responses`, {
      method: "POST",
      headers: {
        ...r.headers("t"),
        "chatgpt-account-id": "acct-never-checked",
        "x-forwarded-host": `127.0.0.1:${other.port}`,
        "x-openai-workspace-backend-origin": other.url,
      },
      body: zstdCompressSync(r.body),
    });
    expect(res.status).toBe(200);
    expect(other.requests.length).toBe(before);
    expect(up.requests.at(-1)!.path).toBe("/backend-api/codex/responses");
  });

  test("forwardableOrigin: only HTTPS origins on the upstream's host or under its name", () => {
    expect(forwardableOrigin("https://us.chatgpt.com", "https://chatgpt.com")).toBe("https://us.chatgpt.com");
    expect(forwardableOrigin("https://chatgpt.com", "https://chatgpt.com/")).toBe("https://chatgpt.com");
    expect(forwardableOrigin("https://chatgpt.com:8443", "https://chatgpt.com")).toBe(
      "https://chatgpt.com:8443",
    );
    for (const o of [
      "https://evilchatgpt.com",
      "https://chatgpt.com.evil.example",
      "http://chatgpt.com",
      "https://a@chatgpt.com",
      "https://chatgpt.com/x",
      "https://chatgpt.com#x",
      "https://chatgpt.com?",
      "wss://chatgpt.com",
      "not a url",
    ])
      expect({ o, got: forwardableOrigin(o, "https://chatgpt.com") }).toEqual({ o, got: null });
    // An address upstream: only that address, never a name "under" it.
    expect(forwardableOrigin("https://127.0.0.1:9", "https://127.0.0.1:8")).toBe("https://127.0.0.1:9");
    expect(forwardableOrigin("https://x.127.0.0.1", "https://127.0.0.1")).toBeNull();
    expect(forwardableOrigin("https://10.0.0.1", "https://127.0.0.1")).toBeNull();
  });
});

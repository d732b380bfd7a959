import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { sendEmail } from "../../src/notify/email.ts";
import type { NotifyEvent } from "../../src/notify/events.ts";

const USER = "sluice@example.test";
const PASS = ["smtp", "pa55", "word"].join("-");
let cert = "";
let key = "";
const mails: { secure: boolean; user: string | undefined; from: string; to: string[]; data: string }[] = [];
const servers: SMTPServer[] = [];

function start(secure: boolean): Promise<number> {
  const server = new SMTPServer({
    secure,
    key,
    cert,
    authMethods: ["PLAIN", "LOGIN"],
    // Like a real submission server: no auth before TLS.
    allowInsecureAuth: false,
    onAuth(auth, _session, cb) {
      if (auth.username === USER && auth.password === PASS) cb(null, { user: USER });
      else cb(new Error("535 5.7.8 authentication failed"));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push({
          secure: session.secure,
          user: session.user as string | undefined,
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString("utf8"),
        });
        cb();
      });
    },
  });
  // A client that hangs up mid-session is the client's problem, not a test failure.
  server.on("error", () => {});
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.server.address() as AddressInfo).port)),
  );
}

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-smtp-"));
  const r = Bun.spawnSync([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost",
    "-keyout",
    join(dir, "key.pem"),
    "-out",
    join(dir, "cert.pem"),
  ]);
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  key = readFileSync(join(dir, "key.pem"), "utf8");
  cert = readFileSync(join(dir, "cert.pem"), "utf8");
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
});

const event = {
  type: "block",
  severity: "critical",
  title: "aws_access_key found in a Claude Code request (blocked)",
  action: "block",
  where: { client: "Claude Code", session_id: "s-1", working_directory: "/w", path: "messages[0].content" },
  rule: "aws_access_key",
  preview: "AKIA****MPLE",
  dedup_key: "block:aws_access_key:s-1",
  link: "http://127.0.0.1:8081/findings?request=req-1",
  ts: "2026-01-01T00:00:00.000Z",
} satisfies NotifyEvent;

const target = (port: number, password = PASS) => ({
  smtp_host: "localhost",
  smtp_port: port,
  username: USER,
  password,
  from_addr: "sluice@example.test",
  to_addrs: ["sec@example.test"],
  use_tls: true,
});

describe("email over a real SMTP server", () => {
  test("STARTTLS with auth: delivered, over TLS, as the user", async () => {
    const port = await start(false);
    const answer = await sendEmail(target(port), { event, suppressed: 4 }, new AbortController().signal, {
      ca: cert,
    });
    expect(answer).toContain("250");
    const m = mails.at(-1);
    expect(m).toMatchObject({
      secure: true,
      user: USER,
      from: "sluice@example.test",
      to: ["sec@example.test"],
    });
    expect(m?.data).toContain("Subject: [sluice] aws_access_key found in a Claude Code request (blocked)");
    expect(m?.data).toContain("Count: 5");
    expect(m?.data).not.toContain(PASS);
  });

  test("a wrong password is refused by the server and reported", async () => {
    const port = await start(false);
    await expect(
      sendEmail(target(port, "wrong"), { event, suppressed: 0 }, new AbortController().signal, { ca: cert }),
    ).rejects.toThrow(/535|auth/i);
  });

  test("an untrusted certificate is refused", async () => {
    const port = await start(false);
    await expect(
      sendEmail(target(port), { event, suppressed: 0 }, new AbortController().signal),
    ).rejects.toThrow();
  });
});

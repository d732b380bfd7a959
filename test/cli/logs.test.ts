import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sluice } from "../scan/_cli.ts";
import { tempDir } from "../scan/_git.ts";

// Subprocesses and git on a loaded machine: give each test room.
setDefaultTimeout(30_000);

const AWS = "AKIAIOSFODNN7EXAMPLQ";
const ANT = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345";
const GEMINI = "AIzaSyA1234567890abcdefghijklmnopqrstu";
const HASH = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const KEYHASH = "3a6eb0790f39ac87c94f3856b2dd2c5d110e6811602261a9a923d3bb23adc8b7";

function seed(home: string) {
  mkdirSync(join(home, "audit"), { recursive: true });
  writeFileSync(
    join(home, "config.yaml"),
    `dashboard:\n  password: hunter2-dash\nallowlists:\n  secrets: ["${AWS}"]\nproprietary:\n  keywords: ["Project Falcon"]\ncustom_rules:\n  - name: acme\n    pattern: "ACME-SECRET-[0-9]+"\n`,
  );
  mkdirSync(join(home, "logs"), { recursive: true });
  const entry = {
    ts: "2026-11-21T23:00:00Z",
    request_id: "r1",
    provider: "gemini",
    path: `/v1beta/models/x:generateContent?key=${GEMINI}`,
    action: "block",
    finding_count: 1,
    session_id: `fp:${HASH.slice(0, 16)}`,
    account_id: "alice@example.com",
    value_hash: HASH,
    content_hash: HASH,
    api_key_hash: KEYHASH,
    authorization: `Bearer ${ANT}`,
    value: AWS,
    error: `upstream said: token=${ANT}`,
  };
  writeFileSync(join(home, "audit", "audit.jsonl"), `${JSON.stringify(entry)}\nnot json ${AWS}\n`);
  writeFileSync(
    join(home, "audit", "audit.jsonl.1"),
    `${JSON.stringify({ ts: "older", request_id: "r0", action: "pass" })}\n`,
  );
  writeFileSync(
    join(home, "logs", "sluice.log"),
    `2026-11-21T23:00:00Z WARNING blocked value_hash=${HASH} key=${ANT}\n${JSON.stringify({ level: "info", msg: "x", api_key_hash: KEYHASH, email: "bob@example.org" })}\n`,
  );
}

describe("sluice logs export --sanitize", () => {
  test("bundles audit and application logs with no raw values, keys or brute-forceable hashes", async () => {
    using t = tempDir("sluice-logs-");
    const home = join(t.dir, "home");
    seed(home);
    const r = await sluice(["logs", "export", "--sanitize", "--out", "bundle.jsonl"], { cwd: t.dir, home });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("exported 3 audit entries (2 files) and 2 application log lines (1 files)");
    const out = readFileSync(join(t.dir, "bundle.jsonl"), "utf8");
    expect(statSync(join(t.dir, "bundle.jsonl")).mode & 0o777).toBe(0o600);
    for (const secret of [
      AWS,
      ANT,
      GEMINI,
      HASH,
      KEYHASH,
      HASH.slice(0, 16),
      "alice@example.com",
      "bob@example.org",
    ])
      expect(out).not.toContain(secret);
    const lines = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({
      type: "header",
      sanitized: true,
      audit_files: ["audit.jsonl.1", "audit.jsonl"],
    });
    expect(lines.map((l) => l.type)).toEqual(["header", "audit", "audit", "audit", "app_log", "app_log"]);
    const e = lines[2].entry;
    expect(e.value).toBeUndefined();
    expect(e.authorization).toBe("****");
    expect(e.value_hash).toMatch(/^tag:[0-9a-f]{12}$/);
    // Equal values get equal tags inside one export, so a reader can still correlate.
    expect(e.content_hash).toBe(e.value_hash);
    expect(lines[4].line).toContain(e.value_hash);
    expect(e.path).toContain("key=****");
    expect(e.account_id).toBe("a***@example.com");
    expect(e.request_id).toBe("r1");
    expect(e.action).toBe("block");
  });

  test("tags differ between exports (the salt is thrown away)", async () => {
    using t = tempDir("sluice-logs-");
    const home = join(t.dir, "home");
    seed(home);
    const a = await sluice(["logs", "export"], { cwd: t.dir, home });
    const b = await sluice(["logs", "export"], { cwd: t.dir, home });
    const tag = (s: string) => JSON.parse(s.split("\n")[2]!).entry.value_hash;
    expect(tag(a.stdout)).not.toBe(tag(b.stdout));
  });

  test("no logs yet: just the header", async () => {
    using t = tempDir("sluice-logs-");
    const r = await sluice(["logs", "export"], { cwd: t.dir, home: join(t.dir, "empty") });
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
  });

  test("--log-dir points at another audit directory", async () => {
    using t = tempDir("sluice-logs-");
    const home = join(t.dir, "home");
    seed(home);
    const r = await sluice(["logs", "export", "--log-dir", join(home, "audit")], {
      cwd: t.dir,
      home: join(t.dir, "other"),
    });
    expect(r.stdout.split("\n").filter((l) => l.includes('"type":"audit"'))).toHaveLength(3);
  });
});

/**
 * Attack: recover a matched value from what sluice stored. `content_hash` (and `api_key_hash`) once
 * held the plain SHA-256 of the value, so an SSN, a card number or an email address could be found by
 * hashing guesses. Every stored hash of a value is now keyed with the installation key
 * (`{config_dir}/hmac.key`): the database, the audit trail, the log and the exports hold no plain
 * digest of any value sent. A database written before keeps deduplicating after its migration.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HMAC_KEY_FILE } from "../../src/policy/hmac-key.ts";
import { contentHash, credentialHash, keyDigest, valueHash } from "../../src/policy/mask.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { startSluice } from "../helpers/sluice.ts";
import { json, startUpstream, type Upstream } from "../helpers/upstream.ts";

/** Values the built-in rules find, exactly as matched. */
const VALUES = {
  us_ssn: "219-09-9999",
  email_address: "jane.doe@acme-corp.com",
  phone_number: "+1 415 555 2671",
  credit_card: "4539 1488 0343 6467",
};
const API_KEY = "sk-ant-api03-not-a-real-key-0123456789";
const FILLER = 3000;
const sha256 = (v: string) => new Bun.CryptoHasher("sha256").update(v).digest("hex");

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
  up.on("POST", "/v1/messages", () => json({ id: "msg_hash" }));
});
afterAll(() => up?.stop());

async function send(proxyUrl: string, session: string) {
  const text = `ssn ${VALUES.us_ssn}, card ${VALUES.credit_card}, mail ${VALUES.email_address}, call ${VALUES.phone_number}`;
  const r = await fetch(`${proxyUrl}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": API_KEY,
      "x-claude-code-session-id": session,
    },
    body: JSON.stringify({ model: "m", max_tokens: 1, messages: [{ role: "user", content: text }] }),
  });
  expect(r.status).toBe(200);
  await r.arrayBuffer();
}

type Row = {
  rule: string;
  content_hash: string;
  value_hash: string | null;
  api_key_hash: string | null;
  seen_count: number;
};
async function rows(dir: string, expected: number): Promise<Row[]> {
  const db = new Database(join(dir, "sluice.db"), { readonly: true });
  try {
    // The store writes in batches: wait for the rows (a condition, not a sleep).
    for (;;) {
      const all = db
        .query("SELECT rule, content_hash, value_hash, api_key_hash, seen_count FROM findings")
        .all() as Row[];
      if (all.length >= expected && all.every((r) => r.seen_count >= 1)) return all;
      await new Promise((r) => setImmediate(r));
    }
  } finally {
    db.close();
  }
}

/** Every file under `dir`, as text (binary bytes kept as latin1, so hex digests are findable). */
function everything(dir: string): string {
  let out = "";
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (statSync(p).isFile()) out += readFileSync(p, "latin1");
  }
  return out;
}

/** The plain digests an attacker would compute from a guess: whole and as the old 16-character prefix. */
const plainDigests = () => [
  ...Object.values(VALUES).flatMap((v) => [sha256(v), sha256(v).slice(0, 16)]),
  sha256(API_KEY).slice(0, 16),
];

test("each stored hash is keyed with the installation key, and no plain digest is anywhere on disk", async () => {
  await using s = await startSluice({ upstream: up.url });
  await send(s.proxyUrl, "hash-session");
  const key = new Uint8Array(readFileSync(join(s.configDir, HMAC_KEY_FILE)));
  expect(key.length).toBe(32);
  const stored = await rows(s.configDir, Object.keys(VALUES).length);
  for (const [rule, value] of Object.entries(VALUES)) {
    const row = stored.find((r) => r.rule === rule);
    expect({ rule, found: !!row }).toEqual({ rule, found: true });
    expect(row!.content_hash).toBe(contentHash(value, key));
    expect(row!.content_hash).not.toBe(sha256(value));
    expect(row!.value_hash).toBe(valueHash(value, key));
    expect(row!.api_key_hash).toBe(credentialHash(API_KEY, key));
  }
  const exported = await (await fetch(`${s.dashboardUrl}/api/v1/findings/export?format=csv`)).text();
  for (const row of stored) expect(exported).toContain(row.content_hash);
  await s.stop();
  const disk = everything(s.configDir) + exported;
  const leaked = plainDigests().filter((d) => disk.includes(d));
  expect(leaked).toEqual([]);
});

test("a database written before hashes were keyed: its digests are keyed once, and deduplication carries on", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-oldhash-"));
  const db = new Database(join(dir, "sluice.db"), { create: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run(MIGRATIONS[0] as string);
  db.run(MIGRATIONS[1] as string);
  db.run("PRAGMA user_version = 2");
  const now = Date.now();
  const iso = new Date(now).toISOString();
  const insert = db.query(
    `INSERT INTO findings (ts, ts_ms, last_seen, severity, detector, finding_type, rule, action, session_id, content_hash, api_key_hash)
     VALUES (?, ?, ?, 'high', 'pii', ?, ?, 'log', 'old-session', ?, ?)`,
  );
  for (const [rule, value] of Object.entries(VALUES))
    insert.run(iso, now, iso, rule, rule, sha256(value), sha256(API_KEY).slice(0, 16));
  // Enough rows that the rewrite moves index entries between pages (freed space must not keep them).
  const filler = db.query(
    `INSERT INTO findings (ts, ts_ms, last_seen, severity, detector, finding_type, rule, action, session_id, content_hash)
     VALUES (?, ?, ?, 'info', 'pii', 'filler', 'filler', 'log', ?, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < FILLER; i++) filler.run(iso, now, iso, `s${i % 7}`, sha256(`filler-${i}`));
  })();
  db.close();

  await using s = await startSluice({ upstream: up.url, home: dir });
  const key = new Uint8Array(readFileSync(join(dir, HMAC_KEY_FILE)));
  const migrated = await rows(dir, Object.keys(VALUES).length + FILLER);
  for (const [rule, value] of Object.entries(VALUES)) {
    const row = migrated.find((r) => r.rule === rule)!;
    expect(row.content_hash).toBe(keyDigest(sha256(value), key));
    expect(row.api_key_hash).toBe(credentialHash(API_KEY, key));
  }
  // The same values again in the same session: the old rows count them, no second row appears.
  await send(s.proxyUrl, "old-session");
  const db2 = new Database(join(dir, "sluice.db"), { readonly: true });
  const counted = async () => {
    for (;;) {
      const r = db2
        .query("SELECT rule, seen_count FROM findings WHERE session_id = 'old-session'")
        .all() as Row[];
      if (r.every((x) => x.seen_count === 2)) return r;
      await new Promise((res) => setImmediate(res));
    }
  };
  expect((await counted()).length).toBe(Object.keys(VALUES).length);
  db2.close();
  await s.stop();
  const disk = everything(dir);
  const leaked = [
    ...plainDigests(),
    ...Array.from({ length: FILLER }, (_, i) => sha256(`filler-${i}`)),
  ].filter((d) => disk.includes(d));
  expect(leaked).toEqual([]);
});

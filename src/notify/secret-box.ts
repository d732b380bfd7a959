/**
 * Channel secrets (webhook URLs, passwords, routing keys, API tokens) are stored sealed, so the
 * database alone does not reveal them: AES-256-GCM with a key kept in `{config_dir}/notify.key`
 * (32 random bytes, mode 0600, beside `hmac.key`). A sealed value is `v1:<iv>:<ciphertext+tag>`
 * in base64url; the channel name is bound as additional data so a value cannot be moved to
 * another channel's row.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const NOTIFY_KEY_FILE = "notify.key";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Read `{configDir}/notify.key`, creating it (0600, directory 0700) on first use. */
export function loadOrCreateNotifyKey(configDir: string): Uint8Array {
  if (!existsSync(configDir)) mkdirSync(configDir, { recursive: true, mode: 0o700 });
  const file = join(configDir, NOTIFY_KEY_FILE);
  if (existsSync(file)) {
    const bytes = new Uint8Array(readFileSync(file));
    if (bytes.length === KEY_BYTES) {
      chmodSync(file, 0o600);
      return bytes;
    }
    // A key of the wrong size would fail every open; refuse rather than replace it, since replacing
    // it would make every stored secret unreadable without saying so.
    throw new Error(`${file} is ${bytes.length} bytes, expected ${KEY_BYTES}`);
  }
  const key = new Uint8Array(randomBytes(KEY_BYTES));
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, key, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return key;
}

export interface SecretBox {
  seal(plain: string, channel: string): string;
  /** Throws when the value was altered, sealed under another key or for another channel. */
  open(sealed: string, channel: string): string;
}

/** @example const box = secretBox(loadOrCreateNotifyKey(dir)); box.open(box.seal("t", "ch"), "ch") */
export function secretBox(key: Uint8Array): SecretBox {
  if (key.length !== KEY_BYTES) throw new Error(`notification key must be ${KEY_BYTES} bytes`);
  return {
    seal(plain, channel) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(channel, "utf8"));
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `v1:${iv.toString("base64url")}:${body.toString("base64url")}`;
    },
    open(sealed, channel) {
      const [version, ivText, bodyText] = sealed.split(":");
      if (version !== "v1" || !ivText || !bodyText) throw new Error("not a sealed notification secret");
      const body = Buffer.from(bodyText, "base64url");
      if (body.length < TAG_BYTES) throw new Error("sealed notification secret is truncated");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(ivText, "base64url"));
      decipher.setAAD(Buffer.from(channel, "utf8"));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(body.subarray(0, body.length - TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    },
  };
}

/**
 * The per-installation key every stored hash of a value is keyed with (`content_hash`, `value_hash`,
 * `api_key_hash`; see mask.ts): 32 random bytes in `{config_dir}/hmac.key`, file mode 0600 in a 0700
 * directory.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const HMAC_KEY_FILE = "hmac.key";
const KEY_BYTES = 32;

/**
 * Read `{configDir}/hmac.key`, creating it (and the directory) on first use. A key file of the wrong
 * size is replaced, so a truncated file never yields a weak key.
 * @example const key = loadOrCreateHmacKey(runtime.configDir);
 */
export function loadOrCreateHmacKey(configDir: string): Uint8Array {
  if (!existsSync(configDir)) mkdirSync(configDir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(configDir, 0o700);
  } catch {
    /* not ours to fix (e.g. a shared directory); the key file itself stays 0600 */
  }
  const file = join(configDir, HMAC_KEY_FILE);
  if (existsSync(file)) {
    const bytes = new Uint8Array(readFileSync(file));
    if (bytes.length === KEY_BYTES) {
      try {
        chmodSync(file, 0o600);
      } catch {
        /* best effort */
      }
      return bytes;
    }
  }
  const key = crypto.getRandomValues(new Uint8Array(KEY_BYTES));
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, key, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return key;
}

/**
 * The installation key, or, when `{configDir}/hmac.key` can be neither read nor created, a random
 * key for this process alone (said on `warn`): stored hashes are then keyed all the same, they only
 * stop matching the rows of other runs.
 */
export function installationKey(configDir: string, warn: (message: string) => void): Uint8Array {
  try {
    return loadOrCreateHmacKey(configDir);
  } catch (e) {
    warn(
      `cannot read or create ${join(configDir, HMAC_KEY_FILE)} (${(e as Error).message}); hashes are keyed with a key for this run only`,
    );
    return crypto.getRandomValues(new Uint8Array(KEY_BYTES));
  }
}

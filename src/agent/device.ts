/**
 * The agent's device id: a random UUID made on first run and kept in `{config_dir}/device-id`, so it
 * stays the same across restarts, upgrades and re-installs (uninstall leaves it). It names this
 * machine's sluice without deriving anything from the hardware or the user.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function read(file: string): string | null {
  try {
    const v = readFileSync(file, "utf8").trim();
    return UUID.test(v) ? v : null;
  } catch {
    return null;
  }
}

/** The id in `file`, made there first if missing or unreadable as a UUID. */
export function deviceId(file: string): string {
  const existing = read(file);
  if (existing) return existing;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const id = crypto.randomUUID();
  try {
    // Exclusive create: two agents starting at once agree on the first one written.
    writeFileSync(file, `${id}\n`, { mode: 0o600, flag: "wx" });
    return id;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    const raced = read(file);
    if (raced) return raced;
    // The file exists but holds no UUID: replace it.
    writeFileSync(file, `${id}\n`, { mode: 0o600 });
    return id;
  }
}

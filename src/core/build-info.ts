/**
 * Build identity. VERSION, GIT_COMMIT and BUILT_AT are replaced by
 * `bun build --define` in compiled binaries and read "unknown" from source.
 */
import { closeSync, openSync, readSync } from "node:fs";

declare const SLUICE_VERSION: string | undefined;
declare const SLUICE_GIT_COMMIT: string | undefined;
declare const SLUICE_BUILT_AT: string | undefined;

export const VERSION: string = typeof SLUICE_VERSION === "string" ? SLUICE_VERSION : "unknown";
export const GIT_COMMIT: string = typeof SLUICE_GIT_COMMIT === "string" ? SLUICE_GIT_COMMIT : "unknown";
export const BUILT_AT: string = typeof SLUICE_BUILT_AT === "string" ? SLUICE_BUILT_AT : "unknown";

/** True when running as a `bun build --compile` executable. */
export const STANDALONE: boolean = typeof SLUICE_VERSION === "string";

let cachedBuildId: string | null = null;

/**
 * Hex SHA-256 of a file's bytes, read 1 MiB at a time (a binary is ~100 MB: less memory than one
 * read, and faster). The one hash behind every build_id: of the running executable, of the binary
 * `sluice-agent` supervises, of what build.ts writes into checksums.txt.
 */
export function sha256File(path: string): string {
  // Bun's hasher, not node:crypto: every command imports this module, and node:crypto brings
  // Node's stream modules with it (~2 ms at each start).
  const hasher = new Bun.CryptoHasher("sha256");
  const fd = openSync(path, "r");
  try {
    const buf = new Uint8Array(1 << 20);
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) hasher.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hasher.digest("hex");
}

/** The build_id of the executable at `path`: `sha256:` + hex, or `sha256:unknown` if unreadable. */
export function buildIdOf(path: string): string {
  try {
    return `sha256:${sha256File(path)}`;
  } catch {
    return "sha256:unknown";
  }
}

/** `sha256:` + hex SHA-256 of the running executable's bytes, computed once per process. */
export function buildId(): string {
  cachedBuildId ??= buildIdOf(process.execPath);
  return cachedBuildId;
}

export function buildInfo() {
  return {
    build_id: buildId(),
    version: VERSION,
    commit: GIT_COMMIT,
    built_at: BUILT_AT,
    standalone: STANDALONE,
  };
}

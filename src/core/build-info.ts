/**
 * Build identity (SPEC §2 Build identity, §9). VERSION, GIT_COMMIT and BUILT_AT are replaced by
 * `bun build --define` in compiled binaries and read "unknown" from source.
 */
import { readFileSync } from "node:fs";

declare const SLUICE_VERSION: string | undefined;
declare const SLUICE_GIT_COMMIT: string | undefined;
declare const SLUICE_BUILT_AT: string | undefined;

export const VERSION: string = typeof SLUICE_VERSION === "string" ? SLUICE_VERSION : "unknown";
export const GIT_COMMIT: string = typeof SLUICE_GIT_COMMIT === "string" ? SLUICE_GIT_COMMIT : "unknown";
export const BUILT_AT: string = typeof SLUICE_BUILT_AT === "string" ? SLUICE_BUILT_AT : "unknown";

/** True when running as a `bun build --compile` executable. */
export const STANDALONE: boolean = typeof SLUICE_VERSION === "string";

let cachedBuildId: string | null = null;

/** `sha256:` + hex SHA-256 of the running executable's bytes, computed once per process. */
export function buildId(): string {
  if (cachedBuildId) return cachedBuildId;
  try {
    const bytes = readFileSync(process.execPath);
    // Bun's hasher, not node:crypto: every command imports this module, and node:crypto brings
    // Node's stream modules with it (~2 ms at each start).
    cachedBuildId = `sha256:${Bun.SHA256.hash(bytes, "hex")}`;
  } catch {
    cachedBuildId = "sha256:unknown";
  }
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

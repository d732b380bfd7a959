/**
 * Checks shared by commands: the long-running ones' flags (`serve`, `engine`, `relay`), where a bad
 * flag prints one line naming the flag, the value and what is allowed, and exits 2; and reading the
 * configuration for the commands that only read it.
 */
import { LEVELS, type Level } from "../core/log.ts";

export type Fail = (msg: string) => never;

/** `sluice <command>: <msg>` on stderr, exit 2. */
export function failer(command: string): Fail {
  return (msg) => {
    process.stderr.write(`sluice ${command}: ${msg}\n`);
    process.exit(2);
  };
}

/** A value among `allowed`, or undefined when the flag is absent. */
export function oneOf<T extends string>(
  fail: Fail,
  name: string,
  v: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v))
    fail(
      `--${name} = ${JSON.stringify(v)} is invalid: allowed values: ${allowed.map((a) => `"${a}"`).join(", ")}`,
    );
  return v as T;
}

/** A port from 0 to 65535, or undefined when the flag is absent or empty. */
export function portFlag(fail: Fail, name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    fail(`--${name} = ${JSON.stringify(v)} is invalid: allowed range 0 to 65535`);
  return n;
}

/** `--log-level`, `--format` and `--color`/`NO_COLOR` as the runtimes take them. */
export function logFlags(
  fail: Fail,
  args: { "log-level"?: string; format?: string; color?: boolean },
): { logLevel?: Level; format?: "text" | "json"; color?: false } {
  return {
    logLevel: oneOf(fail, "log-level", args["log-level"], LEVELS),
    format: oneOf(fail, "format", args.format, ["text", "json"] as const),
    color: args.color === false || process.env.NO_COLOR ? false : undefined,
  };
}

/**
 * The configuration for a command that only reads it (`connect`, `doctor`): a problem in it is one
 * line and exit 2; a custom rule's pattern is not checked here (such commands scan nothing).
 */
export async function readConfig(fail: Fail, configPath: string | undefined) {
  const { loadConfig } = await import("../config/load.ts");
  try {
    return loadConfig({ configPath, checkPatterns: false });
  } catch (e) {
    return fail((e as Error).message);
  }
}

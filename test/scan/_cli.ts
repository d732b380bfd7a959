/** Run `bun src/cli.ts <args>` as a user would, in a directory of the test's choosing. */
import { join } from "node:path";
import { type Ran, run } from "../helpers/run.ts";

export const CLI = process.env.SLUICE_TEST_CLI ?? join(import.meta.dir, "..", "..", "src", "cli.ts");

export type CliResult = Ran;

export function sluice(
  args: string[],
  opts: { cwd: string; home?: string; stdin?: string | Uint8Array; env?: Record<string, string> },
): Promise<CliResult> {
  return run(["bun", CLI, ...args], {
    cwd: opts.cwd,
    env: {
      ...process.env,
      SLUICE_HOME: opts.home ?? join(opts.cwd, ".sluice-home"),
      NO_COLOR: "",
      FORCE_COLOR: "",
      ...opts.env,
    },
    stdin: opts.stdin,
  });
}

/** Run `bun src/cli.ts <args>` as a user would, in a directory of the test's choosing. */
import { join } from "node:path";

export const CLI = process.env.SLUICE_TEST_CLI ?? join(import.meta.dir, "..", "..", "src", "cli.ts");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function sluice(
  args: string[],
  opts: { cwd: string; home?: string; stdin?: string | Uint8Array; env?: Record<string, string> },
): Promise<CliResult> {
  const proc = Bun.spawn(["bun", CLI, ...args], {
    cwd: opts.cwd,
    env: {
      ...process.env,
      SLUICE_HOME: opts.home ?? join(opts.cwd, ".sluice-home"),
      NO_COLOR: "",
      FORCE_COLOR: "",
      ...opts.env,
    },
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin as BlobPart]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

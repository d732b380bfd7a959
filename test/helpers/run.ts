/** Run a command to completion, as a user would from a shell: its exit code and all it printed. */

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  /** The whole environment of the command (the test's own when absent). */
  env?: Record<string, string | undefined>;
  /** What the command reads on standard input; closed when absent. */
  stdin?: string | Uint8Array;
}

export async function run(cmd: string[], opts: RunOptions = {}): Promise<Ran> {
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: opts.env,
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

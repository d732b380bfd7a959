/**
 * `sluice-agent logs`: the last lines of the agent's log (`{config_dir}/logs/sluice-agent.log`:
 * starts, restarts with their reasons, and what sluice printed), and with `--follow` the lines
 * written after them, across a rotation of the file.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";

/** The last `n` lines of a file, read from its end (the log can be megabytes). */
export function lastLines(file: string, n: number): string[] {
  const size = statSync(file).size;
  const fd = openSync(file, "r");
  try {
    let text = "";
    let pos = size;
    const chunk = 64 * 1024;
    while (pos > 0 && text.split("\n").length <= n + 1) {
      const len = Math.min(chunk, pos);
      pos -= len;
      const buf = new Uint8Array(len);
      readSync(fd, buf, 0, len, pos);
      text = new TextDecoder().decode(buf) + text;
    }
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    return lines.slice(-n);
  } finally {
    closeSync(fd);
  }
}

/** Print what is appended to `file` from byte `from` on, until the process is stopped. */
export async function follow(file: string, from: number, write: (s: string) => void): Promise<never> {
  let pos = from;
  const decoder = new TextDecoder();
  for (;;) {
    const size = existsSync(file) ? statSync(file).size : 0;
    if (size < pos) pos = 0; // rotated: the new file starts from its beginning
    if (size > pos) {
      const fd = openSync(file, "r");
      try {
        const buf = new Uint8Array(size - pos);
        readSync(fd, buf, 0, buf.length, pos);
        write(decoder.decode(buf, { stream: true }));
        pos = size;
      } finally {
        closeSync(fd);
      }
    }
    await Bun.sleep(250);
  }
}

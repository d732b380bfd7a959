/**
 * Mode 1, stdio subprocess: `sluice mcp -- <command> [args]`. The client (AI tool) talks
 * newline-delimited JSON-RPC to sluice's stdin/stdout; sluice runs the server as a child with a
 * filtered environment, relays its stderr untouched, and exits with the child's code or signal.
 */
import type { Subprocess } from "bun";
import type { Logger } from "../core/log.ts";
import type { McpSession, Outcome } from "./core.ts";
import { LineSplitter } from "./jsonrpc.ts";

const NL = 10;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** `bytes` + "\n" in one buffer, so that every message is one write. */
export function withNewline(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  out[bytes.length] = NL;
  return out;
}

/** The bytes to forward for an outcome: the original line, or the rewritten message. */
export function forwardBytes(o: Outcome, original: Uint8Array): Uint8Array | null {
  if (o.forward === null) return null;
  if (o.forward === "original") return withNewline(original);
  return encoder.encode(`${o.forward}\n`);
}

/** Text of a line for parsing (a trailing \r is framing, not content). */
export function lineText(line: Uint8Array): string {
  const end = line.length && line[line.length - 1] === 13 ? line.length - 1 : line.length;
  return decoder.decode(end === line.length ? line : line.subarray(0, end));
}

/** Read a byte stream as lines, handling each in order (the next line waits for the previous one). */
export async function pumpLines(
  stream: ReadableStream<Uint8Array>,
  handle: (line: Uint8Array) => Promise<void> | void,
): Promise<void> {
  const split = new LineSplitter();
  const lines: Uint8Array[] = [];
  const collect = (l: Uint8Array) => void lines.push(l);
  for await (const chunk of stream) {
    split.push(chunk, collect);
    while (lines.length) await handle(lines.shift()!);
  }
  split.end(collect);
  while (lines.length) await handle(lines.shift()!);
}

/** Writes whole messages to our stdout; a client that went away is not an error. */
export class StdoutWriter {
  #closed = false;
  write(bytes: Uint8Array | string): void {
    if (this.#closed) return;
    try {
      process.stdout.write(bytes);
    } catch {
      this.#closed = true;
    }
  }
}

/** Resolves on the first SIGINT/SIGTERM/SIGHUP; `dispose()` removes the listeners. */
export function untilSignal(): { promise: Promise<NodeJS.Signals>; dispose(): void } {
  const sigs: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  let done: (s: NodeJS.Signals) => void = () => {};
  const promise = new Promise<NodeJS.Signals>((resolve) => (done = resolve));
  const handlers = sigs.map((s) => [s, () => done(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  const dispose = () => {
    for (const [s, h] of handlers) process.off(s, h);
  };
  return { promise, dispose };
}

export interface StdioOptions {
  command: string[];
  env: Record<string, string>;
  session: McpSession;
  log: Logger;
  cwd?: string;
}

const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
const SIGNO: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

/** Run the stdio proxy until the child exits. Resolves with the exit code sluice should exit with. */
export async function runStdio(opts: StdioOptions): Promise<{ code: number; signal: string | null }> {
  const { session, log } = opts;
  let child: Subprocess<"pipe", "pipe", "inherit">;
  try {
    child = Bun.spawn(opts.command, {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
      env: opts.env,
      cwd: opts.cwd,
    });
  } catch (err) {
    log.error(`cannot start MCP server ${JSON.stringify(opts.command[0])}: ${(err as Error).message}`);
    return { code: 127, signal: null };
  }
  const out = new StdoutWriter();
  let childStdinOpen = true;
  const toChild = (bytes: Uint8Array) => {
    if (!childStdinOpen) return;
    try {
      child.stdin.write(bytes);
      child.stdin.flush();
    } catch {
      childStdinOpen = false;
    }
  };

  const forwardSignal = (sig: NodeJS.Signals) => () => {
    try {
      child.kill(sig);
    } catch {
      /* already gone */
    }
  };
  const handlers = SIGNALS.map((s) => [s, forwardSignal(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);

  // Client → server.
  const clientDone = pumpLines(Bun.stdin.stream(), async (line) => {
    const o = await session.fromClient(lineText(line));
    for (const r of o.replies) out.write(`${r}\n`);
    const bytes = forwardBytes(o, line);
    if (bytes) toChild(bytes);
  })
    .catch((err) => log.debug(`client stdin: ${(err as Error).message}`))
    .finally(() => {
      // The client closed its side: so do we, and the server shuts down as the MCP spec describes.
      childStdinOpen = false;
      try {
        child.stdin.end();
      } catch {
        /* already closed */
      }
    });
  void clientDone;

  // Server → client.
  await pumpLines(child.stdout, async (line) => {
    const o = await session.fromServer(lineText(line));
    for (const r of o.replies) toChild(encoder.encode(`${r}\n`));
    const bytes = forwardBytes(o, line);
    if (bytes) out.write(bytes);
  }).catch((err) => log.debug(`server stdout: ${(err as Error).message}`));

  const code = await child.exited;
  for (const [s, h] of handlers) process.off(s, h);
  const signal = child.signalCode ? String(child.signalCode) : null;
  return { code: signal ? 128 + (SIGNO[signal] ?? 1) : code, signal };
}

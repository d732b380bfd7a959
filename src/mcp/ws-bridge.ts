/**
 * Mode 4, WebSocket bridge: `sluice mcp --upstream ws(s)://…`. The client speaks newline-delimited
 * JSON-RPC on stdio; each message travels as one text frame (subprotocol `mcp`) to the server.
 */

import { type BridgeOptions, forwardText, oneLine, tlsInit } from "./http-common.ts";
import { lineText, pumpLines, StdoutWriter, untilSignal } from "./stdio.ts";

export async function runWsBridge(opts: BridgeOptions): Promise<number> {
  const { session, log } = opts;
  const out = new StdoutWriter();
  const ws = new WebSocket(opts.upstream.href, {
    protocols: ["mcp"],
    headers: Object.fromEntries(opts.headers),
    ...tlsInit(opts.tls),
  } as unknown as string[]);
  let chain: Promise<void> = Promise.resolve();
  let failed = false;
  const opened = new Promise<boolean>((resolve) => {
    ws.addEventListener("open", () => resolve(true), { once: true });
    ws.addEventListener("error", () => resolve(false), { once: true });
  });
  const closed = new Promise<number>((resolve) => {
    ws.addEventListener("close", (e) => resolve(e.code));
  });
  ws.addEventListener("message", (e) => {
    const text = typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data as ArrayBuffer);
    chain = chain.then(async () => {
      const o = await session.fromServer(text);
      for (const r of o.replies) ws.send(r);
      const fwd = forwardText(o, text);
      if (fwd !== null) out.write(`${oneLine(fwd)}\n`);
    });
  });
  if (!(await opened)) {
    log.error(`cannot connect to MCP server at ${opts.upstream.href}`);
    return 1;
  }
  const input = pumpLines(opts.input ?? Bun.stdin.stream(), async (line) => {
    if (failed) return;
    const text = lineText(line);
    const o = await session.fromClient(text);
    for (const r of o.replies) out.write(`${r}\n`);
    const fwd = forwardText(o, text);
    if (fwd === null) return;
    if (ws.readyState !== WebSocket.OPEN) {
      failed = true;
      return;
    }
    ws.send(fwd);
  });
  const signal = untilSignal();
  const winner = await Promise.race([
    input.then(() => "eof" as const),
    closed.then(() => "closed" as const),
    signal.promise,
  ]);
  signal.dispose();
  if (winner !== "eof" && winner !== "closed") {
    ws.close(1001);
    return 128 + (winner === "SIGINT" ? 2 : winner === "SIGHUP" ? 1 : 15);
  }
  if (winner === "eof") {
    await chain;
    ws.close(1000);
    await closed;
    return 0;
  }
  await chain;
  const code = await closed;
  if (code !== 1000 && code !== 1005) log.warn(`MCP server closed the WebSocket (code ${code})`);
  return code === 1000 || code === 1005 ? 0 : 1;
}

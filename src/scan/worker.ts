/**
 * A scan worker: builds its own scanner from the setup it is sent, then scans batches of work items
 * (whole files or ranges of large files), one batch after the other. Messages: in
 * `{type:"init", setup}` | `{type:"scan", id, items}`; out `{type:"loaded"}` (the module is loaded,
 * see workers.ts) | `{type:"ready"}` | `{type:"done", id, results}` | `{type:"failed", message}`.
 */

import { runItem, type WorkItem, type WorkResult } from "./pool.ts";
import { makeTextScanner, type ScanSetup } from "./setup.ts";
import type { TextScanner } from "./window.ts";

declare const self: Worker;

type Message = { type: "init"; setup: ScanSetup } | { type: "scan"; id: number; items: WorkItem[] };

let scan: TextScanner | null = null;
// The pool sends the next batch before this one is done: handle messages in order, not interleaved.
let queue: Promise<void> = Promise.resolve();

async function handle(m: Message): Promise<void> {
  try {
    if (m.type === "init") {
      scan = makeTextScanner(m.setup);
      self.postMessage({ type: "ready" });
      return;
    }
    if (!scan) throw new Error("worker not initialised");
    const results: WorkResult[] = [];
    for (const item of m.items) results.push(await runItem(item, scan));
    self.postMessage({ type: "done", id: m.id, results });
  } catch (err) {
    self.postMessage({ type: "failed", message: (err as Error).message });
  }
}

self.onmessage = (e: MessageEvent) => {
  const m = e.data as Message;
  queue = queue.then(() => handle(m));
};

self.postMessage({ type: "loaded" });

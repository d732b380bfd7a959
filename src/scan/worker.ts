/**
 * A scan worker: builds its own scanner from the setup it is sent, then scans batches of files.
 * Messages: in `{type:"init", setup}` | `{type:"scan", id, files}`; out `{type:"ready"}` |
 * `{type:"done", id, results}` | `{type:"failed", message}`.
 */
import { makeTextScanner, type ScanSetup } from "./engine.ts";
import { scanFile } from "./file.ts";
import type { FileResult } from "./types.ts";
import type { TextScanner } from "./window.ts";

declare const self: Worker;

let scan: TextScanner | null = null;

self.onmessage = async (e: MessageEvent) => {
  const m = e.data as
    | { type: "init"; setup: ScanSetup }
    | { type: "scan"; id: number; files: { abs: string; display: string; size: number }[] };
  try {
    if (m.type === "init") {
      scan = makeTextScanner(m.setup);
      self.postMessage({ type: "ready" });
      return;
    }
    if (!scan) throw new Error("worker not initialised");
    const results: FileResult[] = [];
    for (const f of m.files) results.push(await scanFile(f, scan));
    self.postMessage({ type: "done", id: m.id, results });
  } catch (err) {
    self.postMessage({ type: "failed", message: (err as Error).message });
  }
};

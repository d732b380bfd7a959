/**
 * Baselines in a JSON file (`{config_dir}/mcp-baselines.json`, mode 0600), used when the store's
 * `mcp_tool_baselines` repository is not available. Written atomically on every change.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Baseline, BaselineStore } from "./drift.ts";

type FileShape = Record<string, Record<string, Baseline>>;

export class FileBaselines implements BaselineStore {
  #data: FileShape = {};
  constructor(readonly path: string) {
    try {
      const parsed = JSON.parse(readFileSync(path, "utf8")) as unknown;
      if (parsed && typeof parsed === "object") this.#data = parsed as FileShape;
    } catch {
      /* no file yet, or unreadable: start empty */
    }
  }
  get(serverId: string, tool: string): Baseline | null {
    return this.#data[serverId]?.[tool] ?? null;
  }
  put(serverId: string, tool: string, b: Baseline): void {
    this.#data[serverId] ??= {};
    this.#data[serverId][tool] = b;
    this.#save();
  }
  #save() {
    try {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      const tmp = `${this.path}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(this.#data), { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, this.path);
    } catch {
      /* persistence is best effort: drift still works within the session */
    }
  }
}

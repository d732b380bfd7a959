/**
 * Session binding (opt-in, `mcp.session_binding`): the tools of the first complete `tools/list`
 * (following `nextCursor` pages) are the session's inventory; a `tools/call` for anything else is
 * handled per `mcp.unknown_tool_action`. The inventory is capped at 10,000 tools.
 */
export const BINDING_CAPACITY = 10_000;

export class ToolInventory {
  readonly capacity: number;
  #tools = new Set<string>();
  #sealed = false;
  /** Tools the cap kept out of the inventory. */
  overflow = 0;

  constructor(capacity = BINDING_CAPACITY) {
    this.capacity = capacity;
  }

  get sealed(): boolean {
    return this.#sealed;
  }

  get size(): number {
    return this.#tools.size;
  }

  /** Add one page of the first listing; `last` seals the inventory (no `nextCursor`). */
  addPage(names: string[], last: boolean): void {
    if (this.#sealed) return;
    for (const n of names) {
      if (this.#tools.size >= this.capacity) {
        if (!this.#tools.has(n)) this.overflow++;
        continue;
      }
      this.#tools.add(n);
    }
    if (last) this.#sealed = true;
  }

  /** Known when the first listing contained the tool. Before any listing nothing is known. */
  knows(name: string): boolean {
    return this.#tools.has(name);
  }
}

/**
 * `bun run bench`: runs every `test/bench/<area>.bench.ts` (or only those named on the command
 * line) and prints their tables with the machine noted. Each file exports
 * `run(): Promise<{ title: string; columns: string[]; rows: (string | number)[][]; notes?: string[] }[]>`.
 */
import { readdirSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { useRunTempDir } from "../helpers/run-temp.ts";

export interface BenchTable {
  title: string;
  columns: string[];
  rows: (string | number)[][];
  notes?: string[];
}

function machine(): string {
  const cpu = cpus()[0]?.model ?? "unknown cpu";
  return `${cpus().length} cores (${cpu}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, bun ${Bun.version}, ${process.platform}-${process.arch}`;
}

export function printTable(t: BenchTable): string {
  const cells = [t.columns, ...t.rows.map((r) => r.map(String))];
  const widths = t.columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  const out = [`### ${t.title}`, "", line(t.columns), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`];
  for (const r of cells.slice(1)) out.push(line(r));
  for (const n of t.notes ?? []) out.push("", n);
  return out.join("\n");
}

const only = new Set(process.argv.slice(2));
const dir = import.meta.dir;
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => only.size === 0 || only.has(f.replace(/\.bench\.ts$/, "")))
  .sort();
console.log(`# sluice benchmarks\n\nMachine: ${machine()}\nDate: ${new Date().toISOString()}\n`);
const removeTemp = useRunTempDir();
try {
  for (const f of files) {
    const mod = (await import(join(dir, f))) as { run: () => Promise<BenchTable[]> };
    for (const t of await mod.run()) console.log(`${printTable(t)}\n`);
  }
} finally {
  removeTemp();
}

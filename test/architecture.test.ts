/**
 * The layering ARCHITECTURE.md states, checked on the sources: `src/core/` imports nothing of ours
 * outside it; `src/detect/` imports only sluice's vocabulary (`src/core/types.ts`), the rule
 * declaration (`src/core/rule.ts`, `src/core/schema.ts`) and the embedded rule data besides itself; `src/agent/` (a separate binary) imports no part of the scanner.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const SPEC = /(?:^|\s)(?:import|export)\s[^"';]*?from\s+"(\.[^"]+)"|import\(\s*"(\.[^"]+)"\s*\)/gm;

/** Every relative import of the `.ts` files under `dir`, as repository paths: `[file, target]`. */
function imports(dir: string): [string, string][] {
  const out: [string, string][] = [];
  for (const name of readdirSync(join(ROOT, dir), { recursive: true }) as string[]) {
    if (!name.endsWith(".ts")) continue;
    const file = join(ROOT, dir, name);
    for (const m of readFileSync(file, "utf8").matchAll(SPEC))
      out.push([relative(ROOT, file), relative(ROOT, resolve(dirname(file), m[1] ?? m[2]!))]);
  }
  return out;
}

test("the import reader sees imports, type imports and dynamic imports", () => {
  const seen = imports("src/runtime").map(([, t]) => t);
  expect(seen).toContain("src/runtime/contract.ts");
  expect(seen).toContain("src/policy/pipeline.ts");
  expect(imports("src/tracing").some(([, t]) => t === "src/tracing/otel.ts")).toBe(true);
});

test("src/core imports nothing of ours outside it", () => {
  expect(imports("src/core").filter(([, t]) => !t.startsWith("src/core/"))).toEqual([]);
});

test("src/detect imports only itself, the vocabulary, the rule declaration and the embedded rules", () => {
  const core = ["src/core/types.ts", "src/core/rule.ts", "src/core/schema.ts"];
  const allowed = (t: string) => t.startsWith("src/detect/") || core.includes(t) || t === "rules/index.ts";
  expect(imports("src/detect").filter(([, t]) => !allowed(t))).toEqual([]);
});

test("src/agent imports no part of the scanner", () => {
  const scanner = ["src/detect/", "src/policy/", "src/payload/", "src/proxy/", "src/scan/", "src/mcp/"];
  expect(imports("src/agent").filter(([, t]) => scanner.some((s) => t.startsWith(s)))).toEqual([]);
});

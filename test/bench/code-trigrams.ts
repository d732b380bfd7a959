/**
 * Regenerates src/detect/code-trigrams.json: how often each trigram occurs in real source code, per
 * MB, for the matcher's choice of where to anchor a literal (the rarest trigram in it). Counted over
 * the files of a directory tree, case-sensitively; trigrams with a space or control character and
 * those rarer than 20 per MB are left out.
 *
 *   bun test/bench/code-trigrams.ts node_modules > src/detect/code-trigrams.json
 *
 * The committed table was counted over this repository's node_modules (JavaScript, TypeScript,
 * Markdown; 4,000 files picked at random with a fixed seed, ~33 MB).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Rng } from "./scan.bench.ts";

const EXT = /\.(?:[cm]?js|ts|tsx|md|json|py|go|rs|java|rb|sh|ya?ml)$/;

function files(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) files(p, out);
    else if (e.isFile() && EXT.test(e.name) && !e.name.endsWith(".min.js")) out.push(p);
  }
  return out;
}

if (import.meta.main) {
  const all = files(process.argv[2] ?? "node_modules").sort();
  const r = new Rng(7);
  for (let i = all.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  const counts = new Map<string, number>();
  let chars = 0;
  for (const f of all.slice(0, 4000)) {
    if (statSync(f).size > 2_000_000) continue;
    const s = readFileSync(f, "utf8");
    chars += s.length;
    for (let i = 0; i + 3 <= s.length; i++) {
      const t = s.slice(i, i + 3);
      counts.set(t, (counts.get(t) ?? 0) + 1);
    }
  }
  const perMb = [...counts]
    .map(([t, n]) => [t, Math.round((n * 1e6) / chars)] as const)
    .filter(([t, f]) => f >= 20 && /^[\x21-\x7e]{3}$/.test(t))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  console.log(JSON.stringify(Object.fromEntries(perMb)));
}

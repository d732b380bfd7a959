/** `bun run fuzz [seconds=60] [seed=1]`: fuzz the request path and print the figures; exit 1 on any fault or leak. */
import { fuzzRequestPath } from "./request-path.ts";

const seconds = Number(process.argv[2] ?? 60);
const seed = Number(process.argv[3] ?? 1);
if (!(seconds > 0) || !Number.isInteger(seed)) {
  console.error("usage: bun run fuzz [seconds > 0] [integer seed]");
  process.exit(2);
}
const r = await fuzzRequestPath(seconds, seed);
console.log(`fuzz: ${seconds} s, seed ${seed}`);
console.log(
  `  ${r.requests} requests (${r.perSecond}/s), ${r.planted} with a planted token: ${r.blocked} blocked, ${r.refused} refused (4xx), ${r.forwarded} forwarded`,
);
console.log(
  `  5xx answers: ${r.faults.length}; tokens that reached the upstream: ${r.leaks.length}; healthy after: ${r.healthy}`,
);
for (const f of r.faults.slice(0, 5)) console.log(`  fault ${f.status}: ${f.case}`);
for (const l of r.leaks.slice(0, 5)) console.log(`  leak: ${l.case}`);
process.exit(r.faults.length === 0 && r.leaks.length === 0 && r.healthy ? 0 : 1);

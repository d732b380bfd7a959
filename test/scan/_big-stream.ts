/**
 * Run by window.test.ts in a fresh process: scan a 256 MB stream through one window scanner and
 * print, as JSON, the process's resident memory right before the scan, its peak (the kernel's
 * high-water mark, exact rather than sampled), and the live JavaScript heap after the scan and a
 * full collection. A fresh process keeps the measurement independent of whatever earlier test files
 * left in the heap.
 */
import { heapStats } from "bun:jsc";
import { readFileSync } from "node:fs";
import { scanStream } from "../../src/scan/file.ts";
import { AWS, regexScanner } from "./_scanner.ts";

const KEY = "AKIAIOSFODNN7EXAMPLQ";

/**
 * Peak resident memory of this process in bytes: VmHWM of /proc/self/status (this address space
 * only). Not getrusage's maxRSS: Linux carries the high-water mark of the address space replaced by
 * exec into it, and a child spawned by the test runner (vfork + exec) would report the runner's RSS.
 */
function peakRss(): number {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) return Number(m[1]) * 1024;
  } catch {
    /* not Linux */
  }
  return process.resourceUsage().maxRSS * 1024;
}
const block = `${"let value = compute(1, 2, 3); // some code here\n".repeat(20_000)}token ${KEY}\n`;
const bytes = new TextEncoder().encode(block);
const blocks = Math.ceil((256 * 1024 * 1024) / bytes.length);
let sent = 0;
const src = new ReadableStream<Uint8Array>({
  pull(c) {
    if (sent++ >= blocks) return c.close();
    c.enqueue(bytes);
  },
});
Bun.gc(true);
const before = process.memoryUsage().rss;
const baseHeap = heapStats().heapSize;
const res = await scanStream(src, "big", regexScanner([AWS]));
const peak = peakRss();
Bun.gc(true);
console.log(
  JSON.stringify({
    blocks,
    findings: res.findings.length,
    secondLine: res.findings[1]?.line ?? null,
    before,
    peak,
    heapGrowth: heapStats().heapSize - baseHeap,
  }),
);

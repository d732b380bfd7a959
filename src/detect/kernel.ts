/**
 * The engine's character loop (engine.ts charPass) as a small WebAssembly function, assembled here
 * from a few dozen opcodes. It reads every character of every scanned text, so it is the one place
 * where the engine is limited by how fast a loop runs rather than by how much it has to do: the
 * WebAssembly loop is fast from its first call (no JIT warm-up on type feedback) and ~2.5x faster
 * than the JavaScript one once both are optimised (1.3 vs 3.4 ms per MB of source code).
 *
 * It works on UTF-8 bytes: the text is copied into the module's memory with `encodeInto` in chunks
 * of CHUNK characters. Positions are reported in UTF-16 code units, as JavaScript counts them: the
 * loop keeps `adj`, how many more bytes than code units it has seen (+1 per continuation byte, -1
 * per 4-byte lead, since a 4-byte sequence is two code units), and a hooked trigram or a base64 run
 * is all ASCII, so its start is its byte offset less `adj`.
 *
 * The hash is that of the JavaScript loop (which folds a code unit to its low 8 bits). For ASCII the
 * two agree; a hook trigram with a non-ASCII character would not, so an engine uses the kernel only
 * when all its literals and class anchors are ASCII (Engine.byteHooks). Hits are candidates that
 * the caller verifies, so positions that only one of the two loops offers (around non-ASCII text)
 * never change a result.
 *
 * const k = charKernel(); // null where WebAssembly is unavailable: use the JavaScript loop
 * const hits = k.run(text, engine.tri, 16, runs); // Int32Array of trigram starts; runs gets run starts
 *
 * The kernel is per thread (each worker instantiates its own); `run` is not re-entrant, and the
 * engine never calls it while using its result.
 */

/** Characters copied and scanned per call (their UTF-8 takes at most three times as many bytes). */
export const CHUNK = 64 * 1024;
/** The shortest base64/hex run the kernel reports; runs this short are rare enough to list. */
export const KERNEL_MIN_RUN = 16;

const TRI_BITS = 18;
const TRI_SIZE = 1 << TRI_BITS;

// Memory layout (bytes). Header: the loop's state between calls.
const H_RUNS = 0; // out: runs found in the last call
const H_HASH = 4; // in/out: rolling trigram hash
const H_RUN = 8; // in/out: length of the current base64/hex run
const H_ADJ = 12; // in/out: bytes minus code units so far in this chunk
const RUN_MASK = 16; // 256 x i8: -1 for a base64/hex byte, 0 otherwise
const DELTA = RUN_MASK + 256; // 256 x i8: +1 continuation byte, -1 four-byte lead
const TRI = 2048; // TRI_SIZE bytes: the engine's trigram table
const TEXT = TRI + TRI_SIZE; // the chunk's UTF-8, then one 0 byte
const TEXT_SIZE = CHUNK * 3 + 16;
const HITS = TEXT + TEXT_SIZE; // i32 per hit: at most one per byte
const RUNS = HITS + TEXT_SIZE * 4; // i32 per run: at most one per KERNEL_MIN_RUN + 1 bytes
const END = RUNS + (Math.ceil(TEXT_SIZE / (KERNEL_MIN_RUN + 1)) + 16) * 4;
const PAGES = Math.ceil(END / 65536);

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// --- A minimal WebAssembly assembler: just what the loop needs.

const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
};
const sleb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
};
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];
const name = (s: string) => [...uleb(s.length), ...[...s].map((c) => c.charCodeAt(0))];

const I32 = 0x7f;
const VOID = 0x40;
const op = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  get: 0x20,
  set: 0x21,
  tee: 0x22,
  load: 0x28,
  load8s: 0x2c,
  load8u: 0x2d,
  store: 0x36,
  const: 0x41,
  eq: 0x46,
  gtU: 0x4b,
  add: 0x6a,
  sub: 0x6b,
  and: 0x71,
  xor: 0x73,
  shl: 0x74,
};
const get = (l: number) => [op.get, l];
const set = (l: number) => [op.set, l];
const tee = (l: number) => [op.tee, l];
const i32 = (n: number) => [op.const, ...sleb(n)];
/** Memory access at a constant offset from the address on the stack (alignment hint: log2 bytes). */
const load8u = (offset: number) => [op.load8u, 0, ...uleb(offset)];
const load8s = (offset: number) => [op.load8s, 0, ...uleb(offset)];
const load = (offset: number) => [op.load, 2, ...uleb(offset)];
const store = (offset: number) => [op.store, 2, ...uleb(offset)];

// ascii|wide(p0, p1, rmin, base) -> hits: bytes [p0, p1) of the chunk at TEXT.
const [P0, P1, RMIN, BASE] = [0, 1, 2, 3];
const [I, H, RUN, C, NH, NR, ADJ] = [4, 5, 6, 7, 8, 9, 10];
const LOCALS = 7;

/**
 * One byte, at i + j: c = text[i + j]; the trigram hash, a hit when its table entry is set; in a
 * `wide` chunk adj (for code-unit offsets); the run counter, a run when it reaches rmin.
 */
type Code = number | Code[];

const step = (j: number, wide: boolean): Code => [
  // c = text[i + j]; h = ((h << 6) ^ c) & mask
  get(I),
  load8u(TEXT + j),
  set(C),
  get(H),
  i32(6),
  op.shl,
  get(C),
  op.xor,
  i32(TRI_SIZE - 1),
  op.and,
  tee(H),
  // if (tri[h]) hits[nh++] = base + i + j - 2 - adj
  load8u(TRI),
  op.if,
  VOID,
  get(NH),
  i32(2),
  op.shl,
  get(BASE),
  get(I),
  op.add,
  i32(j - 2),
  op.add,
  wide ? [get(ADJ), op.sub] : [],
  store(HITS),
  get(NH),
  i32(1),
  op.add,
  set(NH),
  op.end,
  // adj += delta[c]
  wide ? [get(ADJ), get(C), load8s(DELTA), op.add, set(ADJ)] : [],
  // run = (run + 1) & runMask[c]; if (run == rmin) runs[nr++] = base + i + j + 1 - rmin - adj
  get(RUN),
  i32(1),
  op.add,
  get(C),
  load8s(RUN_MASK),
  op.and,
  tee(RUN),
  get(RMIN),
  op.eq,
  op.if,
  VOID,
  get(NR),
  i32(2),
  op.shl,
  get(BASE),
  get(I),
  op.add,
  i32(j + 1),
  op.add,
  get(RMIN),
  op.sub,
  wide ? [get(ADJ), op.sub] : [],
  store(RUNS),
  get(NR),
  i32(1),
  op.add,
  set(NR),
  op.end,
];

/** while (i + n <= p1) { body; i += n } */
const loopBy = (n: number, body: Code): Code => [
  op.block,
  VOID,
  op.loop,
  VOID,
  get(I),
  i32(n),
  op.add,
  get(P1),
  op.gtU,
  op.brIf,
  1,
  body,
  get(I),
  i32(n),
  op.add,
  set(I),
  op.br,
  0,
  op.end,
  op.end,
];

/**
 * The loop over bytes [p0, p1) of the chunk at TEXT. `wide`: the chunk has non-ASCII characters, so
 * the loop keeps `adj` to turn byte offsets into code-unit offsets. An ASCII chunk (most chunks of
 * source code) needs no such step, and takes four bytes per turn of its loop.
 */
const loopBody = (wide: boolean): Code => [
  // Load the state.
  i32(0),
  load(H_HASH),
  set(H),
  i32(0),
  load(H_RUN),
  set(RUN),
  i32(0),
  load(H_ADJ),
  set(ADJ),
  get(P0),
  set(I),
  wide ? [] : loopBy(4, [step(0, false), step(1, false), step(2, false), step(3, false)]),
  loopBy(1, step(0, wide)),
  // Save the state; return the hit count.
  i32(0),
  get(H),
  store(H_HASH),
  i32(0),
  get(RUN),
  store(H_RUN),
  i32(0),
  get(ADJ),
  store(H_ADJ),
  i32(0),
  get(NR),
  store(H_RUNS),
  get(NH),
  op.end,
];

/** The kernel's WebAssembly module (build.ts inlines it into the binary as SLUICE_CHAR_KERNEL). */
export function kernelModuleBytes(): Uint8Array {
  const fn = (wide: boolean) => {
    // Nested arrays flattened once: spreading each piece costs ~1 ms more at a cold start.
    const code = [...vec([[...uleb(LOCALS), I32]]), ...(loopBody(wide) as number[]).flat(8)];
    return [...uleb(code.length), ...code];
  };
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32]]), ...vec([[I32]])]])),
    ...section(3, vec([[0], [0]])),
    ...section(5, vec([[0x00, ...uleb(PAGES)]])),
    ...section(
      7,
      vec([
        [...name("ascii"), 0x00, 0],
        [...name("wide"), 0x00, 1],
        [...name("memory"), 0x02, 0],
      ]),
    ),
    ...section(10, vec([fn(false), fn(true)])),
  ]);
}

export interface CharKernel {
  /**
   * Trigram hits (starts of trigrams whose hash is set in `tri`) and, when `rmin` >= KERNEL_MIN_RUN,
   * the starts of base64/hex runs when they reach `rmin` characters (pushed to `runs`), in text
   * order; the same as engine.ts charPass for an engine with byteHooks. `rmin` -1: no runs.
   */
  run(text: string, tri: Uint8Array, rmin: number, runs: number[]): Int32Array;
}

let kernel: CharKernel | null | undefined;

/** This thread's kernel, made on first use; null where WebAssembly cannot be used. */
export function charKernel(): CharKernel | null {
  if (kernel === undefined) {
    try {
      kernel = makeKernel();
    } catch {
      kernel = null;
    }
  }
  return kernel;
}

declare const SLUICE_CHAR_KERNEL: string | undefined;

function makeKernel(): CharKernel {
  const bytes =
    typeof SLUICE_CHAR_KERNEL === "string" ? Uint8Array.fromHex(SLUICE_CHAR_KERNEL) : kernelModuleBytes();
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes as BufferSource), {});
  type Loop = (p0: number, p1: number, rmin: number, base: number) => number;
  const ascii = instance.exports.ascii as Loop;
  const wide = instance.exports.wide as Loop;
  const buffer = (instance.exports.memory as WebAssembly.Memory).buffer;
  const u8 = new Uint8Array(buffer);
  const words = new Int32Array(buffer);
  const runMask = new Int32Array(256);
  for (const c of B64) runMask[c.charCodeAt(0)] = -1;
  u8.set(new Uint8Array(Int8Array.from(runMask).buffer), RUN_MASK);
  const delta = new Int8Array(256);
  for (let b = 0x80; b < 0xc0; b++) delta[b] = 1;
  for (let b = 0xf0; b < 0xf8; b++) delta[b] = -1;
  u8.set(new Uint8Array(delta.buffer), DELTA);
  const textView = u8.subarray(TEXT, TEXT + TEXT_SIZE - 1);
  const encoder = new TextEncoder();
  let loaded: Uint8Array | null = null;

  return {
    run(text, tri, rmin, runs) {
      if (tri.length !== TRI_SIZE) throw new RangeError("trigram table of the wrong size");
      if (rmin !== -1 && rmin < KERNEL_MIN_RUN) throw new RangeError(`runs shorter than ${KERNEL_MIN_RUN}`);
      // An engine's table never changes once compiled: copy it only when the engine changes.
      if (loaded !== tri) {
        u8.set(tri, TRI);
        loaded = tri;
      }
      const n = text.length;
      if (n < 2) return new Int32Array(0);
      let out = new Int32Array(Math.max(256, n >> 5));
      let count = 0;
      for (let a = 0; a < n; a += CHUNK) {
        const b = Math.min(n, a + CHUNK);
        const { read, written } = encoder.encodeInto(
          a === 0 && b === n ? text : text.substring(a, b),
          textView,
        );
        if (read !== b - a) throw new Error("kernel: a chunk did not fit");
        let p0 = 0;
        words[H_ADJ >> 2] = 0;
        if (a === 0) {
          // The first two characters start the hash and the run; hits start at the third.
          let run = 0;
          let adj = 0;
          for (let k = 0; k < 2 && k < written; k++) {
            const c = u8[TEXT + k]!;
            run = (run + 1) & runMask[c]!;
            adj += delta[c]!;
          }
          words[H_HASH >> 2] = (u8[TEXT]! << 6) ^ u8[TEXT + 1]!;
          words[H_RUN >> 2] = run;
          words[H_ADJ >> 2] = adj;
          p0 = 2;
        }
        let p1 = written;
        if (b === n) {
          // A 0 byte after the text: the last trigrams are checked with it, as charPass does.
          u8[TEXT + written] = 0;
          p1 = written + 1;
        }
        // One byte per character: an ASCII chunk.
        const loop = written === read ? ascii : wide;
        const hits = p1 > p0 ? loop(p0, p1, rmin, a) : 0;
        if (count + hits > out.length) {
          const grown = new Int32Array(Math.max(out.length * 2, count + hits));
          grown.set(out.subarray(0, count));
          out = grown;
        }
        out.set(words.subarray(HITS >> 2, (HITS >> 2) + hits), count);
        count += hits;
        const nr = words[H_RUNS >> 2]!;
        for (let k = 0; k < nr; k++) runs.push(words[(RUNS >> 2) + k]!);
      }
      return out.subarray(0, count);
    },
  };
}

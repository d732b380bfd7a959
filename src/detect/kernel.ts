/**
 * The matcher's character loop (loop.ts charPass and the literal checks of literalHits) as a small
 * WebAssembly module, assembled here from a few dozen opcodes. It reads every character of every
 * scanned text, so it is where the matcher is limited by how fast a loop runs rather than by how
 * much it has to do. WebAssembly is fast from its first call (no JIT warm-up on type feedback), which
 * is what a short `sluice scan` gains; in a long-running proxy, where the JavaScript loop reaches the
 * top JIT tier, the two are about even (docs/benchmarks.md).
 *
 * Why one file of this length: the assembler, the module's memory layout and the JavaScript that
 * fills and reads that memory must agree byte for byte, and are only read together.
 *
 * Per byte: the rolling trigram hash and its table (`tri`, an entry's bit 1: a literal's hook, bit 2:
 * a class anchor's or IPv6 spot's trigram), and the base64/hex run counter. A literal hook is
 * checked here: the bigram's slot, the third character, then each literal of the slot from where it
 * starts (ASCII case folded for case-insensitive ones), so that JavaScript gets only literals that
 * are there. Other hooks come back as positions for the caller to check.
 *
 * It works on UTF-8 bytes: the text is copied into the module's memory with one `encodeInto` (a
 * substring per chunk would copy each chunk once more), and looped over in ranges of RANGE bytes,
 * whose results are copied out after each.
 * Positions are reported in UTF-16 code units, as JavaScript counts them: the loop keeps
 * `adj`, how many more bytes than code units it has seen (+1 per continuation byte, -1 per 4-byte
 * lead, since a 4-byte sequence is two code units), and a hooked trigram, a literal or a base64 run
 * is all ASCII, so its start is its byte offset less `adj`.
 *
 * The hash is that of the JavaScript loop (which folds a code unit to its low 8 bits). For ASCII the
 * two agree; a hook with a non-ASCII character would not, so a matcher uses the kernel only when all
 * its literals and class anchors are ASCII and no literal is longer than MAX_LITERAL
 * (Matcher.byteHooks).
 *
 * const k = charKernel(); // null where WebAssembly is unavailable: use the JavaScript loop
 * const r = k.run(text, matcher, 16, runs); // r.spots, r.lits (start, literal index) pairs, r.literals
 *
 * The kernel is per thread (each worker instantiates its own); `run` is not re-entrant, and the
 * matcher never calls it while using its result. Its memory is resident, so it starts small (room
 * for 1 MB of text); a text that grows it past KEEP_TEXT retires the instance after the call.
 */

/** Bytes looped over per call: what one call can find is bounded by it. */
export const RANGE = 192 * 1024;
/** The longest literal the kernel checks (its length and lead are bytes of a record). */
export const MAX_LITERAL = 255;
/** The shortest base64/hex run the kernel reports; runs this short are rare enough to list. */
export const KERNEL_MIN_RUN = 16;
/** `tri` entry bits. */
export const TRI_LITERAL = 1;
export const TRI_SPOT = 2;

const TRI_BITS = 18;
const TRI_SIZE = 1 << TRI_BITS;

// Memory layout (bytes). Header: the loop's state between calls, and where the matcher's tables are.
const H_RUNS = 0; // out: runs found in the last call
const H_HASH = 4; // in/out: rolling trigram hash
const H_RUN = 8; // in/out: length of the current base64/hex run
const H_ADJ = 12; // in/out: bytes minus code units so far
const H_NL = 16; // out: literals found in the last call
const H_OVER = 24; // out: 1 when more literals were found than LIT_CAP
const H_BIGRAM = 28; // the matcher's tables: addresses
const H_THIRD = 32;
const H_SLOTS = 36;
const H_IDS = 40;
const H_LITS = 44;
const H_POOL = 48;
const RUN_MASK = 128; // 256 x i8: -1 for a base64/hex byte, 0 otherwise
const DELTA = RUN_MASK + 256; // 256 x i8: +1 continuation byte, -1 four-byte lead
// 3 x 256 x u8: per byte, the spot kinds (a bit per class anchor, the last for IPv6 spots) that
// accept it first, second and third: a spot is one where the three have a bit in common.
const SPOT_SETS = DELTA + 256;
const TRI = 2048; // TRI_SIZE bytes: the matcher's trigram table
// What one range's call can hold: more spots or literals than this (none of which real text comes
// near) and the caller uses the JavaScript loop. The memory's size is resident (~1 MB a MB), so
// these are kept small.
const SPOT_CAP = RANGE / 4;
const LIT_CAP = RANGE / 8;
const SPOTS = TRI + TRI_SIZE; // i32 per spot
const RUNS = SPOTS + (SPOT_CAP + 1) * 4; // i32 per run: at most one per KERNEL_MIN_RUN + 1 bytes
const LITS_FOUND = RUNS + (Math.ceil(RANGE / (KERNEL_MIN_RUN + 1)) + 16) * 4; // (start, literal) pairs
const TABLES = LITS_FOUND + LIT_CAP * 8; // the matcher's bigram, third, slot and literal tables
/** Their room, with space to spare for the built-in rules; a matcher that needs more runs without the kernel. */
const TABLES_SIZE = 512 * 1024;
const TEXT = TABLES + TABLES_SIZE; // the text's UTF-8, then a 0 byte; the memory grows to hold it
/**
 * Room for a text of this many bytes from the start; a larger one grows the memory (once: it
 * stays, up to KEEP_TEXT). Initial memory is resident, so this is no larger than most texts need.
 */
const TEXT_ROOM = 1024 * 1024;
/**
 * A kernel whose memory grew past this for a large text is let go after the call (the next call
 * makes a new one): WebAssembly memory never shrinks, and a long-running proxy should not
 * keep a one-off 50 MB body's worth.
 */
const KEEP_TEXT = 16 * 1024 * 1024;

// --- A minimal WebAssembly assembler: just what the loop needs. Code is nested arrays of bytes,
// flattened once per module.

type Code = number | Code[];

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
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  return: 0x0f,
  call: 0x10,
  get: 0x20,
  set: 0x21,
  tee: 0x22,
  load: 0x28,
  load8s: 0x2c,
  load8u: 0x2d,
  load16u: 0x2f,
  store: 0x36,
  const: 0x41,
  select: 0x1b,
  eqz: 0x45,
  eq: 0x46,
  ne: 0x47,
  ltS: 0x48,
  ltU: 0x49,
  gtU: 0x4b,
  geU: 0x4f,
  add: 0x6a,
  sub: 0x6b,
  and: 0x71,
  or: 0x72,
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
const load16u = (offset: number) => [op.load16u, 1, ...uleb(offset)];
const load = (offset: number) => [op.load, 2, ...uleb(offset)];
const store = (offset: number) => [op.store, 2, ...uleb(offset)];
/** Return when the value on the stack is 0. */
const returnIfZero = [op.eqz, op.if, VOID, op.return, op.end];
/** A header word. */
const header = (h: number) => [i32(0), load(h)];

// Functions: 0 ascii and 1 wide (p0, p1, rmin) -> spots; 2 literals (i, adj, c). Positions are
// the byte's offset in the text less adj: the text starts at TEXT.
const LITERALS_FN = 2;

// The loops' locals.
const [P0, P1, RMIN] = [0, 1, 2];
const [I, H, RUN, C, NH, NR, ADJ, F] = [3, 4, 5, 6, 7, 8, 9, 10];
const LOOP_LOCALS = 8;

/**
 * One byte, at i + j: c = text[i + j]; the trigram hash, and at a hooked trigram a spot or the
 * literal checks; in a `wide` text adj (for code-unit offsets); the run counter, a run when it
 * reaches rmin. The instructions of one step written out in order (a table, hence its length).
 */
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
  // f = tri[h]
  load8u(TRI),
  tee(F),
  op.if,
  VOID,
  // A spot, when its three bytes are one (not another trigram of the same hash): spots[nh++] =
  // i + j - 2 - adj
  get(F),
  i32(TRI_SPOT),
  op.and,
  i32(0),
  op.ne,
  get(I),
  load8u(TEXT + j - 2),
  load8u(SPOT_SETS),
  get(I),
  load8u(TEXT + j - 1),
  load8u(SPOT_SETS + 256),
  op.and,
  get(C),
  load8u(SPOT_SETS + 512),
  op.and,
  i32(0),
  op.ne,
  op.and,
  op.if,
  VOID,
  // (Past SPOT_CAP the last slot is overwritten: the caller sees more spots than that and uses the
  // JavaScript loop instead.)
  get(NH),
  i32(SPOT_CAP),
  get(NH),
  i32(SPOT_CAP),
  op.ltU,
  op.select,
  i32(2),
  op.shl,
  get(I),
  i32(j - 2),
  op.add,
  wide ? [get(ADJ), op.sub] : [],
  store(SPOTS),
  get(NH),
  i32(1),
  op.add,
  set(NH),
  op.end,
  // A literal's hook: check its literals (rare: a call costs less than the code inline five times).
  get(F),
  i32(TRI_LITERAL),
  op.and,
  op.if,
  VOID,
  get(I),
  i32(j),
  op.add,
  get(ADJ),
  get(C),
  op.call,
  LITERALS_FN,
  op.end,
  op.end,
  // adj += delta[c]
  wide ? [get(ADJ), get(C), load8s(DELTA), op.add, set(ADJ)] : [],
  // run = (run + 1) & runMask[c]; if (run == rmin) runs[nr++] = i + j + 1 - rmin - adj
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
  get(I),
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
 * The loop over bytes [p0, p1) of the text at TEXT. `wide`: the text has non-ASCII characters, so
 * the loop keeps `adj` to turn byte offsets into code-unit offsets. An ASCII text (most files of
 * source code) needs no such step, and takes four bytes per turn of its loop.
 */
const loopBody = (wide: boolean): Code => [
  header(H_HASH),
  set(H),
  header(H_RUN),
  set(RUN),
  header(H_ADJ),
  set(ADJ),
  get(P0),
  set(I),
  wide ? [] : loopBy(4, [step(0, false), step(1, false), step(2, false), step(3, false)]),
  loopBy(1, step(0, wide)),
  // Save the state; return the spot count.
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

// literals(i, adj, c): the trigram ending at byte i hooks a literal.
const [LI, LADJ, LC] = [0, 1, 2];
const [SLOT, K, KEND, LIT, REC, AT, M, LEN, X, CI, OFF, NL] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
const LITERAL_LOCALS = 12;

/**
 * The literals of the hook's slot, each checked from where it starts: a record per literal is
 * [pool offset: i32, length: u8, lead: u8, case-insensitive: u8, 0]; the pool holds the literals'
 * bytes (lower case when case-insensitive). A match is stored as (code-unit start, literal index).
 */
const literalsBody: Code = [
  // slot = bigram[text[i - 2] << 8 | text[i - 1]]; none: return
  get(LI),
  load8u(TEXT - 2),
  i32(8),
  op.shl,
  get(LI),
  load8u(TEXT - 1),
  op.or,
  i32(1),
  op.shl,
  header(H_BIGRAM),
  op.add,
  load16u(0),
  tee(SLOT),
  returnIfZero,
  // third[slot << 8 | c], else return
  get(SLOT),
  i32(8),
  op.shl,
  get(LC),
  op.or,
  header(H_THIRD),
  op.add,
  load8u(0),
  returnIfZero,
  // k = slots[slot], kend = slots[slot + 1]
  get(SLOT),
  i32(2),
  op.shl,
  header(H_SLOTS),
  op.add,
  tee(REC),
  load(0),
  set(K),
  get(REC),
  load(4),
  set(KEND),
  op.block,
  VOID,
  op.loop,
  VOID,
  get(K),
  get(KEND),
  op.geU,
  op.brIf,
  1,
  // lit = ids[k]; rec = lits + lit * 8; at = i - 2 - lead
  get(K),
  i32(2),
  op.shl,
  header(H_IDS),
  op.add,
  load(0),
  tee(LIT),
  i32(3),
  op.shl,
  header(H_LITS),
  op.add,
  tee(REC),
  load8u(5),
  set(AT),
  get(LI),
  i32(2),
  op.sub,
  get(AT),
  op.sub,
  set(AT),
  op.block,
  VOID,
  // Not before the text: at < 0 skips.
  get(AT),
  i32(0),
  op.ltS,
  op.brIf,
  0,
  get(REC),
  load8u(4),
  set(LEN),
  get(REC),
  load8u(6),
  set(CI),
  get(REC),
  load(0),
  header(H_POOL),
  op.add,
  set(OFF),
  i32(0),
  set(M),
  op.block,
  VOID,
  op.loop,
  VOID,
  get(M),
  get(LEN),
  op.geU,
  op.brIf,
  1,
  // x = text[at + m], folded to lower case (A-Z) for a case-insensitive literal. (TEXT is added
  // first: an address is unsigned.)
  get(AT),
  get(M),
  op.add,
  i32(TEXT),
  op.add,
  load8u(0),
  set(X),
  get(CI),
  op.if,
  VOID,
  get(X),
  get(X),
  i32(65),
  op.sub,
  i32(26),
  op.ltU,
  i32(5),
  op.shl,
  op.or,
  set(X),
  op.end,
  // x != pool[off + m]: not this literal
  get(X),
  get(OFF),
  get(M),
  op.add,
  load8u(0),
  op.ne,
  op.brIf,
  2,
  get(M),
  i32(1),
  op.add,
  set(M),
  op.br,
  0,
  op.end,
  op.end,
  // Found: (at - adj, lit), unless the list is full.
  header(H_NL),
  tee(NL),
  i32(LIT_CAP),
  op.geU,
  op.if,
  VOID,
  i32(0),
  i32(1),
  store(H_OVER),
  op.else,
  get(NL),
  i32(3),
  op.shl,
  get(AT),
  get(LADJ),
  op.sub,
  store(LITS_FOUND),
  get(NL),
  i32(3),
  op.shl,
  get(LIT),
  store(LITS_FOUND + 4),
  i32(0),
  get(NL),
  i32(1),
  op.add,
  store(H_NL),
  op.end,
  op.end,
  get(K),
  i32(1),
  op.add,
  set(K),
  op.br,
  0,
  op.end,
  op.end,
  op.end,
];

/** The kernel's WebAssembly module (build.ts inlines it into the binary as SLUICE_CHAR_KERNEL). */
export function kernelModuleBytes(): Uint8Array {
  const fn = (locals: number, code: Code) => {
    const bytes = [...vec([[...uleb(locals), I32]]), ...(code as number[]).flat(8)];
    return [...uleb(bytes.length), ...bytes];
  };
  const params3 = vec([[I32], [I32], [I32]]);
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(
      1,
      vec([
        [0x60, ...params3, ...vec([[I32]])],
        [0x60, ...params3, ...vec([])],
      ]),
    ),
    ...section(3, vec([[0], [0], [1]])),
    ...section(5, vec([[0x00, ...uleb(Math.ceil((TEXT + TEXT_ROOM) / 65536))]])),
    ...section(
      7,
      vec([
        [...name("ascii"), 0x00, 0],
        [...name("wide"), 0x00, 1],
        [...name("memory"), 0x02, 0],
      ]),
    ),
    ...section(
      10,
      vec([
        fn(LOOP_LOCALS, loopBody(false)),
        fn(LOOP_LOCALS, loopBody(true)),
        fn(LITERAL_LOCALS, literalsBody),
      ]),
    ),
  ]);
}

/** What the kernel reads of a matcher (matcher.ts Matcher). */
export interface KernelTables {
  /** 18-bit trigram hash -> TRI_LITERAL | TRI_SPOT bits. */
  tri: Uint8Array;
  /** (c0 << 8 | c1) -> slot (0: none). */
  bigram: Uint16Array;
  /** slot << 8 | third character -> 1. */
  third: Uint8Array;
  /** Per slot, its literals. */
  bigramLits: { lit: string; lower: string | null; lead: number }[][];
  /** The class anchors: the characters each accepts first, second and third (by char code). */
  classAnchors: { c0: Uint8Array; c1: Uint8Array; c2: Uint8Array }[];
  /** IPv6 spots (a hex digit, a colon, a hex digit or a colon) are hooked too. */
  letterDigitRules: boolean;
}

export interface KernelResult<L> {
  /**
   * Starts of class-anchor and IPv6-spot trigrams (their characters checked), for the caller.
   * This and `lits` are valid until the kernel's next call.
   */
  spots: Int32Array;
  /** (start, index in `literals`) of each literal found, in the order of their hooks. */
  lits: Int32Array;
  literals: L[];
}

export interface CharKernel {
  /**
   * One pass over `text`: spots, literals found and, when `rmin` >= KERNEL_MIN_RUN, the starts of
   * base64/hex runs when they reach `rmin` characters (pushed to `runs`; -1: none). Null when more
   * literals were found than the kernel can hold (then `runs` is incomplete: use the JavaScript
   * loop). The same as loop.ts charPass and literalHits, for a matcher with byteHooks.
   */
  run<L extends KernelTables["bigramLits"][number][number]>(
    text: string,
    tables: KernelTables & { bigramLits: L[][] },
    rmin: number,
    runs: number[],
  ): KernelResult<L> | null;
}

let kernel: CharKernel | null | undefined;

/** This thread's kernel, made on first use; null where WebAssembly cannot be used. */
export function charKernel(): CharKernel | null {
  if (kernel === undefined) {
    try {
      kernel = makeKernel(() => {
        kernel = undefined;
      });
    } catch {
      kernel = null;
    }
  }
  return kernel;
}

declare const SLUICE_CHAR_KERNEL: string | undefined;

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Assembles the WebAssembly kernel: its instructions in order, one block per step, which is why it is long. */
function makeKernel(retire: () => void): CharKernel {
  const bytes =
    typeof SLUICE_CHAR_KERNEL === "string" ? Uint8Array.fromHex(SLUICE_CHAR_KERNEL) : kernelModuleBytes();
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes as BufferSource), {});
  type Loop = (p0: number, p1: number, rmin: number) => number;
  const ascii = instance.exports.ascii as Loop;
  const wide = instance.exports.wide as Loop;
  const memory = instance.exports.memory as WebAssembly.Memory;
  let u8 = new Uint8Array(memory.buffer);
  let words = new Int32Array(memory.buffer);
  // The memory's size and the view texts are encoded into, kept until the memory grows: reading
  // them from the memory costs more than a small text's loop.
  let size = memory.buffer.byteLength;
  let textArea = u8.subarray(TEXT, size - 16);
  const runMask = new Int8Array(256);
  for (const c of B64) runMask[c.charCodeAt(0)] = -1;
  u8.set(new Uint8Array(runMask.buffer), RUN_MASK);
  const delta = new Int8Array(256);
  for (let b = 0x80; b < 0xc0; b++) delta[b] = 1;
  for (let b = 0xf0; b < 0xf8; b++) delta[b] = -1;
  u8.set(new Uint8Array(delta.buffer), DELTA);
  const encoder = new TextEncoder();
  let loaded: KernelTables | null = null;
  let literals: unknown[] = [];

  /** Copy a matcher's tables into memory (once per matcher: they never change once compiled). */
  function load(t: KernelTables): void {
    if (t.tri.length !== TRI_SIZE || t.bigram.length !== 65536)
      throw new RangeError("tables of the wrong size");
    const ids = new Map<unknown, number>();
    const slotStarts: number[] = [];
    const slotIds: number[] = [];
    literals = [];
    for (const slot of t.bigramLits) {
      slotStarts.push(slotIds.length);
      for (const al of slot) {
        let id = ids.get(al);
        if (id === undefined) {
          ids.set(al, (id = literals.length));
          literals.push(al);
        }
        slotIds.push(id);
      }
    }
    slotStarts.push(slotIds.length);
    const pool: number[] = [];
    const records = new Uint8Array(literals.length * 8);
    const recordWords = new Int32Array(records.buffer);
    (literals as KernelTables["bigramLits"][number]).forEach((al, id) => {
      const text = al.lower ?? al.lit;
      if (text.length > MAX_LITERAL || al.lead > MAX_LITERAL || /[^\x01-\x7f]/.test(text))
        throw new RangeError("a literal the kernel cannot check");
      recordWords[id * 2] = pool.length;
      records[id * 8 + 4] = text.length;
      records[id * 8 + 5] = al.lead;
      records[id * 8 + 6] = al.lower === null ? 0 : 1;
      for (let k = 0; k < text.length; k++) pool.push(text.charCodeAt(k));
    });
    const align = (n: number) => (n + 7) & ~7;
    const bigramAt = TABLES;
    const thirdAt = align(bigramAt + 65536 * 2);
    const slotsAt = align(thirdAt + t.third.length);
    const idsAt = align(slotsAt + slotStarts.length * 4);
    const litsAt = align(idsAt + slotIds.length * 4);
    const poolAt = align(litsAt + records.length);
    if (poolAt + pool.length > TEXT) throw new RangeError("a matcher too large for the kernel");
    u8.set(t.tri, TRI);
    // Spot kinds: a bit per class anchor, bit 7 for IPv6 spots; with more anchors than bits, every
    // byte is accepted (no spot is left out, JavaScript checks them all).
    const sets = u8.subarray(SPOT_SETS, SPOT_SETS + 768);
    sets.fill(t.classAnchors.length > 7 ? 0xff : 0);
    if (t.classAnchors.length <= 7) {
      t.classAnchors.forEach((ca, k) => {
        for (let b = 0; b < 128; b++) {
          if (ca.c0[b] === 1) sets[b] = sets[b]! | (1 << k);
          if (ca.c1[b] === 1) sets[256 + b] = sets[256 + b]! | (1 << k);
          if (ca.c2[b] === 1) sets[512 + b] = sets[512 + b]! | (1 << k);
        }
      });
      if (t.letterDigitRules)
        for (const c of "0123456789abcdefABCDEF") {
          const b = c.charCodeAt(0);
          sets[b] = sets[b]! | 0x80;
          sets[512 + b] = sets[512 + b]! | 0x80;
        }
      sets[256 + 58] = sets[256 + 58]! | (t.letterDigitRules ? 0x80 : 0);
      sets[512 + 58] = sets[512 + 58]! | (t.letterDigitRules ? 0x80 : 0);
    }
    u8.set(new Uint8Array(t.bigram.buffer, t.bigram.byteOffset, t.bigram.byteLength), bigramAt);
    u8.set(t.third, thirdAt);
    words.set(slotStarts, slotsAt >> 2);
    words.set(slotIds, idsAt >> 2);
    u8.set(records, litsAt);
    u8.set(pool, poolAt);
    words[H_BIGRAM >> 2] = bigramAt;
    words[H_THIRD >> 2] = thirdAt;
    words[H_SLOTS >> 2] = slotsAt;
    words[H_IDS >> 2] = idsAt;
    words[H_LITS >> 2] = litsAt;
    words[H_POOL >> 2] = poolAt;
    loaded = t;
  }

  // The result's lists, reused from call to call (a result is read before the next call).
  let spotList: Int32Array = new Int32Array(4096);
  let litList: Int32Array = new Int32Array(4096);
  /** list[at, at + count) = words[from, from + count), the list grown when needed. */
  const append = (list: Int32Array, at: number, from: number, count: number): Int32Array => {
    if (at + count > list.length) {
      const grown = new Int32Array(Math.max(list.length * 2, at + count));
      grown.set(list.subarray(0, at));
      list = grown;
    }
    for (let k = 0; k < count; k++) list[at + k] = words[from + k]!;
    return list;
  };

  /** Room for `bytes` bytes of text (and its 0 byte) at TEXT. */
  function room(bytes: number): void {
    const need = TEXT + bytes + 16;
    if (need <= size) return;
    memory.grow(Math.ceil((need - size) / 65536));
    u8 = new Uint8Array(memory.buffer);
    words = new Int32Array(memory.buffer);
    size = memory.buffer.byteLength;
    textArea = u8.subarray(TEXT, size - 16);
  }

  return {
    run(text, tables, rmin, runs) {
      if (rmin !== -1 && rmin < KERNEL_MIN_RUN) throw new RangeError(`runs shorter than ${KERNEL_MIN_RUN}`);
      if (loaded !== tables) load(tables);
      try {
        return scan(text, rmin, runs);
      } finally {
        if (size > TEXT + KEEP_TEXT) retire();
      }
    },
  };

  function scan<L>(text: string, rmin: number, runs: number[]): KernelResult<L> | null {
    const n = text.length;
    let spotCount = 0;
    let litCount = 0;
    if (n >= 2) {
      // Most texts are ASCII, one byte a character: try in the room there is, and make room for
      // the worst case (three bytes a code unit) only when it did not fit.
      room(n);
      let { read, written } = encoder.encodeInto(text, textArea);
      if (read < n) {
        room(n * 3);
        ({ read, written } = encoder.encodeInto(text, textArea));
        if (read < n) throw new Error("kernel: the text did not fit");
      }
      // A 0 byte after the text: the last trigrams are checked with it, as charPass does.
      u8[TEXT + written] = 0;
      // The first two characters start the hash, the run and adj; hooks start at the third.
      let run = 0;
      let adj = 0;
      for (let k = 0; k < 2; k++) {
        const c = u8[TEXT + k]!;
        run = (run + 1) & runMask[c]!;
        adj += delta[c]!;
      }
      words[H_HASH >> 2] = (u8[TEXT]! << 6) ^ u8[TEXT + 1]!;
      words[H_RUN >> 2] = run;
      words[H_ADJ >> 2] = adj;
      // One byte per character: ASCII.
      const loop = written === n ? ascii : wide;
      for (let p0 = 2; p0 <= written; p0 += RANGE) {
        const p1 = Math.min(written + 1, p0 + RANGE);
        words[H_NL >> 2] = 0;
        words[H_OVER >> 2] = 0;
        const found = loop(p0, p1, rmin);
        if (words[H_OVER >> 2] !== 0 || found > SPOT_CAP) return null;
        spotList = append(spotList, spotCount, SPOTS >> 2, found);
        spotCount += found;
        const nl = words[H_NL >> 2]! * 2;
        litList = append(litList, litCount, LITS_FOUND >> 2, nl);
        litCount += nl;
        const nr = words[H_RUNS >> 2]!;
        for (let k = 0; k < nr; k++) runs.push(words[(RUNS >> 2) + k]!);
      }
    }
    return {
      spots: spotList.subarray(0, spotCount),
      lits: litList.subarray(0, litCount),
      literals: literals as L[],
    };
  }
}

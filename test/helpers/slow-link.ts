/**
 * A slow link: a TCP forwarder that makes loopback behave like a network with a round-trip time. Put
 * it in front of a stand-in upstream and point clients at it. These machines' kernels have no `netem`, so this is
 * how a test or benchmark sees a network.
 *
 * Each accepted connection opens one to the target. Nothing moves until one round trip after the
 * client connected (the TCP handshake a real network would cost), then every chunk is delivered half
 * a round trip after it arrived, in each direction, in order. Bytes pass unchanged, so TLS
 * runs end to end between client and target. An end or reset on one side reaches the other after the
 * data queued before it.
 *
 * @example
 * await using up = await startUpstream();
 * await using link = await startSlowLink({ port: up.port, rttMs: 50 });
 * fetch(`${link.url}/v1/messages`, { tls: { ca: testTls().ca } }); // link.url = https://127.0.0.1:<its port>
 * link.connections; // TCP connections accepted so far
 * link.cut();        // every open connection dropped at once, as when the target's process dies
 */
import type { Socket, TCPSocketListener } from "bun";

export interface SlowLinkOptions {
  /** Port of the target on 127.0.0.1. */
  port: number;
  /** Round-trip time to simulate, ms (0 forwards without delay). */
  rttMs: number;
  /** Scheme of the `url` it reports (default https: the target speaks TLS). */
  scheme?: "http" | "https" | "ws" | "wss";
}

/** Bytes each side sent over one connection through the link. */
export interface LinkedConnection {
  /** Client to target. */
  up: number;
  /** Target to client. */
  down: number;
  /** Chunks the target sent, with their sizes (a TLS handshake's flights show here). */
  downChunks: number[];
}

export interface SlowLink {
  readonly port: number;
  /** `<scheme>://127.0.0.1:<port>`. */
  readonly url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Every connection's byte counts, in the order they were accepted. */
  readonly log: LinkedConnection[];
  /** Connections open right now. */
  readonly open: number;
  /** Drop every open connection abruptly (both sides), as if the target process died; new ones still pass. */
  cut(): void;
  stop(): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/** One direction of a connection through the link: chunks wait for their time, then go out in order. */
class Lane {
  #queue: { at: number; data: Uint8Array | null }[] = [];
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** Bytes the out socket did not take yet (written first on drain). */
  #backlog: Uint8Array | null = null;
  #last = 0;
  #out: Socket<Pair> | null = null;
  #ended = false;

  constructor(
    private readonly opened: number,
    private readonly rttMs: number,
  ) {}

  /** The socket this lane writes to (set once the target connection is up). */
  attach(out: Socket<Pair>): void {
    this.#out = out;
    this.#pump();
  }

  /** Queue a chunk (or the end, as null) for delivery. */
  push(data: Uint8Array | null): void {
    const now = performance.now();
    // Half a round trip after it arrived (and after the handshake's round trip), never before the chunk ahead of it.
    const at = Math.max(Math.max(now, this.opened + this.rttMs) + this.rttMs / 2, this.#last);
    this.#last = at;
    this.#queue.push({ at, data });
    this.#pump();
  }

  /** Deliver whatever is due; come back when the next chunk is. */
  #pump = (): void => {
    this.#timer = null;
    const out = this.#out;
    if (!out || this.#ended) return;
    if (this.#backlog && !this.#write(out, this.#backlog)) return;
    const now = performance.now();
    while (this.#queue.length > 0 && this.#queue[0]!.at <= now + 0.5) {
      const { data } = this.#queue.shift()!;
      if (data === null) {
        this.#ended = true;
        out.end();
        return;
      }
      if (!this.#write(out, data)) return;
    }
    const next = this.#queue[0];
    if (next && !this.#timer) this.#timer = setTimeout(this.#pump, Math.max(0, next.at - now));
  };

  /** Write, keeping what the socket did not take; false when it must wait for drain. */
  #write(out: Socket<Pair>, data: Uint8Array): boolean {
    const n = out.write(data);
    const rest = n < 0 ? data : data.subarray(n);
    this.#backlog = rest.byteLength > 0 ? rest : null;
    return this.#backlog === null;
  }

  /** The out socket can take more. */
  drain(): void {
    if (!this.#timer) this.#pump();
  }

  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#queue = [];
    this.#ended = true;
  }
}

/** What each socket of a linked pair knows: its own lane (toward the other side) and the peer. */
interface Pair {
  lane: Lane;
  peer: Socket<Pair> | null;
  /** The lane that writes to this socket. */
  inbound: Lane;
  record: LinkedConnection;
  side: "client" | "target";
}

export async function startSlowLink(opts: SlowLinkOptions): Promise<SlowLink> {
  let connections = 0;
  let open = 0;
  const log: LinkedConnection[] = [];
  const sockets = new Set<Socket<Pair>>();

  const handlers = {
    data(s: Socket<Pair>, data: Buffer) {
      const bytes = new Uint8Array(data); // a copy: the chunk waits in a queue
      if (s.data.side === "client") s.data.record.up += bytes.byteLength;
      else {
        s.data.record.down += bytes.byteLength;
        s.data.record.downChunks.push(bytes.byteLength);
      }
      s.data.lane.push(bytes);
    },
    drain(s: Socket<Pair>) {
      s.data.inbound.drain();
    },
    end(s: Socket<Pair>) {
      s.data.lane.push(null);
    },
    close(s: Socket<Pair>) {
      sockets.delete(s);
      if (s.data.side === "client") open--;
      // A reset or close passes to the other side after what was queued before it.
      s.data.lane.push(null);
    },
    error(s: Socket<Pair>) {
      s.data.lane.push(null);
    },
  };

  const listener: TCPSocketListener<Pair> = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      ...handlers,
      open(client) {
        connections++;
        open++;
        sockets.add(client);
        const opened = performance.now();
        const record: LinkedConnection = { up: 0, down: 0, downChunks: [] };
        log.push(record);
        const toTarget = new Lane(opened, opts.rttMs);
        const toClient = new Lane(opened, opts.rttMs);
        client.data = { lane: toTarget, inbound: toClient, peer: null, record, side: "client" };
        toClient.attach(client);
        Bun.connect<Pair>({
          hostname: "127.0.0.1",
          port: opts.port,
          data: { lane: toClient, inbound: toTarget, peer: client, record, side: "target" },
          socket: {
            ...handlers,
            open(target) {
              sockets.add(target);
              client.data.peer = target;
              toTarget.attach(target);
            },
            connectError() {
              toClient.push(null);
            },
          },
        }).catch(() => toClient.push(null));
      },
    },
  });

  /** Drop every open connection at once, both sides, with nothing queued delivered: a peer that died. */
  const cut = () => {
    for (const s of sockets) {
      s.data.lane.close();
      s.terminate();
    }
  };
  const stop = () => {
    cut();
    listener.stop(true);
  };
  return {
    port: listener.port,
    url: `${opts.scheme ?? "https"}://127.0.0.1:${listener.port}`,
    get connections() {
      return connections;
    },
    get open() {
      return open;
    },
    log,
    cut,
    stop,
    async [Symbol.asyncDispose]() {
      stop();
    },
  };
}

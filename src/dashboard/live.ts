/**
 * `GET /api/v1/live`: the Server-Sent Events stream of docs/api.md (`finding`, `request`,
 * `mode-changed`, `config-reloaded`, `ws-connection`, `mcp-event`) plus a `heartbeat` at connect and
 * every 15 s. Each `data:` line is `{type, ts, …fields}`, never a raw matched value.
 *
 * Rows that another process (`sluice mcp`) wrote into the same database are picked up by polling new
 * ids once a second while a client is connected, and sent as `finding` / `mcp-event`.
 */
import { BUS_EVENTS, type Bus, type BusEventName, type BusEvents } from "../core/bus.ts";
import { findingVerdict } from "../core/types.ts";
import { maskPath } from "../store/audit-log.ts";
import type { Store } from "../store/index.ts";
import { SECURITY_HEADERS } from "./http.ts";

/** Events queued for one SSE client before it counts as gone. */
const MAX_BACKLOG = 5000;

/** The SSE payload of a bus event. */
export function livePayload<K extends BusEventName>(name: K, ev: BusEvents[K]): Record<string, unknown> {
  const ts = new Date().toISOString();
  if (name === "finding") {
    const e = ev as BusEvents["finding"];
    const f = e.finding;
    return {
      ts,
      ...findingVerdict(f),
      path: f.path,
      start: f.start,
      end: f.end,
      content_hash: f.content_hash,
      value_hash: f.value_hash,
      provider: e.provider,
      request_id: e.request_id,
      transport: e.transport,
      session_id: e.session.session_id,
      client: e.session.client,
      account_id: e.session.account_id,
      model: e.session.model,
      working_directory: e.session.working_directory,
      git_branch: e.session.git_branch,
      type: "finding",
    };
  }
  if (name === "request") {
    const e = ev as BusEvents["request"];
    return { ...e, path: maskPath(e.path), type: "request" };
  }
  return { ts, ...(ev as object), type: name };
}

interface Client {
  send(event: string, data: Record<string, unknown>): void;
  close(): void;
}

export class LiveHub {
  readonly #clients = new Set<Client>();
  #unsub: (() => void)[] = [];
  #poll: ReturnType<typeof setInterval> | null = null;
  #lastFinding = 0;
  #lastMcp = 0;

  constructor(
    readonly bus: Bus,
    readonly store: Store,
    readonly opts: { heartbeatMs?: number; pollMs?: number } = {},
  ) {
    // Every proxied request emits: build the payload only when someone is watching.
    for (const name of BUS_EVENTS)
      this.#unsub.push(
        bus.on(name, (ev) => {
          if (this.#clients.size > 0) this.broadcast(name, livePayload(name, ev as never));
        }),
      );
  }

  get size(): number {
    return this.#clients.size;
  }

  broadcast(event: string, data: Record<string, unknown>): void {
    for (const c of this.#clients) c.send(event, data);
  }

  #marked = false;

  /** Start from the newest rows: only what other processes write from now on is sent. */
  #mark(): boolean {
    if (this.#marked) return true;
    try {
      this.#lastFinding = this.store.findings.maxId();
      this.#lastMcp = this.store.mcp.maxEventId();
      this.#marked = true;
    } catch {
      /* database busy: mark on the next tick rather than replay history */
    }
    return this.#marked;
  }

  #startPolling(): void {
    if (this.#poll) return;
    this.#marked = false;
    this.#mark();
    this.#poll = setInterval(() => this.pollOtherProcesses(), this.opts.pollMs ?? 1000);
    this.#poll.unref?.();
  }

  /** Send rows written by other processes since the last poll. */
  pollOtherProcesses(): void {
    if (!this.#mark()) return;
    try {
      for (const row of this.store.findings.fromOtherProcesses(this.#lastFinding, process.pid)) {
        this.#lastFinding = Math.max(this.#lastFinding, row.id as number);
        const { origin_pid: _pid, ...rest } = row;
        this.broadcast("finding", { ...rest, type: "finding" });
      }
      for (const row of this.store.mcp.eventsFromOtherProcesses(this.#lastMcp, process.pid)) {
        this.#lastMcp = Math.max(this.#lastMcp, row.id as number);
        const { data, ...rest } = row;
        this.broadcast("mcp-event", { ...(data as object), ...rest, type: "mcp-event" });
      }
    } catch {
      /* database busy: try again next tick */
    }
  }

  /** The SSE response for one client. */
  connect(signal?: AbortSignal): Response {
    const enc = new TextEncoder();
    let client: Client | null = null;
    let hb: ReturnType<typeof setInterval> | null = null;
    const cleanup = () => {
      if (hb) clearInterval(hb);
      hb = null;
      if (client) this.#clients.delete(client);
      client = null;
      if (this.#clients.size === 0 && this.#poll) {
        clearInterval(this.#poll);
        this.#poll = null;
      }
    };
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const c: Client = {
          send(event, data) {
            try {
              // A client that stopped reading is dropped rather than buffered without bound.
              if ((controller.desiredSize ?? 0) < -MAX_BACKLOG) {
                c.close();
                return;
              }
              controller.enqueue(enc.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
            } catch {
              cleanup();
            }
          },
          close() {
            try {
              controller.close();
            } catch {
              /* closed */
            }
            cleanup();
          },
        };
        client = c;
        this.#clients.add(c);
        this.#startPolling();
        controller.enqueue(enc.encode("retry: 2000\n\n"));
        const beat = () => c.send("heartbeat", { type: "heartbeat", ts: new Date().toISOString() });
        beat();
        hb = setInterval(beat, this.opts.heartbeatMs ?? 15_000);
        signal?.addEventListener("abort", () => c.close());
      },
      cancel: () => cleanup(),
    });
    return new Response(stream, {
      headers: {
        ...SECURITY_HEADERS,
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      },
    });
  }

  close(): void {
    for (const u of this.#unsub) u();
    this.#unsub = [];
    for (const c of [...this.#clients]) c.close();
    if (this.#poll) clearInterval(this.#poll);
    this.#poll = null;
  }
}

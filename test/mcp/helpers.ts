/**
 * Helpers for the `sluice mcp` tests: a temp SLUICE_HOME, the SDK client over sluice's stdio mode,
 * and a raw line client for byte-level assertions. sluice runs as users run it: `bun src/cli.ts mcp …`.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Subprocess } from "bun";
import { stringify } from "yaml";

export const REPO = resolve(import.meta.dir, "../..");
export const CLI = join(REPO, "src/cli.ts");
export const FIXTURES = join(import.meta.dir, "fixtures");
export const fixture = (name: string) => join(FIXTURES, name);

/** A fresh config dir with `config` written to config.yaml. */
export function tempHome(config: Record<string, unknown> = {}): string {
  const home = mkdtempSync(join(tmpdir(), "sluice-mcp-"));
  writeFileSync(join(home, "config.yaml"), stringify(config));
  return home;
}

/** The environment sluice runs with in tests: PATH/HOME only, plus SLUICE_HOME and extras. */
export function testEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    SLUICE_HOME: home,
    NO_COLOR: "1",
    ...extra,
  };
}

/** `sluice mcp <args>` with its standard input held open, as a client holds it (for exit codes and stderr). */
export function spawnMcp(args: string[]): Subprocess<"pipe", "pipe", "pipe"> {
  return Bun.spawn(["bun", CLI, "mcp", ...args], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: testEnv(tempHome()),
  });
}

export interface LogLine {
  level: string;
  msg: string;
  kind?: string;
  [k: string]: unknown;
}

/** Collects sluice's stderr and parses its JSON log lines. */
export class StderrLog {
  text = "";
  #ended = Promise.withResolvers<void>();
  /** Resolves when the stream ended (the process is gone and every line has been fed). */
  readonly ended = this.#ended.promise;
  end() {
    this.#ended.resolve();
  }
  #waiters: { pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];

  feed(chunk: string) {
    this.text += chunk;
    for (const w of [...this.#waiters]) {
      const hit = this.lines().find(w.pred);
      if (hit) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve(hit);
      }
    }
  }

  lines(): LogLine[] {
    return this.text.split("\n").flatMap((l) => {
      if (!l.startsWith("{")) return [];
      try {
        return [JSON.parse(l) as LogLine];
      } catch {
        return [];
      }
    });
  }

  events(kind: string): LogLine[] {
    return this.lines().filter((l) => l.kind === kind);
  }

  /** Resolves with the first log line matching `pred` (already seen or yet to come). */
  waitFor(pred: (l: LogLine) => boolean): Promise<LogLine> {
    const hit = this.lines().find(pred);
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve) => this.#waiters.push({ pred, resolve }));
  }
}

export interface SdkSession {
  client: Client;
  /** Every message the client received from sluice, as parsed by the SDK transport. */
  received: Record<string, unknown>[];
  transport: StdioClientTransport;
  log: StderrLog;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The official SDK client talking to `sluice mcp <args>` over stdio. */
export async function sdkOverSluice(
  args: string[],
  opts: { home?: string; env?: Record<string, string>; config?: Record<string, unknown> } = {},
): Promise<SdkSession> {
  const home = opts.home ?? tempHome(opts.config);
  const transport = new StdioClientTransport({
    command: "bun",
    args: [CLI, "mcp", "--format", "json", "--log-level", "info", ...args],
    env: testEnv(home, opts.env),
    stderr: "pipe",
    cwd: REPO,
  });
  const log = new StderrLog();
  transport.stderr?.on("data", (c: Buffer) => log.feed(c.toString("utf8")));
  transport.stderr?.on("end", () => log.end());
  transport.stderr?.on("close", () => log.end());
  const client = new Client({ name: "sluice-test", version: "1.0.0" });
  await client.connect(transport);
  const received: Record<string, unknown>[] = [];
  const handle = transport.onmessage!;
  transport.onmessage = (m) => {
    received.push(m as Record<string, unknown>);
    handle(m);
  };
  const close = async () => {
    await client.close();
  };
  return { client, received, transport, log, close, [Symbol.asyncDispose]: close };
}

/** Raw newline-delimited JSON-RPC over `sluice mcp <args>` (for byte-level and misbehaviour tests). */
export class RawSession {
  readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  readonly log = new StderrLog();
  readonly lines: string[] = [];
  #waiters: {
    pred: (m: Record<string, unknown>) => boolean;
    resolve: (m: Record<string, unknown>) => void;
  }[] = [];
  #id = 0;
  readonly done: Promise<void>;

  constructor(args: string[], opts: { home?: string; env?: Record<string, string>; cwd?: string } = {}) {
    const home = opts.home ?? tempHome();
    this.proc = Bun.spawn(["bun", CLI, "mcp", "--format", "json", "--log-level", "info", ...args], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: testEnv(home, opts.env),
      cwd: opts.cwd ?? REPO,
    });
    const dec = new TextDecoder();
    const proc = this.proc;
    void (async () => {
      for await (const c of proc.stderr) this.log.feed(dec.decode(c, { stream: true }));
      this.log.end();
    })();
    this.done = (async () => {
      let buf = "";
      for await (const c of proc.stdout) {
        buf += dec.decode(c, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) !== -1) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          this.lines.push(line);
          this.#check(line);
        }
      }
    })();
  }

  #check(line: string) {
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    for (const w of [...this.#waiters])
      if (w.pred(m)) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve(m);
      }
  }

  send(msg: unknown) {
    this.proc.stdin.write(typeof msg === "string" ? `${msg}\n` : `${JSON.stringify(msg)}\n`);
    this.proc.stdin.flush();
  }

  /** The first message (already received or to come) matching `pred`. */
  waitFor(pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (const l of this.lines) {
      try {
        const m = JSON.parse(l);
        if (pred(m)) return Promise.resolve(m);
      } catch {
        /* not JSON */
      }
    }
    return new Promise((resolve) => this.#waiters.push({ pred, resolve }));
  }

  async request(method: string, params?: unknown): Promise<Record<string, unknown>> {
    const id = ++this.#id;
    const p = this.waitFor((m) => m.id === id && ("result" in m || "error" in m));
    this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    return p;
  }

  async initialize(): Promise<Record<string, unknown>> {
    const r = await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw-test", version: "1" },
    });
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return r;
  }

  async close(): Promise<number> {
    try {
      this.proc.stdin.end();
    } catch {
      /* closed */
    }
    const code = await this.proc.exited;
    await this.done;
    return code;
  }

  async [Symbol.asyncDispose]() {
    if (this.proc.exitCode === null) {
      try {
        this.proc.stdin.end();
      } catch {
        /* closed */
      }
      const t = setTimeout(() => this.proc.kill("SIGKILL"), 5000);
      await this.proc.exited;
      clearTimeout(t);
    }
  }
}

/**
 * The MCP security core shared by all four modes. A transport hands it each message it receives
 * (one newline-delimited line, one HTTP body, one SSE event's data, one WebSocket frame) and gets
 * back what to do: forward the original bytes, forward a rewritten message, or drop it, plus replies
 * to send back to the sender (JSON-RPC errors for blocked requests). Messages sluice does not change
 * are forwarded as the bytes received.
 *
 * Longer than most files: one MCP session is one state (requests waiting for their answer, the tool
 * list that session binding and drift compare against, what was withheld), and every kind of message
 * reads or changes it; scanning and redaction come from the payload pipeline, the block message from
 * `policy/notice.ts`, tool-definition checks from `poisoning.ts` and `drift.ts`.
 */
import type { Config } from "../config/schema.ts";
import type { RequestHook, Verdict } from "../core/hook.ts";
import type { Action } from "../core/types.ts";
import { extractTexts, type KeyPath } from "../payload/extract.ts";
import { blockNotice, describeFindings } from "../policy/notice.ts";
import { callHook } from "../policy/pipeline.ts";
import { scanErrorFinding } from "../policy/system-finding.ts";
import { ToolInventory } from "./binding.ts";
import { type BaselineStore, baselineOf, checkDrift, formatDiff } from "./drift.ts";
import { mcpFinding, type Reporter } from "./events.ts";
import { findHidden } from "./hidden.ts";
import {
  blockedError,
  blockedResponse,
  classify,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "./jsonrpc.ts";
import { type PoisonFinding, poisonInText, scanTool } from "./poisoning.ts";
import { RequestTracker } from "./tracker.ts";

export type Forward = "original" | string | null;

export interface Outcome {
  /** "original": forward the bytes received; a string: forward this message instead; null: drop. */
  forward: Forward;
  /** Messages to send back to the sender (errors answering blocked requests). */
  replies: string[];
}

export interface CoreOptions {
  /** Stable identity of the server for drift baselines (command line or upstream URL). */
  serverId: string;
  /** The configuration in force (mcp.*, proxy.max_body_size). */
  config: () => Config;
  /**
   * The request-scanning hook (the payload pipeline's) that tool arguments, tool results and
   * resource contents go through; null disables that scanning.
   */
  hook: RequestHook | null;
  baselines: BaselineStore;
  reporter: Reporter;
  /** True while `proxy.mode` is passthrough: everything is forwarded untouched. */
  passthrough?: () => boolean;
  /** The action for poisoned tools: "block" withholds them, anything else reports them. */
  poisonAction?: () => Action;
  /** Overrides `mcp.session_binding` (the `--session-binding` flag). */
  sessionBinding?: boolean;
  /** `--accept-drift`: a changed tool becomes the new baseline without a warning or block. */
  acceptDrift?: boolean;
}

const ORIGINAL: Outcome = Object.freeze({ forward: "original", replies: [] }) as Outcome;
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * One element's fate inside a (possibly batched) message: kept, replaced by a new value, rewritten
 * as a new text (a redacted message that is not part of a batch keeps its other bytes), or dropped.
 */
type Step =
  | { kind: "same" }
  | { kind: "replace"; value: unknown }
  | { kind: "rewrite"; text: string }
  | { kind: "drop" };
const SAME: Step = { kind: "same" };

/**
 * A message as received, and where one element sits in it: the pipeline scans the received text
 * itself (never a re-serialized copy, which could fail or differ), only the element's own parts.
 */
interface Received {
  text: string;
  json: unknown;
  /** `[]` for a single message, `[i]` for the i-th element of a batch. */
  at: KeyPath;
  bytes?: Uint8Array;
}

/** What of a message goes to the pipeline: a call's arguments, a result's content. */
const ARGUMENTS: KeyPath[] = [["params", "arguments"]];
const TOOL_RESULT: KeyPath[] = [
  ["result", "content"],
  ["result", "structuredContent"],
];
const RESOURCE_CONTENTS: KeyPath[] = [["result", "contents"]];
const NO_HEADERS = new Headers();
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class McpSession {
  readonly tracker = new RequestTracker();
  readonly inventory = new ToolInventory();
  /** Tools sluice withholds this session, with why (poisoning or drift under block). */
  readonly blockedTools = new Map<string, { reason: "tool_poisoning" | "tool_drift"; message: string }>();
  clientName = "";
  serverName = "";
  protocolVersion = "";
  #lastEvicted = 0;

  constructor(readonly opts: CoreOptions) {}

  get #cfg() {
    return this.opts.config().mcp;
  }
  get #binding(): boolean {
    return this.opts.sessionBinding ?? this.#cfg.session_binding;
  }

  /** A message from the client (AI tool) to the server. Never throws: a fault forwards the original. */
  async fromClient(text: string): Promise<Outcome> {
    try {
      if (this.opts.passthrough?.()) return ORIGINAL;
      return await this.#each(text, (m, replies, msg) => this.#clientElement(m, replies, msg));
    } catch (err) {
      this.#scanError("client message", err, "mcp:client");
      return ORIGINAL;
    }
  }

  /** A message from the server to the client. Never throws: a fault forwards the original. */
  async fromServer(text: string): Promise<Outcome> {
    try {
      if (this.opts.passthrough?.()) return ORIGINAL;
      return await this.#each(text, (m, _, msg) => this.#serverElement(m, msg));
    } catch (err) {
      this.#scanError("server message", err, "mcp:server");
      return ORIGINAL;
    }
  }

  async #each(
    text: string,
    fn: (m: unknown, replies: string[], msg: Received) => Promise<Step> | Step,
  ): Promise<Outcome> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return ORIGINAL; // not JSON: not ours to judge; the peer answers with a parse error
    }
    const replies: string[] = [];
    if (!Array.isArray(parsed)) {
      const step = await fn(parsed, replies, { text, json: parsed, at: [] });
      if (step.kind === "same") return replies.length ? { forward: "original", replies } : ORIGINAL;
      if (step.kind === "rewrite") return { forward: step.text, replies };
      return { forward: step.kind === "drop" ? null : this.#write(step.value), replies };
    }
    let changed = false;
    const kept: unknown[] = [];
    const batch: Received = { text, json: parsed, at: [] };
    for (let i = 0; i < parsed.length; i++) {
      const m = parsed[i];
      const step = await fn(m, replies, { ...batch, at: [i] });
      if (step.kind === "same") kept.push(m);
      else {
        changed = true;
        if (step.kind === "replace") kept.push(step.value);
      }
    }
    if (!changed) return { forward: "original", replies };
    if (!kept.length) return { forward: null, replies };
    const parts = kept.map((m) => this.#write(m)).filter((t) => t !== null);
    return { forward: parts.length ? `[${parts.join(",")}]` : null, replies };
  }

  /**
   * A message sluice changed, as text. JSON.stringify recurses: a message nested deeper than it can
   * write (tens of thousands of levels) is never forwarded as it was; a response becomes an error
   * answering its id, anything else is dropped.
   */
  #write(m: unknown): string | null {
    try {
      return JSON.stringify(m);
    } catch (err) {
      const c = classify(m);
      this.opts.reporter.event({
        kind: "unwritable",
        severity: "high",
        message: `sluice could not write out a message it changed (${(err as Error).message}); ${c.kind === "response" ? "answered its id with an error" : "dropped it"}`,
      });
      if (c.kind !== "response") return null;
      return blockedResponse(c.msg.id, {
        reason: "unwritable",
        message:
          "sluice withheld this response: it changed it and could not write it out again (nested too deep)",
      });
    }
  }

  // ---- client → server ------------------------------------------------------------------------

  async #clientElement(m: unknown, replies: string[], msg: Received): Promise<Step> {
    const c = classify(m);
    if (c.kind !== "request") return SAME;
    const req = c.msg;
    const params = isObj(req.params) ? req.params : {};
    if (req.method === "initialize") {
      const info = isObj(params.clientInfo) ? params.clientInfo : {};
      if (typeof info.name === "string") {
        this.clientName = info.name;
        this.opts.reporter.session = {
          ...this.opts.reporter.session,
          client: info.name,
          client_name: info.name,
        };
      }
    }
    let step: Step = SAME;
    if (req.method === "tools/call") {
      const verdict = await this.#checkCall(req, params, msg);
      if (verdict.reply) {
        replies.push(verdict.reply);
        return { kind: "drop" };
      }
      step = verdict.step;
    }
    this.#track(req, params);
    return step;
  }

  #track(req: JsonRpcRequest, params: Record<string, unknown>) {
    this.tracker.track(req.id, {
      method: req.method,
      tool: typeof params.name === "string" ? params.name : undefined,
      cursor: typeof params.cursor === "string" ? params.cursor : undefined,
      uri: typeof params.uri === "string" ? params.uri.slice(0, 200) : undefined,
      sentAt: Date.now(),
    });
    if (this.tracker.evicted > this.#lastEvicted && this.tracker.evicted % 1000 === 1) {
      this.opts.reporter.event({
        kind: "tracker-evicted",
        severity: "info",
        message: `request tracker full: oldest ids evicted (${this.tracker.evicted} so far)`,
      });
    }
    this.#lastEvicted = this.tracker.evicted;
  }

  async #checkCall(
    req: JsonRpcRequest,
    params: Record<string, unknown>,
    msg: Received,
  ): Promise<{ step: Step; reply?: string }> {
    const tool = typeof params.name === "string" ? params.name : "";
    const rep = this.opts.reporter;
    const rid = `mcp:${String(req.id)}`;
    const withheld = this.blockedTools.get(tool);
    if (withheld) {
      const message = `sluice blocked tools/call ${tool}: ${withheld.message}`;
      rep.event({ kind: "blocked-call", severity: "high", message, tool, reason: withheld.reason });
      return { step: SAME, reply: blockedResponse(req.id, { reason: withheld.reason, message }) };
    }
    if (this.#binding && !this.inventory.knows(tool)) {
      const block = this.#cfg.unknown_tool_action === "block";
      const message = `${block ? "sluice blocked" : "sluice warning:"} tools/call ${tool}: the tool was not in the session's first tools/list (session binding)`;
      rep.finding(
        mcpFinding({
          rule: "mcp_unknown_tool",
          finding_type: "unknown_tool",
          severity: "high",
          action: block ? "block" : "alert",
          path: "params.name",
          preview: tool.slice(0, 60),
          description: message,
        }),
        rid,
      );
      rep.event({ kind: "unknown-tool", severity: "high", message, tool, action: block ? "block" : "warn" });
      if (block) return { step: SAME, reply: blockedResponse(req.id, { reason: "unknown_tool", message }) };
    }
    if (params.arguments === undefined) return { step: SAME };
    const verdict = await this.#inspect(msg, ARGUMENTS, rid, `tools/call ${tool} arguments`, req.method);
    if (verdict?.action === "block") {
      const reason = "sensitive_data_in_arguments";
      const notice = blockNotice(`tools/call ${tool}`, verdict.findings);
      rep.event({ kind: "blocked-call", severity: "critical", message: notice.message, tool, reason });
      return { step: SAME, reply: blockedResponse(req.id, { reason, ...notice }) };
    }
    if (verdict?.action === "redact") {
      rep.event({
        kind: "redacted",
        severity: "warning",
        message: `sluice redacted tools/call ${tool} arguments: ${describeFindings(verdict.findings)}`,
        tool,
      });
      return { step: redacted(msg, verdict) };
    }
    return { step: SAME };
  }

  /**
   * Run the parts `select` names of one element through the request-scanning hook (the payload
   * pipeline: extraction, detection, policy, redaction) and report what it found. Null when there
   * is no hook.
   */
  async #inspect(
    msg: Received,
    select: KeyPath[],
    requestId: string,
    what: string,
    method: string,
  ): Promise<Verdict | null> {
    const hook = this.opts.hook;
    if (!hook) return null;
    msg.bytes ??= encoder.encode(msg.text);
    const verdict = await callHook(hook, {
      provider: "unknown",
      method,
      path: what,
      headers: NO_HEADERS,
      body: msg.bytes,
      json: msg.json,
      select: select.map((p) => [...msg.at, ...p]),
      session: this.opts.reporter.session,
      transport: "mcp",
    });
    const rep = this.opts.reporter;
    for (const f of verdict.findings) rep.finding(f, requestId);
    if (verdict.error)
      rep.event({
        kind: "scan-error",
        severity: "critical",
        message: `MCP scan of ${what} failed, forwarded unscanned: ${verdict.error}`,
      });
    else if (verdict.skipped && verdict.scanned_bytes === 0)
      rep.event({
        kind: "scan-skipped",
        severity: "warning",
        message: `${what} not scanned: ${verdict.skipped}`,
      });
    else if (verdict.action === "alert")
      rep.event({
        kind: "findings",
        severity: "warning",
        message: `sluice alert: ${what}: ${describeFindings(verdict.findings)}`,
      });
    else if (verdict.action === "log" && verdict.findings.length > 0)
      rep.event({
        kind: "findings",
        severity: "info",
        message: `${what}: ${describeFindings(verdict.findings)}`,
      });
    return verdict;
  }

  #scanError(what: string, err: unknown, requestId: string) {
    try {
      const finding = scanErrorFinding(err, `mcp:${what}`);
      this.opts.reporter.finding(finding, requestId);
      this.opts.reporter.event({
        kind: "scan-error",
        severity: "critical",
        message: `MCP scan of ${what} failed, forwarded unscanned: ${(err as Error)?.message ?? String(err)}`,
      });
    } catch {
      /* reporting must not stop the messages either */
    }
  }

  // ---- server → client ------------------------------------------------------------------------

  async #serverElement(m: unknown, msg: Received): Promise<Step> {
    const c = classify(m);
    if (c.kind !== "response") return SAME;
    const res = c.msg;
    const entry = this.tracker.settle(res.id);
    if (!entry) {
      if (!this.#cfg.request_tracking) return SAME;
      const block = this.#cfg.unsolicited_response_action === "block";
      const message = `${block ? "sluice dropped" : "sluice warning:"} unsolicited response from the server (id ${JSON.stringify(res.id)} was never requested or already answered)`;
      this.opts.reporter.finding(
        mcpFinding({
          rule: "mcp_unsolicited_response",
          finding_type: "unsolicited_response",
          severity: "high",
          action: block ? "block" : "alert",
          path: "id",
          preview: JSON.stringify(res.id).slice(0, 40),
          description: message,
        }),
        `mcp:${String(res.id)}`,
      );
      this.opts.reporter.event({
        kind: "unsolicited-response",
        severity: "high",
        message,
        id: res.id,
        action: block ? "block" : "warn",
      });
      return block ? { kind: "drop" } : SAME;
    }
    if (!isObj(res.result)) return SAME;
    try {
      switch (entry.method) {
        case "initialize":
          return this.#onInitialize(res.result);
        case "tools/list":
          return this.#onToolsList(res, res.result);
        case "tools/call":
          return await this.#onToolResult(res, msg, entry.tool ?? "");
        case "resources/read":
          // Resource contents reach the model like tool results do.
          return await this.#scanResult(res, msg, RESOURCE_CONTENTS, `resources/read ${entry.uri ?? ""}`, "");
        case "prompts/list":
        case "resources/list":
        case "resources/templates/list":
          return this.#onCatalog(entry.method, res.result);
      }
    } catch (err) {
      this.#scanError(`${entry.method} response`, err, `mcp:${String(res.id)}`);
    }
    return SAME;
  }

  #onInitialize(result: Record<string, unknown>): Step {
    const info = isObj(result.serverInfo) ? result.serverInfo : {};
    if (typeof info.name === "string") this.serverName = info.name;
    if (typeof result.protocolVersion === "string") this.protocolVersion = result.protocolVersion;
    if (this.#cfg.scan_tool_descriptions && typeof result.instructions === "string") {
      const found = poisonInText("(server)", "instructions", result.instructions);
      for (const f of found) this.#reportPoison(f, "instructions", "alert");
    }
    return SAME;
  }

  #onToolsList(res: JsonRpcResponse, result: Record<string, unknown>): Step {
    if (!Array.isArray(result.tools)) return SAME;
    const cfg = this.#cfg;
    const poisonBlock = this.opts.poisonAction?.() === "block";
    const withhold = new Set<number>();
    result.tools.forEach((tool, i) => {
      if (!isObj(tool) || typeof tool.name !== "string") return;
      const name = tool.name;
      this.blockedTools.delete(name);
      if (cfg.scan_tool_descriptions) {
        const found = scanTool(tool);
        for (const f of found)
          this.#reportPoison(f, `tools[${name}].${f.field}`, poisonBlock ? "block" : "alert");
        if (found.length && poisonBlock) {
          withhold.add(i);
          const cats = [...new Set(found.map((f) => f.category))].join(", ");
          this.blockedTools.set(name, {
            reason: "tool_poisoning",
            message: `its definition looks poisoned (${cats})`,
          });
        }
      }
      if (cfg.detect_drift) this.#drift(tool, name, i, withhold);
    });
    if (this.#binding && !this.inventory.sealed) {
      const before = this.inventory.overflow;
      const names = result.tools.flatMap((t) => (isObj(t) && typeof t.name === "string" ? [t.name] : []));
      this.inventory.addPage(names, typeof result.nextCursor !== "string" || !result.nextCursor);
      if (this.inventory.overflow > before)
        this.opts.reporter.event({
          kind: "binding-overflow",
          severity: "warning",
          message: `session binding: inventory capped at ${this.inventory.capacity} tools; ${this.inventory.overflow} tool(s) left out`,
        });
    }
    if (!withhold.size) return SAME;
    return {
      kind: "replace",
      value: { ...res, result: { ...result, tools: result.tools.filter((_, i) => !withhold.has(i)) } },
    };
  }

  /** Prompt and resource descriptions reach the model too: report poisoning in them (never withheld). */
  #onCatalog(method: string, result: Record<string, unknown>): Step {
    if (!this.#cfg.scan_tool_descriptions) return SAME;
    const key =
      method === "prompts/list" ? "prompts" : method === "resources/list" ? "resources" : "resourceTemplates";
    const items = result[key];
    if (!Array.isArray(items)) return SAME;
    for (const item of items) {
      if (!isObj(item)) continue;
      const owner = `${key.replace(/s$/, "")} ${String(item.name ?? item.uri ?? item.uriTemplate ?? "?")}`;
      const texts: [string, unknown][] = [
        ["title", item.title],
        ["description", item.description],
      ];
      if (Array.isArray(item.arguments))
        item.arguments.forEach((a, i) => {
          if (isObj(a))
            texts.push([`arguments[${i}].description`, a.description], [`arguments[${i}].name`, a.name]);
        });
      for (const [field, text] of texts) {
        if (typeof text !== "string" || !text) continue;
        for (const f of poisonInText(owner, field, text))
          this.#reportPoison(f, `${key}[${owner}].${field}`, "alert");
      }
    }
    return SAME;
  }

  #drift(tool: Record<string, unknown>, name: string, index: number, withhold: Set<number>) {
    const { baselines, serverId, reporter } = this.opts;
    let r: ReturnType<typeof checkDrift>;
    try {
      r = checkDrift(baselines, serverId, tool);
    } catch (err) {
      this.#scanError(`drift check of ${name}`, err, `mcp:tools/list`);
      return;
    }
    if (r.status !== "changed") {
      if (r.status === "same") return;
      try {
        baselines.put(serverId, name, baselineOf(tool));
      } catch (err) {
        this.#scanError(`baseline of ${name}`, err, `mcp:tools/list`);
      }
      return;
    }
    const readable = formatDiff(r.diff);
    if (this.opts.acceptDrift) {
      baselines.put(serverId, name, r.current);
      reporter.event({
        kind: "tool-drift",
        severity: "info",
        message: `accepted new baseline of ${name}: ${readable}`,
        tool: name,
        action: "accept",
      });
      return;
    }
    const block = this.#cfg.drift_action === "block";
    const message = `${block ? "sluice blocked changed tool" : "sluice warning: tool changed since its baseline:"} ${name}: ${readable}`;
    reporter.finding(
      mcpFinding({
        rule: "mcp_tool_drift",
        finding_type: "tool_drift",
        severity: "high",
        action: block ? "block" : "alert",
        path: `tools[${name}]`,
        preview: `${r.previous.sha256.slice(0, 12)}→${r.current.sha256.slice(0, 12)}`,
        description: message,
      }),
      "mcp:tools/list",
    );
    reporter.event({
      kind: "tool-drift",
      severity: "high",
      message,
      tool: name,
      action: block ? "block" : "warn",
      previous_sha256: r.previous.sha256,
      sha256: r.current.sha256,
      diff: r.diff,
    });
    if (block) {
      withhold.add(index);
      this.blockedTools.set(name, {
        reason: "tool_drift",
        message: `its definition changed since the baseline (${readable}); review it and run with --accept-drift`,
      });
    } else baselines.put(serverId, name, r.current);
  }

  #reportPoison(f: PoisonFinding, path: string, action: Action) {
    const where =
      f.tool === "(server)"
        ? "server instructions"
        : /^(prompt|resource|resourceTemplate) /.test(f.tool)
          ? `${f.tool}, field ${f.field}`
          : `tool ${f.tool}, field ${f.field}`;
    const hidden = f.hidden ? ` (hidden with ${f.hidden.join(", ")})` : "";
    const message = `${action === "block" ? "sluice withheld poisoned tool" : "sluice warning: possible tool poisoning"}: ${where}: ${f.category} (${f.pattern})${hidden}`;
    this.opts.reporter.finding(
      mcpFinding({
        rule: `mcp_${f.category}`,
        finding_type: "tool_poisoning",
        severity: f.category === "hidden_text" ? "high" : "critical",
        action,
        path,
        preview: f.excerpt,
        description: message,
      }),
      "mcp:tools/list",
    );
    this.opts.reporter.event({
      kind: "tool-poisoning",
      severity: f.category === "hidden_text" ? "high" : "critical",
      message,
      tool: f.tool,
      field: f.field,
      category: f.category,
      pattern: f.pattern,
      excerpt: f.excerpt,
      action,
    });
  }

  /**
   * Invisible tag characters in a tool result are instructions aimed at the model that the user cannot
   * see (indirect prompt injection). Reported, not blocked. (ANSI and zero-width characters are common
   * in legitimate output, so results are checked for tag characters only.)
   */
  #hiddenInResult(res: JsonRpcResponse, tool: string, requestId: string) {
    if (!this.#cfg.scan_tool_descriptions) return;
    const strings = extractTexts(res, "unknown", [["result", "content"]]);
    for (let i = 0; i < strings.texts.length; i++) {
      const tags = findHidden(strings.texts[i]!).find((h) => h.kind === "tag_characters");
      if (!tags) continue;
      const path = strings.path(i);
      const decoded = tags.decoded ?? "";
      const message = `sluice warning: tools/call ${tool} result hides text in invisible tag characters at ${path}: "${decoded.slice(0, 60)}${decoded.length > 60 ? "…" : ""}"`;
      this.opts.reporter.finding(
        mcpFinding({
          rule: "mcp_hidden_text",
          finding_type: "hidden_text_in_result",
          severity: "high",
          action: "alert",
          path,
          preview: decoded.slice(0, 40),
          description: message,
        }),
        requestId,
      );
      this.opts.reporter.event({
        kind: "tool-poisoning",
        severity: "high",
        message,
        tool,
        field: path,
        category: "hidden_text",
        pattern: "tag_characters",
        excerpt: decoded.slice(0, 60),
        action: "alert",
      });
    }
  }

  #onToolResult(res: JsonRpcResponse, msg: Received, tool: string): Promise<Step> {
    this.#hiddenInResult(res, tool, `mcp:${String(res.id)}`);
    return this.#scanResult(res, msg, TOOL_RESULT, `tools/call ${tool}`, tool);
  }

  /**
   * Run the text of a result that goes to the model (a tool result, a resource's contents) through
   * the pipeline: block replaces it with a JSON-RPC error, redact rewrites it.
   */
  async #scanResult(
    res: JsonRpcResponse,
    msg: Received,
    select: KeyPath[],
    what: string,
    tool: string,
  ): Promise<Step> {
    const verdict = await this.#inspect(msg, select, `mcp:${String(res.id)}`, `${what} result`, "result");
    if (verdict?.action === "block") {
      const reason = "sensitive_data_in_result";
      const notice = blockNotice(`the result of ${what}`, verdict.findings);
      this.opts.reporter.event({
        kind: "blocked-result",
        severity: "critical",
        message: notice.message,
        tool,
      });
      return { kind: "replace", value: blockedError(res.id as JsonRpcId, { reason, ...notice }) };
    }
    if (verdict?.action === "redact") {
      this.opts.reporter.event({
        kind: "redacted",
        severity: "warning",
        message: `sluice redacted the result of ${what}: ${describeFindings(verdict.findings)}`,
        tool,
      });
      return redacted(msg, verdict);
    }
    return SAME;
  }
}

/** The step of an element the pipeline redacted: its verdict's body is the whole message, redacted. */
function redacted(msg: Received, verdict: Verdict): Step {
  const text = decoder.decode(verdict.body);
  if (msg.at.length === 0) return { kind: "rewrite", text };
  return { kind: "replace", value: (JSON.parse(text) as unknown[])[msg.at[0] as number] };
}

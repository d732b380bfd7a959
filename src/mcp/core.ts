/**
 * The MCP security core shared by all four modes. A transport hands it each message it receives
 * (one newline-delimited line, one HTTP body, one SSE event's data, one WebSocket frame) and gets
 * back what to do: forward the original bytes, forward a rewritten message, or drop it, plus replies
 * to send back to the sender (JSON-RPC errors for blocked requests). Messages sluice does not change
 * are forwarded as the bytes received.
 */
import type { Config } from "../config/schema.ts";
import type { Finding } from "../core/types.ts";
import { ACTION_RANK, type Action, strongest } from "../core/types.ts";
import { ToolInventory } from "./binding.ts";
import { type BaselineStore, baselineOf, checkDrift, formatDiff } from "./drift.ts";
import { mcpFinding, type Reporter } from "./events.ts";
import { findHidden } from "./hidden.ts";
import {
  type BlockReason,
  blockedError,
  blockedResponse,
  classify,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "./jsonrpc.ts";
import { type PoisonFinding, scanText as scanPoisonText, scanTool } from "./poisoning.ts";
import { RequestTracker } from "./tracker.ts";

export type Forward = "original" | string | null;

export interface Outcome {
  /** "original": forward the bytes received; a string: forward this message instead; null: drop. */
  forward: Forward;
  /** Messages to send back to the sender (errors answering blocked requests). */
  replies: string[];
}

/** Scans text with the detection engine (src/policy/scanner.ts `scanText`). */
export type TextScanner = (text: string, path: string) => Finding[];

export interface CoreOptions {
  /** Stable identity of the server for drift baselines (command line or upstream URL). */
  serverId: string;
  /** The configuration in force (mcp.*, proxy.max_body_size). */
  config: () => Config;
  /** The detection engine; null disables argument/result scanning. */
  scan: TextScanner | null;
  baselines: BaselineStore;
  reporter: Reporter;
  /** True while `proxy.mode` is passthrough: everything is relayed untouched. */
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
const seg = (k: string) => (/^[A-Za-z_$][\w$-]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`);

/** One element's fate inside a (possibly batched) message. */
type Step = { kind: "same" } | { kind: "replace"; value: unknown } | { kind: "drop" };
const SAME: Step = { kind: "same" };

interface Leaf {
  path: string;
  text: string;
  /** Replace the string in place; null for a subtree below MAX_DEPTH, scanned whole as JSON text. */
  set: ((s: string) => void) | null;
}

const MAX_DEPTH = 64;

/**
 * Every string inside `v`, with a setter, so that a copy can be redacted in place. A subtree deeper
 * than MAX_DEPTH becomes one leaf holding its JSON text: still scanned, but it cannot be redacted.
 */
function leaves(v: unknown, path: string, out: Leaf[] = [], depth = 0): Leaf[] {
  if (depth > MAX_DEPTH) {
    if (v !== null && typeof v === "object") out.push({ path, text: JSON.stringify(v), set: null });
    return out;
  }
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      if (typeof x === "string") out.push({ path: `${path}[${i}]`, text: x, set: (s) => (v[i] = s) });
      else leaves(x, `${path}[${i}]`, out, depth + 1);
    });
  } else if (isObj(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (typeof x === "string") out.push({ path: `${path}${seg(k)}`, text: x, set: (s) => (v[k] = s) });
      else leaves(x, `${path}${seg(k)}`, out, depth + 1);
    }
  }
  return out;
}

/** Replace each redacted finding's range with `[REDACTED:<type>]`. */
export function redactText(text: string, findings: Finding[]): string {
  const spans = findings
    .filter((f) => f.action === "redact" || f.action === "block")
    .map((f) => ({ start: f.start, end: f.end, type: f.finding_type }))
    .filter((s) => s.end > s.start && s.start >= 0 && s.end <= text.length)
    .sort((a, b) => a.start - b.start);
  let out = "";
  let at = 0;
  for (const s of spans) {
    if (s.start < at) continue;
    out += `${text.slice(at, s.start)}[REDACTED:${s.type}]`;
    at = s.end;
  }
  return out + text.slice(at);
}

function describeFindings(findings: Finding[]): string {
  const uniq = new Map<string, Finding>();
  for (const f of findings) uniq.set(`${f.finding_type}|${f.path}|${f.rule}`, f);
  return [...uniq.values()]
    .slice(0, 5)
    .map((f) => `${f.finding_type} in ${f.path} (rule ${f.rule})`)
    .join(", ");
}

/** Why a message carrying sensitive data was blocked: the message names the blocking findings, data lists all. */
function sensitiveData(reason: string, subject: string, findings: Finding[]): BlockReason {
  return {
    reason,
    message: `sluice blocked ${subject}: ${describeFindings(findings.filter((f) => f.action === "block"))}`,
    findings: findings.map((f) => ({
      type: f.finding_type,
      rule: f.rule,
      path: f.path,
      severity: f.severity,
    })),
  };
}

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
      return await this.#each(text, (m, replies) => this.#clientElement(m, replies));
    } catch (err) {
      this.#scanError("client message", err, "mcp:client");
      return ORIGINAL;
    }
  }

  /** A message from the server to the client. Never throws: a fault forwards the original. */
  async fromServer(text: string): Promise<Outcome> {
    try {
      if (this.opts.passthrough?.()) return ORIGINAL;
      return await this.#each(text, (m) => this.#serverElement(m));
    } catch (err) {
      this.#scanError("server message", err, "mcp:server");
      return ORIGINAL;
    }
  }

  async #each(text: string, fn: (m: unknown, replies: string[]) => Promise<Step> | Step): Promise<Outcome> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return ORIGINAL; // not JSON: not ours to judge; the peer answers with a parse error
    }
    const replies: string[] = [];
    if (!Array.isArray(parsed)) {
      const step = await fn(parsed, replies);
      if (step.kind === "same") return replies.length ? { forward: "original", replies } : ORIGINAL;
      return { forward: step.kind === "drop" ? null : JSON.stringify(step.value), replies };
    }
    let changed = false;
    const kept: unknown[] = [];
    for (const m of parsed) {
      const step = await fn(m, replies);
      if (step.kind === "same") kept.push(m);
      else {
        changed = true;
        if (step.kind === "replace") kept.push(step.value);
      }
    }
    if (!changed) return { forward: "original", replies };
    return { forward: kept.length ? JSON.stringify(kept) : null, replies };
  }

  // ---- client → server ------------------------------------------------------------------------

  async #clientElement(m: unknown, replies: string[]): Promise<Step> {
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
      const verdict = await this.#checkCall(req, params);
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
    if (!this.opts.scan || params.arguments === undefined) return { step: SAME };
    const scanned = this.#scanLeaves(
      params.arguments,
      "params.arguments",
      rid,
      `tools/call ${tool} arguments`,
    );
    if (!scanned) return { step: SAME };
    const { action, findings } = scanned;
    if (action === "block") {
      const why = sensitiveData("sensitive_data_in_arguments", `tools/call ${tool}`, findings);
      rep.event({
        kind: "blocked-call",
        severity: "critical",
        message: why.message,
        tool,
        reason: why.reason,
      });
      return { step: SAME, reply: blockedResponse(req.id, why) };
    }
    if (action === "redact") {
      const copy = structuredClone(req) as JsonRpcRequest & { params: Record<string, unknown> };
      this.#redactLeaves(copy.params.arguments, "params.arguments", findings);
      rep.event({
        kind: "redacted",
        severity: "warning",
        message: `sluice redacted tools/call ${tool} arguments: ${describeFindings(findings)}`,
        tool,
      });
      return { step: { kind: "replace", value: copy } };
    }
    return { step: SAME };
  }

  /**
   * Run the detection engine over every string under `value`. Reports findings; returns the strongest
   * action, or null when nothing was found or scanning failed (fail open: `scan_error` recorded).
   */
  #scanLeaves(
    value: unknown,
    base: string,
    requestId: string,
    what: string,
  ): { action: Action; findings: Finding[] } | null {
    const rep = this.opts.reporter;
    try {
      const ls = leaves(value, base);
      let total = 0;
      for (const l of ls) total += l.text.length;
      const limit = this.opts.config().proxy.max_body_size;
      if (total > limit) {
        rep.event({
          kind: "scan-skipped",
          severity: "warning",
          message: `${what} not scanned: ${total} characters is more than proxy.max_body_size (${limit})`,
        });
        return null;
      }
      const findings: Finding[] = [];
      let opaque = false; // a finding in a subtree that cannot be redacted in place
      for (const l of ls) {
        if (!l.text.length) continue;
        const found = this.opts.scan!(l.text, l.path);
        if (found.length && !l.set) opaque = true;
        findings.push(...found);
      }
      if (!findings.length) return null;
      let action: Action = "pass";
      for (const f of findings) action = strongest(action, f.action);
      if (action === "redact" && opaque) action = "block";
      for (const f of findings) rep.finding(f, requestId);
      if (ACTION_RANK[action] >= ACTION_RANK.alert && action !== "block" && action !== "redact")
        rep.event({
          kind: "findings",
          severity: "warning",
          message: `sluice alert: ${what}: ${describeFindings(findings)}`,
        });
      else if (action === "log")
        rep.event({ kind: "findings", severity: "info", message: `${what}: ${describeFindings(findings)}` });
      return { action, findings };
    } catch (err) {
      this.#scanError(what, err, requestId);
      return null;
    }
  }

  #redactLeaves(value: unknown, base: string, findings: Finding[]) {
    const byPath = new Map<string, Finding[]>();
    for (const f of findings) byPath.set(f.path, [...(byPath.get(f.path) ?? []), f]);
    for (const l of leaves(value, base)) {
      const fs = byPath.get(l.path);
      if (fs && l.set) l.set(redactText(l.text, fs));
    }
  }

  #scanError(what: string, err: unknown, requestId: string) {
    try {
      this.#reportScanError(what, err, requestId);
    } catch {
      /* reporting must not break the relay either */
    }
  }

  #reportScanError(what: string, err: unknown, requestId: string) {
    const message = `MCP scan of ${what} failed, forwarded unscanned: ${(err as Error)?.message ?? String(err)}`;
    this.opts.reporter.finding(
      mcpFinding({
        rule: "scan_error",
        finding_type: "scan_error",
        severity: "critical",
        action: "pass",
        path: what,
        preview: "",
        description: message,
        detector: "custom",
      }),
      requestId,
    );
    this.opts.reporter.event({ kind: "scan-error", severity: "critical", message });
  }

  // ---- server → client ------------------------------------------------------------------------

  async #serverElement(m: unknown): Promise<Step> {
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
          return this.#onToolResult(res, res.result, entry.tool ?? "");
        case "resources/read":
          // Resource contents reach the model like tool results do.
          return this.#scanResult(res, res.result, ["contents"], `resources/read ${entry.uri ?? ""}`, "");
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
      const found = scanPoisonText("(server)", "instructions", result.instructions);
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
        for (const f of scanPoisonText(owner, field, text))
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
  #hiddenInResult(result: Record<string, unknown>, tool: string, requestId: string) {
    if (!this.#cfg.scan_tool_descriptions) return;
    for (const l of leaves(result.content, "result.content")) {
      const tags = findHidden(l.text).find((h) => h.kind === "tag_characters");
      if (!tags) continue;
      const decoded = tags.decoded ?? "";
      const message = `sluice warning: tools/call ${tool} result hides text in invisible tag characters at ${l.path}: "${decoded.slice(0, 60)}${decoded.length > 60 ? "…" : ""}"`;
      this.opts.reporter.finding(
        mcpFinding({
          rule: "mcp_hidden_text",
          finding_type: "hidden_text_in_result",
          severity: "high",
          action: "alert",
          path: l.path,
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
        field: l.path,
        category: "hidden_text",
        pattern: "tag_characters",
        excerpt: decoded.slice(0, 60),
        action: "alert",
      });
    }
  }

  #onToolResult(res: JsonRpcResponse, result: Record<string, unknown>, tool: string): Step {
    this.#hiddenInResult(result, tool, `mcp:${String(res.id)}`);
    return this.#scanResult(res, result, ["content", "structuredContent"], `tools/call ${tool}`, tool);
  }

  /**
   * Run the detection engine over the text of a result that goes to the model (a tool result, a
   * resource's contents): block replaces it with a JSON-RPC error, redact rewrites it.
   */
  #scanResult(
    res: JsonRpcResponse,
    result: Record<string, unknown>,
    keys: string[],
    what: string,
    tool: string,
  ): Step {
    if (!this.opts.scan) return SAME;
    const pick = (r: Record<string, unknown>) => Object.fromEntries(keys.map((k) => [k, r[k]]));
    const scanned = this.#scanLeaves(pick(result), "result", `mcp:${String(res.id)}`, `${what} result`);
    if (!scanned) return SAME;
    const { action, findings } = scanned;
    if (action === "block") {
      const why = sensitiveData("sensitive_data_in_result", `the result of ${what}`, findings);
      this.opts.reporter.event({ kind: "blocked-result", severity: "critical", message: why.message, tool });
      return { kind: "replace", value: blockedError(res.id as JsonRpcId, why) };
    }
    if (action === "redact") {
      const copy = structuredClone(res) as JsonRpcResponse & { result: Record<string, unknown> };
      // The picked object shares its arrays and objects with the copy, so redacting it edits the copy.
      this.#redactLeaves(pick(copy.result), "result", findings);
      this.opts.reporter.event({
        kind: "redacted",
        severity: "warning",
        message: `sluice redacted the result of ${what}: ${describeFindings(findings)}`,
        tool,
      });
      return { kind: "replace", value: copy };
    }
    return SAME;
  }
}

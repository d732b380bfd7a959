/**
 * The notification channels of a running sluice, from both places they come from: the config file
 * (`notifications.channels`, read-only here except the enabled switch) and the dashboard API (full
 * create, change, delete; stored with their secret fields sealed). It keeps the dispatcher's channel
 * set equal to the two, and sends a test message straight to a channel so the caller sees the
 * receiver's answer.
 */
import type { Bus } from "../core/bus.ts";
import type { Logger } from "../core/log.ts";
import type { NotifyChannelRow, NotifyChannelsRepo } from "../store/notify-channels.ts";
import {
  type ChannelConfig,
  type ChannelType,
  channelSchema,
  maskSecret,
  SECRET_FIELDS,
} from "./channel-schema.ts";
import { dispatchChannel, senderFor } from "./channels.ts";
import type { DeliveryOptions, DeliveryStatus } from "./delivery.ts";
import { createDispatcher, type Dispatcher } from "./dispatcher.ts";
import type { Delivery } from "./payloads.ts";
import type { SecretBox } from "./secret-box.ts";

export type ChannelSource = "config" | "api";

export interface ChannelEntry {
  config: ChannelConfig;
  source: ChannelSource;
  /** Set when a stored channel cannot be used (its secrets do not open with this notify.key). */
  error?: string;
}

/** A refused change: the HTTP status, a stable code, and a message naming the field at fault. */
export class ChannelError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface TestResult {
  ok: boolean;
  /** The receiver's status and the start of its answer. */
  answer?: string;
  error?: string;
}

export interface NotificationsOptions {
  bus: Bus;
  log: Pick<Logger, "warn">;
  dashboardUrl: string;
  /** The channels of the config file in force. */
  configChannels: () => ChannelConfig[];
  repo: NotifyChannelsRepo;
  /** Opened on first use, so an installation without API channels never writes a key file. */
  box: () => SecretBox;
  delivery?: Partial<DeliveryOptions>;
  testTimeoutMs?: number;
}

const objectSchemas = new Map(channelSchema.options.map((o) => [o.shape.type.value, o]));

/** The fields a channel of `type` may have. */
export function channelFields(type: ChannelType): string[] {
  return Object.keys(objectSchemas.get(type)!.shape);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Validate a whole channel; the error names the first bad field. */
function validate(input: Record<string, unknown>): ChannelConfig {
  const type = input.type;
  if (typeof type !== "string" || !objectSchemas.has(type as ChannelType))
    throw new ChannelError(
      400,
      "invalid_channel",
      `type: must be one of ${[...objectSchemas.keys()].map((t) => JSON.stringify(t)).join(", ")}`,
    );
  const known = new Set(channelFields(type as ChannelType));
  const unknown = Object.keys(input).filter((k) => !known.has(k));
  if (unknown.length)
    throw new ChannelError(
      400,
      "unknown_field",
      `${unknown.join(", ")}: not a field of a ${type} channel (fields: ${[...known].join(", ")})`,
    );
  const res = channelSchema.safeParse(input);
  if (res.success) return res.data;
  const issue = res.error.issues[0]!;
  const field = issue.path.join(".") || "(body)";
  throw new ChannelError(400, "invalid_channel", `${field}: ${issue.message}`);
}

function testDelivery(name: string, dashboardUrl: string): Delivery {
  return {
    suppressed: 0,
    event: {
      type: "finding",
      severity: "info",
      title: `sluice test message for channel ${name}`,
      action: "test",
      where: { client: "sluice", session_id: "", working_directory: null, path: null },
      rule: null,
      preview: null,
      dedup_key: `test:${name}`,
      link: `${dashboardUrl}/#/notifications`,
      ts: new Date().toISOString(),
    },
  };
}

export class Notifications {
  readonly #o: NotificationsOptions;
  readonly #dispatcher: Dispatcher;

  constructor(o: NotificationsOptions) {
    this.#o = o;
    this.#dispatcher = createDispatcher(o.bus, o.dashboardUrl, { delivery: o.delivery, log: o.log });
    this.refresh();
  }

  /** Config-file channels first (with their switch from the API), then the API's, by name. */
  channels(): ChannelEntry[] {
    const toggles = this.#o.repo.toggles();
    const fromConfig = this.#o.configChannels().map(
      (c): ChannelEntry => ({
        config: toggles.has(c.name) ? { ...c, enabled: toggles.get(c.name)! } : c,
        source: "config",
      }),
    );
    const taken = new Set(fromConfig.map((e) => e.config.name));
    const fromApi = this.#o.repo.list().map((r): ChannelEntry => {
      const e = this.#open(r);
      // A channel added to the config file later under the same name wins; this one waits, shown.
      return taken.has(r.name) && !e.error
        ? { ...e, error: "the config file has a channel of this name, which is used instead" }
        : e;
    });
    return [...fromConfig, ...fromApi];
  }

  get(name: string): ChannelEntry | null {
    return this.channels().find((e) => e.config.name === name) ?? null;
  }

  status(name: string): DeliveryStatus | null {
    return this.#dispatcher.status(name);
  }

  /** Make the dispatcher send to the channels in force (after a config reload or an API change). */
  refresh(): void {
    this.#dispatcher.setChannels(
      this.channels()
        .filter((e) => !e.error)
        .map((e) => dispatchChannel(e.config)),
    );
  }

  create(input: unknown): ChannelEntry {
    if (!isObject(input)) throw new ChannelError(400, "invalid_request", "the body must be a JSON object");
    const config = validate(input);
    if (this.get(config.name))
      throw new ChannelError(409, "name_taken", `name: a channel named ${config.name} exists already`);
    this.#o.repo.insert(this.#seal(config));
    this.refresh();
    return { config, source: "api" };
  }

  /**
   * Change some fields. A secret field left out, or sent back as the masked value the API showed,
   * keeps its stored value, so a form can resend what it was given.
   */
  update(name: string, patch: unknown): ChannelEntry {
    if (!isObject(patch)) throw new ChannelError(400, "invalid_request", "the body must be a JSON object");
    const current = this.#existing(name);
    if (current.source === "config") {
      const others = Object.keys(patch).filter((k) => k !== "enabled");
      if (others.length)
        throw new ChannelError(
          409,
          "read_only",
          `${others.join(", ")}: channel ${name} comes from the config file; only enabled can be changed here`,
        );
      return this.setEnabled(name, patch.enabled);
    }
    if ("name" in patch && patch.name !== name)
      throw new ChannelError(400, "invalid_channel", "name: a channel cannot be renamed; create a new one");
    if ("type" in patch && patch.type !== current.config.type)
      throw new ChannelError(400, "invalid_channel", "type: a channel's type cannot be changed");
    const merged: Record<string, unknown> = { ...current.config, ...patch };
    const secrets = SECRET_FIELDS[current.config.type];
    for (const f of secrets) {
      const old = (current.config as Record<string, unknown>)[f];
      const sent = patch[f];
      if (sent === undefined || (typeof old === "string" && old && sent === maskSecret(old))) merged[f] = old;
    }
    if (current.error && secrets.some((f) => merged[f] === ""))
      throw new ChannelError(
        400,
        "invalid_channel",
        `${secrets.join(", ")}: the stored secrets cannot be opened with notify.key; send them again`,
      );
    const config = validate(merged);
    this.#o.repo.update(this.#seal(config));
    this.refresh();
    return { config, source: "api" };
  }

  remove(name: string): void {
    if (this.#o.repo.delete(name)) {
      this.refresh();
      return;
    }
    const current = this.#existing(name);
    if (current.source === "config")
      throw new ChannelError(
        409,
        "read_only",
        `channel ${name} comes from the config file; remove it there (it can be disabled here)`,
      );
  }

  setEnabled(name: string, enabled: unknown): ChannelEntry {
    if (typeof enabled !== "boolean")
      throw new ChannelError(400, "invalid_channel", "enabled: must be a boolean");
    const current = this.#existing(name);
    if (current.source === "config") this.#o.repo.setToggle(name, enabled);
    else {
      if (current.error) throw new ChannelError(409, "unusable", `channel ${name}: ${current.error}`);
      this.#o.repo.update(this.#seal({ ...current.config, enabled }));
    }
    this.refresh();
    return this.get(name)!;
  }

  /** Send a test message now, outside the queue, and return what the receiver answered. */
  async test(name: string): Promise<TestResult> {
    const current = this.#existing(name);
    if (current.error) return { ok: false, error: current.error };
    const c = current.config;
    try {
      const signal = AbortSignal.timeout(this.#o.testTimeoutMs ?? 10_000);
      const answer = await senderFor(c)(testDelivery(name, this.#o.dashboardUrl), signal);
      return { ok: true, answer };
    } catch (e) {
      const error = (e as Error).message;
      this.#o.log.warn("notification delivery failed", {
        channel: name,
        channel_type: c.type,
        event: "test",
        attempt: "1/1",
        error,
        dropped: true,
      });
      return { ok: false, error };
    }
  }

  stop(): void {
    this.#dispatcher.stop();
  }

  #existing(name: string): ChannelEntry {
    const e = this.get(name);
    if (!e) throw new ChannelError(404, "not_found", `no notification channel named ${name}`);
    return e;
  }

  #seal(c: ChannelConfig): Omit<NotifyChannelRow, "created_at" | "updated_at"> {
    const settings: Record<string, unknown> = { ...c };
    const sealed: Record<string, string> = {};
    const box = this.#o.box();
    for (const f of SECRET_FIELDS[c.type]) {
      const v = settings[f];
      delete settings[f];
      if (typeof v === "string") sealed[f] = box.seal(v, c.name);
    }
    return { name: c.name, type: c.type, settings, sealed };
  }

  #open(r: NotifyChannelRow): ChannelEntry {
    const out: Record<string, unknown> = { ...r.settings, name: r.name, type: r.type };
    try {
      const box = this.#o.box();
      for (const [f, v] of Object.entries(r.sealed)) out[f] = box.open(v, r.name);
      return { config: out as ChannelConfig, source: "api" };
    } catch {
      for (const f of SECRET_FIELDS[r.type as ChannelType] ?? []) out[f] = "";
      return {
        config: out as ChannelConfig,
        source: "api",
        error: "its secrets cannot be opened with this notify.key (was the key file replaced?)",
      };
    }
  }
}

/**
 * The notification dispatcher: subscribes to the event bus, turns events into `NotifyEvent`s, and for
 * each enabled channel that wants the event (its `events`, its `min_severity`) passes it through the
 * channel's cooldown and into the channel's delivery queue. Listeners only enqueue: nothing here
 * runs on the request path. A timer (on the injected scheduler) sends the cooldown summaries.
 */
import type { Bus } from "../core/bus.ts";
import type { Logger } from "../core/log.ts";
import type { Severity } from "../core/types.ts";
import {
  type DeliveryOptions,
  type DeliveryQueue,
  type DeliveryStatus,
  deliveryQueue,
  realScheduler,
  type Scheduler,
} from "./delivery.ts";
import {
  fromFinding,
  fromMcp,
  fromModeChange,
  fromRequest,
  type NotifyEvent,
  type NotifyEventType,
  severityRank,
} from "./events.ts";
import type { Delivery } from "./payloads.ts";
import { type Throttle, throttle } from "./throttle.ts";

export interface DispatchChannel {
  name: string;
  /** The channel type, for the log line of a failed delivery. */
  type: string;
  enabled: boolean;
  events: NotifyEventType[];
  min_severity: Severity;
  cooldown_seconds: number;
  /** Builds and performs one send; resolves with the receiver's answer, throws on refusal. */
  send: (d: Delivery, signal: AbortSignal) => Promise<string>;
}

export interface Dispatcher {
  /** Replace the channel set (config reload, API change); queues of kept channels stay. */
  setChannels(channels: DispatchChannel[]): void;
  status(name: string): DeliveryStatus | null;
  /** Send the cooldown summaries that are due (also run by the timer). */
  flush(): void;
  stop(): void;
}

const FLUSH_EVERY_MS = 5_000;

interface Live {
  channel: DispatchChannel;
  throttle: Throttle<NotifyEvent>;
  queue: DeliveryQueue;
}

export function createDispatcher(
  bus: Bus,
  dashboardUrl: string,
  options: {
    scheduler?: Scheduler;
    delivery?: Partial<DeliveryOptions>;
    /** Hears one warning per failed delivery attempt. */
    log?: Pick<Logger, "warn">;
  } = {},
): Dispatcher {
  const scheduler = options.scheduler ?? realScheduler;
  const live = new Map<string, Live>();
  const now = () => new Date(scheduler.now()).toISOString();

  // One line per failed attempt: channel, type, event, attempt and the error (which names the
  // receiver's status, never its URL); secrets and raw values are not in any of them.
  const enqueue = (l: Live, d: Delivery) => {
    const c = l.channel;
    l.queue.enqueue(
      (signal) => c.send(d, signal),
      (f) =>
        options.log?.warn("notification delivery failed", {
          channel: c.name,
          channel_type: c.type,
          event: d.event.type,
          attempt: `${f.attempt}/${f.attempts}`,
          error: f.error,
          dropped: f.dropped,
        }),
    );
  };

  const route = (event: NotifyEvent | null) => {
    if (!event) return;
    for (const l of live.values()) {
      const c = l.channel;
      if (!c.enabled || !c.events.includes(event.type)) continue;
      if (event.type === "finding" && severityRank(event.severity) < severityRank(c.min_severity)) continue;
      const release = l.throttle.offer(event.dedup_key, event);
      if (release) enqueue(l, release);
    }
  };

  const flush = () => {
    for (const l of live.values()) for (const r of l.throttle.flush()) enqueue(l, r);
  };

  const offs = [
    bus.on("finding", (e) => route(fromFinding(e, dashboardUrl, now()))),
    bus.on("request", (e) => route(fromRequest(e, dashboardUrl))),
    bus.on("mode-changed", (e) => route(fromModeChange(e, dashboardUrl, now()))),
    bus.on("mcp-event", (e) => route(fromMcp(e, dashboardUrl, now()))),
  ];

  let stopped = false;
  const tick = () => {
    if (stopped) return;
    flush();
    scheduler.after(FLUSH_EVERY_MS, tick);
  };
  scheduler.after(FLUSH_EVERY_MS, tick);

  return {
    setChannels(channels) {
      const next = new Map<string, Live>();
      for (const c of channels) {
        const old = live.get(c.name);
        const sameCooldown = old && old.channel.cooldown_seconds === c.cooldown_seconds;
        next.set(c.name, {
          channel: c,
          throttle: sameCooldown ? old.throttle : throttle(c.cooldown_seconds * 1000, scheduler),
          queue: old?.queue ?? deliveryQueue(options.delivery, scheduler),
        });
      }
      live.clear();
      for (const [k, v] of next) live.set(k, v);
    },
    status: (name) => live.get(name)?.queue.status() ?? null,
    flush,
    stop() {
      stopped = true;
      for (const off of offs) off();
    },
  };
}

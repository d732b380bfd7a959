/**
 * `/api/v1/notifications/*`: the channel types with their fields; the channels (config file and
 * API) with secrets masked and their dispatch status; create, change, delete and test; batch
 * enable, disable and delete. Channels from the config file are read-only except `enabled` and test.
 * The Guard (security.ts) checks Host, Origin and the CSRF token of every state-changing call.
 */
import type { Elysia } from "elysia";
import { CHANNEL_TYPES, maskedChannel, SECRET_FIELDS } from "../../notify/channel-schema.ts";
import { type ChannelEntry, ChannelError, channelFields, type Notifications } from "../../notify/service.ts";
import type { Ctx } from "../context.ts";
import { ApiError, badRequest, objectBody } from "../http.ts";

const BATCH_ACTIONS = ["enable", "disable", "delete"] as const;
const MAX_BATCH = 500;

/** Run `fn`, turning a refused change into the API's error shape. */
function apiCall<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ChannelError) throw new ApiError(e.status, e.code, e.message);
    throw e;
  }
}

export function notificationRoutes(app: Elysia, ctx: Ctx): void {
  const { rt } = ctx;
  const svc = (): Notifications => {
    const n = rt.notifications();
    if (!n) throw new ApiError(503 as 500, "starting", "notifications are starting; try again");
    return n;
  };
  const view = (e: ChannelEntry) => ({
    ...maskedChannel(e.config),
    source: e.source,
    read_only: e.source === "config",
    error: e.error ?? null,
    status: svc().status(e.config.name),
  });

  app.get("/api/v1/notifications/types", () => ({
    types: CHANNEL_TYPES.map((type) => ({
      type,
      fields: channelFields(type),
      secret_fields: SECRET_FIELDS[type],
    })),
    count: svc().channels().length,
    limit: null,
  }));

  app.get("/api/v1/notifications", () => ({ channels: svc().channels().map(view) }));

  app.get("/api/v1/notifications/:name", ({ params }) => {
    const e = svc().get(params.name);
    if (!e) throw new ApiError(404, "not_found", `no notification channel named ${params.name}`);
    return view(e);
  });

  app.post("/api/v1/notifications", ({ body, set }) => {
    const e = apiCall(() => svc().create(objectBody(body)));
    set.status = 201;
    return view(e);
  });

  app.put("/api/v1/notifications/:name", ({ params, body }) =>
    view(apiCall(() => svc().update(params.name, objectBody(body)))),
  );

  app.delete("/api/v1/notifications/:name", ({ params }) => {
    apiCall(() => svc().remove(params.name));
    return { ok: true, deleted: params.name };
  });

  app.post("/api/v1/notifications/:name/test", async ({ params }) => {
    const n = svc();
    if (!n.get(params.name))
      throw new ApiError(404, "not_found", `no notification channel named ${params.name}`);
    return { channel: params.name, ...(await n.test(params.name)) };
  });

  app.post("/api/v1/notifications/batch", ({ body }) => {
    const raw = objectBody(body);
    const action = raw.action;
    if (!(BATCH_ACTIONS as readonly unknown[]).includes(action))
      throw badRequest(`action: must be one of ${BATCH_ACTIONS.map((a) => JSON.stringify(a)).join(", ")}`);
    const names = raw.names;
    if (!Array.isArray(names) || names.length === 0 || names.some((n) => typeof n !== "string"))
      throw badRequest("names: must be a non-empty array of channel names");
    if (names.length > MAX_BATCH) throw badRequest(`names: at most ${MAX_BATCH} at once`);
    const n = svc();
    const results = (names as string[]).map((name) => {
      try {
        if (action === "delete") n.remove(name);
        else n.setEnabled(name, action === "enable");
        return { name, ok: true };
      } catch (e) {
        if (!(e instanceof ChannelError)) throw e;
        return { name, ok: false, error: { code: e.code, message: e.message } };
      }
    });
    return { action, results, ok: results.every((r) => r.ok) };
  });
}

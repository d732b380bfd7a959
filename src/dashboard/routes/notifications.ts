/**
 * `/api/v1/notifications/*`, the read side: the channel types with their fields, and the channels
 * with secrets masked and their dispatch status. Channels here come from the config file.
 */
import type { Elysia } from "elysia";
import { CHANNEL_TYPES, maskedChannel, SECRET_FIELDS } from "../../notify/channel-schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../http.ts";

export function notificationRoutes(app: Elysia, ctx: Ctx): void {
  const { rt } = ctx;
  const channels = () => rt.config().notifications.channels;
  const view = (c: ReturnType<typeof channels>[number]) => ({
    ...maskedChannel(c),
    source: "config",
    read_only: true,
    status: rt.notificationStatus(c.name),
  });

  app.get("/api/v1/notifications/types", () => ({
    types: CHANNEL_TYPES.map((type) => ({ type, secret_fields: SECRET_FIELDS[type] })),
    count: channels().length,
    limit: null,
  }));

  app.get("/api/v1/notifications", () => ({ channels: channels().map(view) }));

  app.get("/api/v1/notifications/:name", ({ params }) => {
    const c = channels().find((ch) => ch.name === params.name);
    if (!c) throw new ApiError(404, "not_found", `no notification channel named ${params.name}`);
    return view(c);
  });
}

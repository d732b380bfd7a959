/**
 * Answers sluice itself gives on a provider path, in the provider's own error shape so the coding tool
 * shows the user why: a block (the notice of src/policy/notice.ts; 400 or 403, see BLOCK_STATUS), 502 upstream
 * unreachable, 504 upstream timeout, 400 unknown provider. The sign-in back ends answer like their
 * API: `code_assist` as Google APIs do (Gemini's shape), `chatgpt` as the Responses API does
 * (OpenAI's shape).
 */
import type { ProviderLabel } from "../core/types.ts";
import type { BlockNotice } from "../policy/notice.ts";
import { RECOGNISED } from "./provider.ts";

function jsonResponse(status: number, body: unknown, extra?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "x-sluice": "1", ...extra },
  });
}

/** The provider-shaped error body. `kind` picks the type/status words. */
export function providerError(
  provider: ProviderLabel,
  status: number,
  message: string,
  kind: "blocked" | "bad_gateway" | "timeout" | "bad_request",
): Response {
  switch (provider) {
    case "anthropic": {
      const type =
        kind === "blocked"
          ? "permission_error"
          : kind === "timeout"
            ? "timeout_error"
            : kind === "bad_request"
              ? "invalid_request_error"
              : "api_error";
      return jsonResponse(status, { type: "error", error: { type, message } });
    }
    case "gemini":
    case "code_assist": {
      const st =
        kind === "blocked"
          ? "PERMISSION_DENIED"
          : kind === "timeout"
            ? "DEADLINE_EXCEEDED"
            : kind === "bad_request"
              ? "INVALID_ARGUMENT"
              : "UNAVAILABLE";
      return jsonResponse(status, { error: { code: status, message, status: st } });
    }
    default: {
      const type =
        kind === "blocked"
          ? status === 400
            ? "invalid_request_error"
            : "permission_error"
          : kind === "bad_request"
            ? "invalid_request_error"
            : "upstream_error";
      const code =
        kind === "blocked"
          ? "blocked_by_sluice"
          : kind === "timeout"
            ? "upstream_timeout"
            : kind === "bad_request"
              ? "bad_request"
              : "upstream_unreachable";
      return jsonResponse(status, { error: { message, type, code } });
    }
  }
}

/**
 * The status a blocked request is answered with, per provider: the one its tools show as a plain
 * error with the message, without retrying. Claude Code reads any 401 or 403 as a sign-in problem
 * ("Failed to authenticate") and shows a 400 as "API Error: <message>", so Anthropic gets a 400
 * `invalid_request_error`. Codex treats every status but 400, 401 and 429 as a transient failure:
 * it retries, then falls back from its WebSocket to HTTP, and is blocked again each time; a 400 is
 * an invalid request it shows and stops at, so OpenAI's shapes (the API and the ChatGPT back end)
 * get a 400 `invalid_request_error` with code `blocked_by_sluice`. Gemini's keep 403.
 */
const BLOCK_STATUS: Partial<Record<ProviderLabel, number>> = { anthropic: 400, openai: 400, chatgpt: 400 };

/** A blocked request's answer in the provider's error shape. */
export function blockedResponse(provider: ProviderLabel, notice: BlockNotice): Response {
  const status = BLOCK_STATUS[provider] ?? 403;
  return providerError(
    provider,
    status,
    notice.message,
    status === 400 && provider === "anthropic" ? "bad_request" : "blocked",
  );
}

/**
 * The answer to a blocked frame on a Responses WebSocket (Codex), in place of the response it would
 * have had: the wrapped `error` event, which Codex reads as an HTTP error of `status_code`. With 400
 * it ends the turn and shows the message (an invalid request), where a closed socket or another
 * status is a dropped stream it reconnects for and then retries over HTTP. The socket stays open.
 */
export function blockedWsErrorEvent(notice: BlockNotice): string {
  return JSON.stringify({
    type: "error",
    // One status field: clients that read it as `status` accept `status_code` as its other name, and
    // reject an event that carries both.
    status_code: 400,
    error: { type: "invalid_request_error", code: "blocked_by_sluice", message: notice.message },
  });
}

/** The close reason of a blocked WebSocket: the notice's message cut to the 123 bytes a close frame carries. */
export function blockedCloseReason(notice: BlockNotice): string {
  let reason = notice.message.slice(0, 123);
  while (new TextEncoder().encode(reason).length > 123) reason = reason.slice(0, -1);
  return reason;
}

export function unknownProviderResponse(method: string, path: string): Response {
  return jsonResponse(400, {
    error: {
      code: "unknown_provider",
      message: `sluice could not tell which provider ${method} ${path} is for. It recognises: ${RECOGNISED.join("; ")}.`,
      recognised: RECOGNISED,
    },
  });
}

/** 415 for a body in a Content-Encoding or charset sluice cannot read: it cannot be scanned, so it is not sent. */
export function unknownEncoding(provider: ProviderLabel, error: string): Response {
  return providerError(
    provider,
    415,
    `sluice: ${error}; sluice cannot read this body, so it was not forwarded (proxy.allow_unknown_encoding: true forwards such bodies with their bytes scanned as text)`,
    "bad_request",
  );
}

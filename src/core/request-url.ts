/**
 * URLs of requests, as sluice reads and records them.
 *
 * The URL of an incoming request, or null when its Host makes none. Bun builds `req.url` from the
 * Host header; with no Host (an HTTP/1.0 request) or one that is not a host (`127.0.0.1:8081@evil.com`,
 * `a b`) it is a bare path, and `new URL(req.url)` throws. Both listeners answer such a request with
 * `badHostResponse()` (400) instead of an internal error.
 */

/** The request's URL, or null for a missing or malformed Host. */
export function requestUrl(req: Request): URL | null {
  const url = URL.parse(req.url);
  return url && (url.protocol === "http:" || url.protocol === "https:") && url.host ? url : null;
}

/** The 400 for a request without a usable Host header, in the `{"error":{code,message}}` shape. */
export function badHostResponse(): Response {
  return Response.json(
    {
      error: {
        code: "bad_host",
        message: "the request needs a Host header naming this server (host or host:port)",
      },
    },
    { status: 400, headers: { "cache-control": "no-store", connection: "close" } },
  );
}

/**
 * A URL without userinfo, query or fragment (`wss://host:port/path`): what a record may keep of a
 * target a client named, since credentials and tokens travel in those parts.
 */
export function shownTarget(url: URL): string {
  const host = url.port ? `${url.hostname}:${url.port}` : url.hostname;
  return `${url.protocol}//${host}${url.pathname}`;
}

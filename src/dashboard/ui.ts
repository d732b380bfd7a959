/**
 * The web UI (web/), embedded with Bun's HTML import: Bun bundles, hashes and embeds index.html with
 * its scripts and styles, from source and in `bun build --compile` binaries alike. No files are read
 * at run time and nothing is fetched from the network.
 *
 * Mount it as Bun.serve `routes` (not as an Elysia handler: Elysia only hands static routes to Bun
 * when the app has no `onRequest` hook, and `@elysiajs/static` cannot read the embedded filesystem).
 * Bun then answers `/` and the hashed assets (`/chunk-<hash>.js`, `/chunk-<hash>.css`) itself, and
 * every other path (the `/api/v1/...` routes) falls through to Elysia's `fetch`.
 *
 * `development: false` makes a run from source serve the same pre-bundled, hashed files as the
 * binary (no hot-reload client, no "Bundled page" console lines).
 *
 * @example
 * import { uiRoutes, uiServeOptions } from "./ui.ts";
 * const app = new Elysia({ serve: { ...uiServeOptions } }) // routes: uiRoutes, development: false
 *   .get("/api/v1/status", ...);
 * app.listen({ port, hostname: "127.0.0.1" });
 * // or, with Bun.serve directly:
 * Bun.serve({ port, hostname: "127.0.0.1", ...uiServeOptions, fetch: app.fetch });
 */
import page from "../../web/index.html";

/** The UI's routes: the single page (hash routing: `/#/findings`, `/#/rules`, …). */
export const uiRoutes = { "/": page };

/** Spread into Elysia's `serve` option or into `Bun.serve`. */
export const uiServeOptions = { routes: uiRoutes, development: false } as const;

/**
 * The requests recorded from the real tools in their sign-in modes (`test/fixtures/logins/`, see its
 * README): method, path, headers and the exact body bytes, ready to send again through sluice.
 *
 * @example
 * const r = recorded("gemini-code-assist-stream-generate-content");
 * await fetch(`${s.proxyUrl}${r.path}`, { method: r.method, headers: r.headers("ya29.test"), body: r.body });
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const DIR = join(import.meta.dir, "../fixtures/logins");

export interface Recorded {
  name: string;
  recorded_with: string;
  method: string;
  path: string;
  /** The recorded headers with `credential` put in place of the replaced one. */
  headers(credential?: string): Record<string, string>;
  /** The body bytes as the tool sent them (decompressed where the meta says so). */
  body: Uint8Array<ArrayBuffer>;
  /** The body with `"say hi"` (the prompt, once in each) made `"say hi <text>"`: nothing else moves. */
  withPrompt(text: string): Uint8Array<ArrayBuffer>;
}

export function recorded(name: string, frameOf?: string): Recorded {
  const meta = JSON.parse(readFileSync(join(DIR, `${name}.meta.json`), "utf8")) as {
    recorded_with: string;
    method?: string;
    path?: string;
    headers?: Record<string, string>;
  };
  const owner = frameOf
    ? (JSON.parse(readFileSync(join(DIR, `${frameOf}.meta.json`), "utf8")) as typeof meta)
    : meta;
  let body: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  try {
    body = new Uint8Array(readFileSync(join(DIR, `${name}.body.json`)));
  } catch {
    /* no body (GET, WebSocket upgrade) */
  }
  const text = new TextDecoder().decode(body);
  return {
    name,
    recorded_with: meta.recorded_with,
    method: owner.method ?? "POST",
    path: owner.path ?? "/",
    headers(credential = "test-credential") {
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(owner.headers ?? {}))
        out[k] = v === "Bearer <credential>" ? `Bearer ${credential}` : v;
      return out;
    },
    body,
    withPrompt(extra: string) {
      if (text.split('"say hi"').length !== 2)
        throw new Error(`${name}: the prompt is not there exactly once`);
      return new TextEncoder().encode(text.replace('"say hi"', JSON.stringify(`say hi ${extra}`)));
    },
  };
}

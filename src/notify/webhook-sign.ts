/**
 * Generic webhook signature: `X-Sluice-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">` with
 * `X-Sluice-Timestamp: <unix seconds>`. The timestamp is inside the signed text, so a receiver that
 * rejects old timestamps also rejects a replayed body.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "x-sluice-signature";
export const TIMESTAMP_HEADER = "x-sluice-timestamp";

export function signWebhook(secret: string, body: string, unixSeconds: number): Record<string, string> {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return { [SIGNATURE_HEADER]: `v1=${mac}`, [TIMESTAMP_HEADER]: String(unixSeconds) };
}

/** What a receiver does: recompute, compare in constant time, refuse timestamps older than `toleranceS`. */
export function verifyWebhook(
  secret: string,
  body: string,
  headers: { signature: string | null; timestamp: string | null },
  nowSeconds: number,
  toleranceS = 300,
): boolean {
  const ts = Number(headers.timestamp);
  if (!headers.signature || !Number.isInteger(ts) || Math.abs(nowSeconds - ts) > toleranceS) return false;
  const expected = Buffer.from(signWebhook(secret, body, ts)[SIGNATURE_HEADER] as string);
  const given = Buffer.from(headers.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * Email channel: SMTP through nodemailer (a well-kept mail library; no SMTP client of our own).
 * `use_tls: true` means TLS always: implicit TLS on port 465, otherwise STARTTLS is required, so a
 * server that does not offer it is refused rather than sent the password in clear.
 */
import nodemailer from "nodemailer";
import { type Delivery, emailMessage } from "./payloads.ts";

export interface EmailTarget {
  smtp_host: string;
  smtp_port: number;
  username?: string;
  password?: string;
  from_addr: string;
  to_addrs: string[];
  use_tls: boolean;
}

/** Send one message; resolves with the server's answer line. `ca` adds a trusted CA (tests, private relays). */
export async function sendEmail(
  t: EmailTarget,
  d: Delivery,
  signal: AbortSignal,
  extra: { ca?: string; timeoutMs?: number } = {},
): Promise<string> {
  const implicitTls = t.use_tls && t.smtp_port === 465;
  const transport = nodemailer.createTransport({
    host: t.smtp_host,
    port: t.smtp_port,
    secure: implicitTls,
    requireTLS: t.use_tls && !implicitTls,
    auth: t.username ? { user: t.username, pass: t.password ?? "" } : undefined,
    tls: extra.ca ? { ca: extra.ca, servername: t.smtp_host } : { servername: t.smtp_host },
    connectionTimeout: extra.timeoutMs ?? 10_000,
    greetingTimeout: extra.timeoutMs ?? 10_000,
    socketTimeout: extra.timeoutMs ?? 10_000,
  });
  const onAbort = () => transport.close();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const { subject, text } = emailMessage(d);
    const info = await transport.sendMail({ from: t.from_addr, to: t.to_addrs, subject, text });
    return String(info.response);
  } finally {
    signal.removeEventListener("abort", onAbort);
    transport.close();
  }
}

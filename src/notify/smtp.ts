/**
 * The SMTP edge: nodemailer (a maintained client; npm `nodemailer`, pinned in deno.json) sends
 * one message per session. It is loaded only when an email is sent, so runs without email
 * never load it.
 */
import type { EmailSettings, MailMessage, SendMail } from "./email.ts";

interface Transport {
  sendMail(message: Record<string, unknown>): Promise<{ response?: unknown }>;
  close(): void;
}

function isTransportFactory(
  value: unknown,
): value is { createTransport(options: Record<string, unknown>): Transport } {
  return typeof value === "object" && value !== null &&
    typeof (value as { createTransport?: unknown }).createTransport === "function";
}

/** nodemailer options of a relay: TLS mode, CA, login, deadlines. */
export function transportOptions(
  settings: EmailSettings,
  timeoutMs: number,
): Record<string, unknown> {
  return {
    host: settings.host,
    port: settings.port,
    secure: settings.tls === "implicit",
    requireTLS: settings.tls === "starttls",
    ignoreTLS: settings.tls === "none",
    ...(settings.auth ? { auth: { user: settings.auth.user, pass: settings.auth.pass } } : {}),
    // nodemailer names the host in SNI and checks the certificate against it (IPs too).
    tls: {
      minVersion: "TLSv1.2",
      ...(settings.ca === undefined ? {} : { ca: [settings.ca] }),
    },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    logger: false,
    debug: false,
  };
}

/** Sends one message with nodemailer; aborting closes the session. */
export const nodemailerSend: SendMail = async (
  settings: EmailSettings,
  message: MailMessage,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<{ response: string }> => {
  const mod = await import("nodemailer");
  const factory = isTransportFactory(mod.default) ? mod.default : mod;
  if (!isTransportFactory(factory)) throw new Error("nodemailer has no createTransport");
  const transport = factory.createTransport(transportOptions(settings, timeoutMs));
  const close = () => transport.close();
  signal.addEventListener("abort", close, { once: true });
  try {
    const info = await transport.sendMail({
      from: message.from,
      to: [...message.to],
      subject: message.subject,
      text: message.text,
      headers: message.headers,
    });
    return { response: typeof info.response === "string" ? info.response : "sent" };
  } finally {
    signal.removeEventListener("abort", close);
    transport.close();
  }
};

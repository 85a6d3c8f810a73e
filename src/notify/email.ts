/**
 * The email channel: one plain-text message per notification through an SMTP relay, over
 * STARTTLS (required, never silently skipped), implicit TLS, or plain text to a relay on this
 * host. The SMTP client is nodemailer (smtp.ts); this file decides the message and what a
 * failure means: no connection or a 4xx reply may pass later, a 5xx reply will not.
 */
import type { AttemptResult, Channel } from "./channel.ts";
import { safeError } from "./channel.ts";
import type { Notification } from "./events.ts";
import { emailText } from "./render.ts";
import { HEADERS } from "./signature.ts";

/** How the SMTP session is protected. */
export type SmtpTls = "starttls" | "implicit" | "none";

/** An SMTP relay as configured, with its credentials read. */
export interface EmailSettings {
  /** Relay host. */
  host: string;
  /** Relay port. */
  port: number;
  /** Protection. */
  tls: SmtpTls;
  /** PEM text of the CAs to trust instead of the system's. */
  ca?: string;
  /** Sender. */
  from: string;
  /** Recipients. */
  to: readonly string[];
  /** Login, when configured. */
  auth?: { user: string; pass: string };
  /** Events it gets. */
  events: ReadonlySet<string>;
}

/** One message to send. */
export interface MailMessage {
  /** Sender. */
  from: string;
  /** Recipients. */
  to: readonly string[];
  /** Subject. */
  subject: string;
  /** Plain-text body. */
  text: string;
  /** Extra headers. */
  headers: Record<string, string>;
}

/** A failure of the SMTP client, as it reports it. */
export interface SmtpFailure {
  /** The server's reply code, when it replied. */
  responseCode?: number;
  /** nodemailer's error code (`ETLS`, `EAUTH`, `ESOCKET`, `ECONNECTION`, `ETIMEDOUT`, …). */
  code?: string;
  /** Human text. */
  message: string;
}

/**
 * Failures no retry mends: the relay will not do TLS (STARTTLS missing or refused), its
 * certificate is not trusted, or the login is wrong.
 */
function finalFailure(error: SmtpFailure): boolean {
  if (error.code === "ETLS" || error.code === "EAUTH") return true;
  return /certificate|self[- ]signed|unable to verify|altnames/i.test(error.message);
}

/** The SMTP edge: sends one message in one session, within `signal`. */
export type SendMail = (
  settings: EmailSettings,
  message: MailMessage,
  signal: AbortSignal,
  timeoutMs: number,
) => Promise<{ response: string }>;

/** The message of a notification. */
export function mailMessage(settings: EmailSettings, n: Notification): MailMessage {
  const { subject, text } = emailText(n);
  return {
    from: settings.from,
    to: settings.to,
    subject,
    text,
    headers: { [HEADERS.event]: n.event, [HEADERS.delivery]: n.id },
  };
}

/** What an SMTP failure means for the delivery; the password never appears in the text. */
export function classifySmtpFailure(error: SmtpFailure, secrets: readonly string[]): AttemptResult {
  let text = error.message;
  for (const s of secrets) if (s !== "") text = text.split(s).join("***");
  const code = error.responseCode;
  return {
    ok: false,
    retryable: !finalFailure(error) && (code === undefined || (code >= 400 && code < 500)),
    status: code === undefined ? null : String(code),
    error: safeError(text.replace(/\s+/g, " ").trim()),
  };
}

/** The fields of a thrown SMTP client error that say what failed. */
function smtpFailureOf(error: unknown): SmtpFailure {
  const fields = typeof error === "object" && error !== null
    ? error as { responseCode?: unknown; code?: unknown }
    : {};
  return {
    message: error instanceof Error ? error.message : String(error),
    ...(typeof fields.responseCode === "number" ? { responseCode: fields.responseCode } : {}),
    ...(typeof fields.code === "string" ? { code: fields.code } : {}),
  };
}

/** An email channel over `sendMail`. */
export function emailChannel(
  settings: EmailSettings,
  sendMail: SendMail,
  timeoutMs: number,
): Channel {
  const secrets = settings.auth ? [settings.auth.pass] : [];
  return {
    name: "email",
    target:
      `smtp://${settings.host}:${settings.port} (${settings.tls}) → ${settings.to.length} recipient(s)`,
    events: settings.events,
    async send(n, signal) {
      try {
        const info = await sendMail(settings, mailMessage(settings, n), signal, timeoutMs);
        return { ok: true, status: info.response.split("\n")[0].slice(0, 120) };
      } catch (error) {
        return classifySmtpFailure(smtpFailureOf(error), secrets);
      }
    },
  };
}

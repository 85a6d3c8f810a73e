/**
 * Notifications: what a run tells people, and how. A pure core — the event vocabulary and
 * default filter (events.ts), each channel's message shape (render.ts), the webhook signature
 * (signature.ts) — and channels at the edge: a signed JSON or Slack/Discord webhook
 * (webhook.ts), SMTP email through nodemailer (email.ts, smtp.ts), the desktop's own notifier
 * (desktop.ts). The manager (manager.ts) queues per channel, retries with backoff on the
 * injected clock, never blocks its caller and reports every delivery.
 *
 * @example
 * ```ts ignore
 * const plan = planChannels(config, processEnv);
 * const { channels } = await openChannels(plan, edges, 10_000);
 * const manager = new NotificationManager({ channels, limits: managerLimits(config.tuning), clock });
 * manager.notify(notification);
 * await manager.drain(30_000);
 * ```
 *
 * @module
 */
export { type AttemptResult, type Channel, type Delivery, safeError, shownUrl } from "./channel.ts";
export {
  type ChannelEdges,
  managerLimits,
  type NotifyPlan,
  openChannels,
  planChannels,
} from "./channels.ts";
export {
  DESKTOP_ENV,
  desktopChannel,
  desktopCommand,
  desktopProgram,
  desktopSession,
  type FindProgram,
  type OsName,
  TOAST_BODY_ENV,
  TOAST_TITLE_ENV,
} from "./desktop.ts";
export {
  classifySmtpFailure,
  emailChannel,
  type EmailSettings,
  type MailMessage,
  mailMessage,
  type SendMail,
  type SmtpTls,
} from "./email.ts";
export {
  DEFAULT_EVENTS,
  EVENT_INFO,
  EVENT_NAMES,
  type Notification,
  type NotificationEvent,
  type NotifyEventName,
  oneLine,
  plainText,
  type Severity,
  TEST_EVENT,
  wants,
} from "./events.ts";
export {
  backoffMs,
  type ChannelTally,
  type ManagerLimits,
  type ManagerOptions,
  NotificationManager,
} from "./manager.ts";
export {
  discordBody,
  emailText,
  jsonBody,
  NOTIFICATION_SCHEMA,
  NOTIFICATION_VERSION,
  slackBody,
  slackEscape,
} from "./render.ts";
export {
  checkDelivery,
  HEADERS,
  REPLAY_WINDOW_S,
  type SignatureProblem,
  signBody,
} from "./signature.ts";
export { nodemailerSend, transportOptions } from "./smtp.ts";
export {
  classifyStatus,
  type Fetch,
  retryAfterMs,
  webhookBody,
  webhookChannel,
  type WebhookFormat,
  webhookHeaders,
  type WebhookSettings,
} from "./webhook.ts";

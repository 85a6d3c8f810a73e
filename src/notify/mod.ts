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
export { type Channel, type Delivery } from "./channel.ts";
export { type ChannelEdges, managerLimits, openChannels, planChannels } from "./channels.ts";
export { desktopChannel, desktopCommand, TOAST_TITLE_ENV } from "./desktop.ts";
export { emailChannel, type EmailSettings } from "./email.ts";
export {
  EVENT_INFO,
  type Notification,
  type NotificationEvent,
  oneLine,
  TEST_EVENT,
} from "./events.ts";
export {
  backoffMs,
  type ChannelTally,
  type ManagerLimits,
  NotificationManager,
} from "./manager.ts";

export { checkDelivery } from "./signature.ts";
export { nodemailerSend } from "./smtp.ts";
export { type Fetch, webhookChannel, type WebhookSettings } from "./webhook.ts";

/**
 * From the configuration to channels: `notify.*` read with the secret values its `*_env`
 * names point to (read here, kept in memory, never printed), each channel's event filter
 * (its own `events`, else `notify.on`, else the defaults), and a warning for every channel that
 * cannot work as configured — such a channel is off rather than half-working (a webhook whose
 * secret variable is unset is not sent unsigned).
 */
import type { Config, Tuning } from "../config/mod.ts";
import type { Warning } from "../errors/mod.ts";
import type { Clock, EnvReader } from "../io/mod.ts";
import type { Channel } from "./channel.ts";
import { desktopChannel, type FindProgram, type OsName } from "./desktop.ts";
import { emailChannel, type EmailSettings, type SendMail, type SmtpTls } from "./email.ts";
import { DEFAULT_EVENTS } from "./events.ts";
import type { ManagerLimits } from "./manager.ts";
import { type Fetch, webhookChannel, type WebhookFormat, type WebhookSettings } from "./webhook.ts";

/** The channels a configuration asks for, with their secrets read. */
export interface NotifyPlan {
  /** The webhook, when configured and usable. */
  webhook?: WebhookSettings;
  /** The SMTP relay, when configured and usable (`caFile` still to read). */
  email?: EmailSettings & { caFile?: string };
  /** Desktop notifications, when asked for. */
  desktop?: { events: ReadonlySet<string> };
  /** Why a configured channel is off. */
  problems: Warning[];
}

type NotifyConfig = NonNullable<Config["notify"]>;

function filterOf(own: readonly string[] | undefined, notify: NotifyConfig): Set<string> {
  return new Set(own ?? notify.on ?? DEFAULT_EVENTS);
}

function readVar(
  env: EnvReader,
  name: string,
  key: string,
  problems: Warning[],
  channel: string,
): string | undefined {
  const value = env.get(name);
  if (value !== undefined && value !== "") return value;
  problems.push({
    code: "notify.variable_unset",
    message: `${key} names ${name}, which is not set: the ${channel} channel is off`,
    location: key,
    hint: "set it in the environment of bernstein (the binary reads BERNSTEIN_* and the names " +
      "its env permission lists; BERNSTEIN_… names always work)",
  });
  return undefined;
}

function webhookPlan(
  notify: NotifyConfig,
  env: EnvReader,
  problems: Warning[],
): WebhookSettings | undefined {
  const webhook = notify.webhook;
  if (webhook !== undefined && notify.webhook_url !== undefined) {
    problems.push({
      code: "notify.webhook_twice",
      message: "notify.webhook_url and notify.webhook are both set: notify.webhook_url is ignored",
      location: "notify.webhook_url",
    });
  }
  const key = webhook?.url_env !== undefined ? "notify.webhook.url_env" : "notify.webhook.url";
  const url = webhook === undefined
    ? notify.webhook_url
    : webhook.url ?? readVar(env, webhook.url_env as string, key, problems, "webhook");
  if (url === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
    problems.push({
      code: "notify.webhook_url_invalid",
      message: `${key} is not an http(s) URL: the webhook channel is off`,
      location: key,
    });
    return undefined;
  }
  let secret: string | undefined;
  if (webhook?.secret_env !== undefined) {
    secret = readVar(env, webhook.secret_env, "notify.webhook.secret_env", problems, "webhook");
    if (secret === undefined) return undefined;
  }
  const format: WebhookFormat = webhook?.format ?? "json";
  return {
    name: "webhook",
    url,
    format,
    ...(secret === undefined ? {} : { secret }),
    events: filterOf(webhook?.events, notify),
  };
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[?::1\]?)$/i;

function emailPlan(
  notify: NotifyConfig,
  env: EnvReader,
  problems: Warning[],
): (EmailSettings & { caFile?: string }) | undefined {
  const email = notify.email;
  if (email === undefined) return undefined;
  const tls: SmtpTls = email.tls ?? "starttls";
  let auth: { user: string; pass: string } | undefined;
  if (email.username_env !== undefined || email.password_env !== undefined) {
    if (email.username_env === undefined || email.password_env === undefined) {
      problems.push({
        code: "notify.email_auth_incomplete",
        message: "set both notify.email.username_env and password_env: the email channel is off",
        location: email.username_env === undefined
          ? "notify.email.password_env"
          : "notify.email.username_env",
      });
      return undefined;
    }
    const user = readVar(env, email.username_env, "notify.email.username_env", problems, "email");
    const pass = readVar(env, email.password_env, "notify.email.password_env", problems, "email");
    if (user === undefined || pass === undefined) return undefined;
    auth = { user, pass };
  }
  if (tls === "none" && !LOOPBACK.test(email.smtp_host)) {
    problems.push({
      code: "notify.email_plaintext",
      message: `notify.email.tls: none is only for a relay on this host, not ${email.smtp_host}: ` +
        "the email channel is off",
      location: "notify.email.tls",
      hint: "use starttls or implicit",
    });
    return undefined;
  }
  return {
    host: email.smtp_host,
    port: email.smtp_port ?? (tls === "implicit" ? 465 : 587),
    tls,
    from: email.from,
    to: email.to,
    ...(auth === undefined ? {} : { auth }),
    ...(email.ca_file === undefined ? {} : { caFile: email.ca_file }),
    events: filterOf(email.events, notify),
  };
}

function desktopPlan(notify: NotifyConfig): { events: ReadonlySet<string> } | undefined {
  const desktop = notify.desktop;
  if (desktop === undefined || desktop === false) return undefined;
  if (desktop === true) return { events: filterOf(undefined, notify) };
  if (desktop.enabled === false) return undefined;
  return { events: filterOf(desktop.events, notify) };
}

/**
 * Reads `notify.*`: the channels it configures, with their secrets, and why any is off.
 *
 * @example
 * ```ts ignore
 * const plan = planChannels(config, processEnv);
 * for (const p of plan.problems) console.warn(p.message);
 * ```
 */
export function planChannels(config: Config, env: EnvReader): NotifyPlan {
  const notify = config.notify;
  const problems: Warning[] = [];
  if (notify === undefined) return { problems };
  const webhook = webhookPlan(notify, env, problems);
  const email = emailPlan(notify, env, problems);
  const desktop = desktopPlan(notify);
  return {
    ...(webhook ? { webhook } : {}),
    ...(email ? { email } : {}),
    ...(desktop ? { desktop } : {}),
    problems,
  };
}

/** The manager's limits from `tuning.notify`. */
export function managerLimits(tuning: Tuning): ManagerLimits {
  const notify = tuning.notify;
  return {
    timeoutMs: notify.timeout_s * 1000,
    maxAttempts: notify.max_attempts,
    backoffBaseMs: notify.backoff_base_s * 1000,
    backoffMaxMs: notify.backoff_max_s * 1000,
    queueSize: notify.queue_size,
  };
}

/** The edges channels send through. */
export interface ChannelEdges {
  /** HTTP. */
  fetch: Fetch;
  /** SMTP. */
  sendMail: SendMail;
  /** Finds the desktop program. */
  find: FindProgram;
  /** This machine's OS. */
  os: OsName;
  /** Environment (the desktop program's session variables). */
  env: EnvReader;
  /** Clock (webhook timestamps). */
  clock: Clock;
  /** Reads `notify.email.ca_file` (relative to the project root). */
  readText: (path: string) => Promise<string>;
}

/** Channels built from a plan, and the notes of channels skipped on this machine. */
export async function openChannels(
  plan: NotifyPlan,
  edges: ChannelEdges,
  timeoutMs: number,
): Promise<{ channels: Channel[]; notes: Warning[] }> {
  const channels: Channel[] = [];
  const notes: Warning[] = [];
  if (plan.webhook) channels.push(webhookChannel(plan.webhook, edges.fetch, edges.clock.nowMs));
  if (plan.email) {
    const { caFile, ...settings } = plan.email;
    let ca: string | undefined;
    if (caFile !== undefined) {
      try {
        ca = await edges.readText(caFile);
      } catch (error) {
        notes.push({
          code: "notify.ca_unreadable",
          message: `notify.email.ca_file ${caFile} cannot be read (${(error as Error).message}): ` +
            "the email channel is off",
          location: "notify.email.ca_file",
        });
      }
    }
    if (caFile === undefined || ca !== undefined) {
      channels.push(
        emailChannel(
          { ...settings, ...(ca === undefined ? {} : { ca }) },
          edges.sendMail,
          timeoutMs,
        ),
      );
    }
  }
  if (plan.desktop) {
    const desktop = await desktopChannel(plan.desktop.events, edges);
    if ("skipped" in desktop) {
      notes.push({
        code: "notify.desktop_unavailable",
        message: `desktop notifications are skipped on this machine: ${desktop.skipped}`,
        location: "notify.desktop",
      });
    } else channels.push(desktop);
  }
  return { channels, notes };
}

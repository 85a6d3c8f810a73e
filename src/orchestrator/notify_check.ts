/**
 * Notifications outside a run: `bernstein notify test` sends one `notify.test` notification
 * to each configured channel (or the one asked for) with a single attempt and reports what
 * each did, and `bernstein doctor` lists the channels — where they go, their events, and why
 * any is off — without sending anything. Both read the configuration and secrets exactly as
 * a run does (src/notify planChannels/openChannels), so what they say holds for the next run.
 */
import { basename } from "node:path";
import { toHex } from "../canonical/mod.ts";
import type { Config } from "../config/mod.ts";
import type { Warning } from "../errors/mod.ts";
import { type Clock, type EnvReader, type Random } from "../io/mod.ts";
import {
  type Channel,
  type ChannelEdges,
  type Delivery,
  EVENT_INFO,
  managerLimits,
  type Notification,
  NotificationManager,
  openChannels,
  planChannels,
  TEST_EVENT,
} from "../notify/mod.ts";
import type { DoctorCheck } from "./doctor_check.ts";
import { runEdges } from "./run_notify.ts";

/** Channel names `--channel` accepts. */
export const CHANNEL_NAMES = ["webhook", "email", "desktop"] as const;

/** Inputs of {@linkcode sendTestNotification}. */
export interface NotifyTestOptions {
  /** Effective configuration. */
  config: Config;
  /** Project root. */
  root: string;
  /** Environment (secret variables). */
  env: EnvReader;
  /** Clock. */
  clock: Clock;
  /** Notification id. */
  random: Random;
  /** Only this channel. */
  channel?: string;
  /** Replaces edges (tests). */
  edges?: Partial<ChannelEdges>;
}

/** What `bernstein notify test` found. */
export interface NotifyTestReport {
  /** Each channel tried: where it went and how it fared. */
  results: (Delivery & { target: string })[];
  /** Configured channels that are off, and why (variables unset, no desktop …). */
  off: Warning[];
}

/** The channel a `notify.…` key belongs to (`notify.webhook_url` → webhook). */
function channelOfKey(key: string | undefined): string {
  return CHANNEL_NAMES.find((c) => (key ?? "").startsWith(`notify.${c}`)) ?? "";
}

/** The test notification. */
export function testNotification(
  project: string,
  id: string,
  nowMs: number,
): Notification {
  return {
    id,
    event: TEST_EVENT,
    severity: EVENT_INFO[TEST_EVENT].severity,
    occurred_at: new Date(nowMs).toISOString(),
    project,
    run: null,
    title: `Test notification from bernstein (${project})`,
    text: "If you can read this, this channel works. Sent by 'bernstein notify test'.",
    details: { channel_test: true },
    report: null,
  };
}

async function configuredChannels(
  options: Omit<NotifyTestOptions, "random">,
): Promise<{ channels: Channel[]; off: Warning[] }> {
  const plan = planChannels(options.config, options.env);
  const edges = { ...runEdges(options.env, options.clock, options.root), ...options.edges };
  const { channels, notes } = await openChannels(
    plan,
    edges,
    managerLimits(options.config.tuning).timeoutMs,
  );
  return { channels, off: [...plan.problems, ...notes] };
}

/**
 * Sends one test notification per channel (one attempt each, the attempt deadline of
 * `tuning.notify.timeout_s`) and reports the outcomes; channels that are off are listed with
 * the reason, and `channel` narrows both to one channel.
 */
export async function sendTestNotification(options: NotifyTestOptions): Promise<NotifyTestReport> {
  const { channels, off } = await configuredChannels(options);
  const wanted = (name: string) => options.channel === undefined || options.channel === name;
  const chosen = channels.filter((c) => wanted(c.name));
  const deliveries: Delivery[] = [];
  const manager = new NotificationManager({
    channels: chosen,
    limits: { ...managerLimits(options.config.tuning), maxAttempts: 1 },
    clock: options.clock,
    onDelivery: (d) => {
      deliveries.push(d);
    },
  });
  const id = toHex(options.random.bytes(16));
  manager.notify(testNotification(basename(options.root), id, options.clock.nowMs()));
  // One attempt each, each under its own deadline: this ends when the last one does.
  await manager.drain((options.config.tuning.notify.timeout_s + 1) * 1000);
  const targets = new Map(chosen.map((c) => [c.name, c.target]));
  return {
    results: deliveries.map((d) => ({ ...d, target: targets.get(d.channel) ?? d.channel })),
    off: off.filter((w) => wanted(channelOfKey(w.location))),
  };
}

/** `bernstein doctor`'s notification lines: each channel in use, and each one that is off. */
export async function notifyDoctor(
  config: Config,
  root: string,
  env: EnvReader,
  clock: Clock,
): Promise<DoctorCheck[]> {
  if (config.notify === undefined) {
    return [{ name: "notify", status: "OK", detail: "no notification channel configured" }];
  }
  const { channels, off } = await configuredChannels({ config, root, env, clock });
  const checks: DoctorCheck[] = channels.map((c) => ({
    name: "notify",
    status: "OK",
    detail: `${c.name} → ${c.target}; events: ${[...c.events].join(", ") || "none"}`,
  }));
  for (const w of off) {
    checks.push({
      name: "notify",
      status: "WARN",
      detail: w.message,
      ...(w.hint === undefined ? {} : { hint: w.hint }),
    });
  }
  if (checks.length === 0) {
    checks.push({ name: "notify", status: "OK", detail: "no notification channel configured" });
  }
  return checks;
}

/**
 * What a notification is: the event vocabulary (owned by the configuration schema, which
 * validates `notify.*.events`), what each event means and how loud it is, which events a
 * channel gets when it names none (only what needs a person), and the one notification value
 * every channel renders in its own shape.
 */
import type { JsonObject } from "../canonical/mod.ts";
import { NOTIFY_EVENTS } from "../config/mod.ts";

/** An event a channel can subscribe to (`notify.on`, `notify.<channel>.events`). */
export type NotifyEventName = typeof NOTIFY_EVENTS[number];

/** The event of `bernstein notify test`: every channel gets it, whatever its filter. */
export const TEST_EVENT = "notify.test";

/** Any event a notification may carry. */
export type NotificationEvent = NotifyEventName | typeof TEST_EVENT;

/** How loud a notification is (colours, desktop urgency). */
export type Severity = "info" | "warning" | "critical";

/** Meaning and loudness of every event, in documentation order. */
export const EVENT_INFO: Readonly<
  Record<NotificationEvent, { severity: Severity; meaning: string }>
> = {
  "run.started": { severity: "info", meaning: "a run started or resumed" },
  "run.completed": { severity: "info", meaning: "a run ended HEALTHY" },
  "run.unhealthy": {
    severity: "critical",
    meaning: "a run ended UNHEALTHY (failed tasks, refused merges, stopped, backstop)",
  },
  "task.failed": {
    severity: "warning",
    meaning: "a task failed for good: its retries are spent (not dependents of a failed task)",
  },
  "task.merged": { severity: "info", meaning: "a task's work merged" },
  "merge.refused": { severity: "warning", meaning: "a merge was refused; the branch is kept" },
  "manager.stalled": {
    severity: "critical",
    meaning: "the manager agent created no task in time; the run stops",
  },
  "run.backstop": {
    severity: "critical",
    meaning: "the zero-terminal backstop ended a run that made no progress",
  },
  "approval.needed": {
    severity: "warning",
    meaning: "an agent's tool call is parked until an operator answers (bernstein approvals)",
  },
  "notify.test": { severity: "info", meaning: "bernstein notify test" },
};

/** Events of a channel that names none: only what needs a person. */
export const DEFAULT_EVENTS: readonly NotifyEventName[] = [
  "run.unhealthy",
  "task.failed",
  "merge.refused",
  "manager.stalled",
  "run.backstop",
  "approval.needed",
];

/** Every event a configuration may name. */
export const EVENT_NAMES: readonly NotifyEventName[] = NOTIFY_EVENTS;

/** One notification, as every channel receives it. */
export interface Notification {
  /** Unique id (the webhook's `X-Bernstein-Delivery`, for receivers that deduplicate). */
  id: string;
  /** What happened. */
  event: NotificationEvent;
  /** How loud. */
  severity: Severity;
  /** When it happened (ISO 8601, UTC). */
  occurred_at: string;
  /** The project (its folder name). */
  project: string;
  /** The run, when there is one. */
  run: { id: string; branch: string | null } | null;
  /** One line. */
  title: string;
  /** A few lines of plain text. */
  text: string;
  /** Event-specific fields (task id, reason, counts …); never a secret. */
  details: JsonObject;
  /** The HTML run report, when one exists (`file://` URL). */
  report: string | null;
}

/** The largest title and text a notification carries (chat services cut longer ones). */
export const TITLE_MAX = 200;
/** See {@linkcode TITLE_MAX}. */
export const TEXT_MAX = 3000;

/** One line: control characters (newlines too) become spaces, cut at `max` characters. */
export function oneLine(text: string, max = TITLE_MAX): string {
  // deno-lint-ignore no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim();
  return flat.length <= max ? flat : flat.slice(0, max - 1) + "…";
}

/** Plain text: control characters other than newlines and tabs removed, cut at `max`. */
export function plainText(text: string, max = TEXT_MAX): string {
  const clean = text.replace(/\r\n?/g, "\n")
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g, "");
  return clean.length <= max ? clean : clean.slice(0, max - 1) + "…";
}

/** Whether a channel whose filter is `events` gets `event` (a test reaches every channel). */
export function wants(events: ReadonlySet<string>, event: NotificationEvent): boolean {
  return event === TEST_EVENT || events.has(event);
}

/**
 * The seam between the notification manager and the outside: a channel renders and sends one
 * notification once and says whether trying again could help. Webhook, email, desktop and the
 * GitHub issue comment are channels; tests use fakes.
 */
import type { Notification } from "./events.ts";

/** What one attempt of a channel did. */
export type AttemptResult =
  | { ok: true; status: string }
  | {
    ok: false;
    /** A later attempt may succeed (5xx, timeout, no connection, 4xx SMTP reply). */
    retryable: boolean;
    /** The receiver's answer (`HTTP 503`, `421 …`), or null when there was none. */
    status: string | null;
    /** Why, in a few words (never a secret). */
    error: string;
    /** The receiver asked to wait this long (`Retry-After`). */
    retryAfterMs?: number;
  };

/** A destination of notifications. */
export interface Channel {
  /** `webhook`, `email`, `desktop`, `github`. */
  readonly name: string;
  /** Where it goes, safe to print (a URL without its path, a host, a program). */
  readonly target: string;
  /** Events it gets. */
  readonly events: ReadonlySet<string>;
  /** Narrows `events` by content (the GitHub comment takes only synced issues' merges). */
  accepts?(notification: Notification): boolean;
  /** One attempt; `signal` aborts it (its deadline passed, or the run is ending). */
  send(notification: Notification, signal: AbortSignal): Promise<AttemptResult>;
}

/** How one notification fared on one channel, after every attempt. */
export interface Delivery {
  /** Channel name. */
  channel: string;
  /** Notification id. */
  id: string;
  /** Its event. */
  event: string;
  /** delivered · failed (attempts spent or a final refusal) · dropped (queue full, or the run
   * ended first). */
  outcome: "delivered" | "failed" | "dropped";
  /** Attempts made. */
  attempts: number;
  /** The last answer (`HTTP 200`, `250 OK`, `exit 0`), or null. */
  status: string | null;
  /** Why it failed, or null. */
  error: string | null;
}

/** Error text without anything that looks like a URL path or query (they can hold tokens). */
export function safeError(text: string): string {
  return text.replace(/(https?:\/\/[^/\s]+)\/\S*/g, "$1/…").slice(0, 300);
}

/** A URL as it may be printed: scheme, host and port only (paths of chat hooks are secrets). */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === "/" && u.search === "" ? "/" : "/…"}`;
  } catch {
    return "(not a URL)";
  }
}

/**
 * The webhook channel: POSTs the notification as the versioned JSON body (signed when a secret
 * is set) or in Slack's or Discord's incoming-webhook shape. Redirects are not followed (the
 * body and its signature go where they were configured to go, nowhere else). 2xx is
 * delivered; 408, 425, 429, 5xx and no answer are worth another attempt; any other answer is
 * final.
 */
import { VERSION } from "../meta/mod.ts";
import type { AttemptResult, Channel } from "./channel.ts";
import { safeError, shownUrl } from "./channel.ts";
import type { Notification } from "./events.ts";
import { discordBody, jsonBody, slackBody } from "./render.ts";
import { HEADERS, signBody } from "./signature.ts";

/** Body shape of a webhook. */
export type WebhookFormat = "json" | "slack" | "discord";

/** A webhook as configured, with its secret values read. */
export interface WebhookSettings {
  /** Channel name (`webhook`). */
  name: string;
  /** URL (may hold a secret in its path). */
  url: string;
  /** Body shape. */
  format: WebhookFormat;
  /** HMAC key of the signature header, when configured. */
  secret?: string;
  /** Events it gets. */
  events: ReadonlySet<string>;
}

/** The HTTP edge (tests pass a fake; the run passes `fetch`). */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** Seconds since the epoch, from the manager's clock. */
export type NowSeconds = () => number;

const encoder = new TextEncoder();

/** Body bytes of `n` in `format`, sent at `timestamp`. */
export function webhookBody(
  n: Notification,
  format: WebhookFormat,
  timestamp: number,
): Uint8Array<ArrayBuffer> {
  const value = format === "slack"
    ? slackBody(n)
    : format === "discord"
    ? discordBody(n)
    : jsonBody(n, timestamp);
  return encoder.encode(JSON.stringify(value));
}

/** Headers of one attempt. */
export function webhookHeaders(
  n: Notification,
  body: Uint8Array,
  timestamp: number,
  secret: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "User-Agent": `bernstein/${VERSION}`,
    [HEADERS.event]: n.event,
    [HEADERS.delivery]: n.id,
    [HEADERS.timestamp]: String(timestamp),
  };
  if (secret !== undefined) headers[HEADERS.signature] = signBody(secret, body);
  return headers;
}

/** Milliseconds a `Retry-After` header asks for (seconds or an HTTP date), if any. */
export function retryAfterMs(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** What an HTTP status means for a delivery. */
export function classifyStatus(
  status: number,
  retryAfter: number | undefined,
): AttemptResult {
  const shown = `HTTP ${status}`;
  if (status >= 200 && status < 300) return { ok: true, status: shown };
  if (status >= 300 && status < 400) {
    return { ok: false, retryable: false, status: shown, error: "redirects are not followed" };
  }
  const retryable = status >= 500 || status === 408 || status === 425 || status === 429;
  return {
    ok: false,
    retryable,
    status: shown,
    error: retryable ? "the receiver failed" : "the receiver refused the notification",
    ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
  };
}

/** A webhook channel over `fetchFn`. */
export function webhookChannel(
  settings: WebhookSettings,
  fetchFn: Fetch,
  nowMs: () => number,
): Channel {
  return {
    name: settings.name,
    target: shownUrl(settings.url),
    events: settings.events,
    async send(n, signal) {
      const timestamp = Math.floor(nowMs() / 1000);
      const body = webhookBody(n, settings.format, timestamp);
      let response: Response;
      try {
        response = await fetchFn(settings.url, {
          method: "POST",
          headers: webhookHeaders(n, body, timestamp, settings.secret),
          body,
          redirect: "manual",
          signal,
        });
      } catch (error) {
        const text = signal.aborted ? "aborted" : (error as Error).message;
        return { ok: false, retryable: true, status: null, error: safeError(text) };
      }
      // The answer's body is not needed; reading it frees the connection.
      await response.body?.cancel().catch(() => {});
      return classifyStatus(
        response.status,
        retryAfterMs(response.headers.get("retry-after"), nowMs()),
      );
    },
  };
}

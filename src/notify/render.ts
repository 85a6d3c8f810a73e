/**
 * Pure renderers: one notification in each channel's shape — the versioned JSON body of the
 * webhook (docs/FORMATS.md, "Notifications"), Slack's and Discord's incoming-webhook messages,
 * the plain-text email, the desktop toast. Text that an agent may have written (a failure
 * reason, a task title) is cut to size and, for chat services, escaped so it cannot mention
 * `@everyone` or `<!channel>`.
 */
import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import { EVENT_INFO, type Notification, oneLine, plainText, type Severity } from "./events.ts";

/** Schema name of the JSON webhook body. */
export const NOTIFICATION_SCHEMA = "bernstein-notification";
/** Version of the JSON webhook body; a change a receiver could trip over bumps it. */
export const NOTIFICATION_VERSION = 1;

/**
 * The JSON webhook body. `timestamp` (Unix seconds, also sent as `X-Bernstein-Timestamp`) is
 * inside the signed bytes, so a replayed body carries its old time.
 *
 * @example
 * ```ts ignore
 * const body = JSON.stringify(jsonBody(notification, 1767225600));
 * ```
 */
export function jsonBody(n: Notification, timestamp: number): JsonObject {
  return {
    schema: NOTIFICATION_SCHEMA,
    version: NOTIFICATION_VERSION,
    id: n.id,
    event: n.event,
    severity: n.severity,
    timestamp,
    occurred_at: n.occurred_at,
    project: n.project,
    run: n.run,
    title: n.title,
    text: n.text,
    details: n.details,
    report: n.report,
  };
}

const COLOURS: Readonly<Record<Severity, number>> = {
  info: 0x2f81f7,
  warning: 0xd29922,
  critical: 0xcf222e,
};

/** Slack mrkdwn with `&`, `<` and `>` escaped: no links, no `<!channel>` pings. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function contextLine(n: Notification): string {
  const run = n.run === null ? "" : ` · run ${n.run.id}`;
  return `${n.event}${run} · ${n.project}`;
}

/** A Slack incoming-webhook message (Block Kit, with `text` as the fallback). */
export function slackBody(n: Notification): JsonObject {
  const title = oneLine(n.title, 150);
  const text = plainText(n.text, 2900);
  const blocks: JsonValue[] = [
    { type: "header", text: { type: "plain_text", text: title, emoji: false } },
  ];
  if (text !== "") {
    blocks.push({ type: "section", text: { type: "mrkdwn", text: slackEscape(text) } });
  }
  blocks.push({
    type: "context",
    elements: [{ type: "mrkdwn", text: slackEscape(contextLine(n)) }],
  });
  return { text: slackEscape(title), blocks };
}

/** A Discord incoming-webhook message: one embed, mentions disabled. */
export function discordBody(n: Notification): JsonObject {
  const fields: JsonValue[] = [{ name: "Event", value: n.event, inline: true }];
  if (n.run !== null) fields.push({ name: "Run", value: n.run.id, inline: true });
  fields.push({ name: "Project", value: oneLine(n.project, 100) || "-", inline: true });
  return {
    username: "bernstein",
    allowed_mentions: { parse: [] },
    embeds: [{
      title: oneLine(n.title, 256),
      description: plainText(n.text, 4000),
      color: COLOURS[n.severity],
      fields,
      timestamp: n.occurred_at,
    }],
  };
}

/** An email: subject and plain-text body. */
export interface EmailText {
  /** One line, prefixed `[bernstein]`. */
  subject: string;
  /** Plain text. */
  text: string;
}

function detailLines(details: JsonObject): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(details)) {
    const shown = typeof v === "string" ? v : JSON.stringify(v);
    out.push(`  ${k}: ${oneLine(shown, 500)}`);
  }
  return out;
}

/**
 * The email of a notification: what happened, the event's fields, and the HTML report's link
 * when the report exists (else the command that writes it).
 */
export function emailText(n: Notification): EmailText {
  const lines = [oneLine(n.title), ""];
  if (n.text !== "") lines.push(plainText(n.text), "");
  lines.push(`Event:   ${n.event} (${EVENT_INFO[n.event].meaning})`);
  if (n.run !== null) {
    lines.push(`Run:     ${n.run.id}${n.run.branch === null ? "" : ` on ${n.run.branch}`}`);
  }
  lines.push(`Project: ${oneLine(n.project)}`, `When:    ${n.occurred_at}`);
  const details = detailLines(n.details);
  if (details.length > 0) lines.push("", "Details:", ...details);
  if (n.report !== null) lines.push("", `Report:  ${n.report}`);
  else if (n.run !== null && n.event.startsWith("run.") && n.event !== "run.started") {
    lines.push("", `Report:  bernstein runs report ${n.run.id}   (writes the HTML report)`);
  }
  lines.push("", "-- ", "Sent by bernstein. Channel filters: notify.email.events.");
  return { subject: oneLine(`[bernstein] ${n.title}`, 180), text: lines.join("\n") + "\n" };
}

/** A desktop toast: a short title and body. */
export function desktopText(n: Notification): { title: string; body: string } {
  const body = plainText(n.text, 300).split("\n").slice(0, 4).join("\n");
  return { title: oneLine(`bernstein: ${n.title}`, 120), body: body || n.event };
}

// A notification value for tests.
import type { Notification, NotificationEvent } from "../../src/notify/mod.ts";

/** A notification of `event` with a recognisable title. */
export function notification(
  event: NotificationEvent,
  id: string,
  extra: Partial<Notification> = {},
): Notification {
  return {
    id,
    event,
    severity: event === "run.unhealthy" ? "critical" : "warning",
    occurred_at: "2026-01-01T00:00:00.000Z",
    project: "widget",
    run: { id: "brave-otter-3fa9c2", branch: "feature" },
    title: `title of ${id}`,
    text: `text of ${id}`,
    details: { task_id: "1.1-write-a" },
    report: null,
    ...extra,
  };
}

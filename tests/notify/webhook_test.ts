// The webhook channel and the manager against a real HTTP sink on loopback: signature and
// replay header, retries with backoff on the fake clock, order, timeouts, final refusals,
// redirects, overflow, and the chat presets.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { FakeClock } from "../../src/io/mod.ts";
import {
  backoffMs,
  checkDelivery,
  type Delivery,
  type ManagerLimits,
  NotificationManager,
  webhookChannel,
  type WebhookSettings,
} from "../../src/notify/mod.ts";
import { notification } from "./_notification.ts";
import { type Answer, startSink } from "./_sink.ts";

const SECRET = "PLANTED-WEBHOOK-SECRET-7f3a9c";
const LIMITS: ManagerLimits = {
  timeoutMs: 10_000,
  maxAttempts: 4,
  backoffBaseMs: 1000,
  backoffMaxMs: 8000,
  queueSize: 10,
};

function setup(
  answers: Answer[],
  settings: Partial<WebhookSettings> = {},
  limits: Partial<ManagerLimits> = {},
) {
  const sink = startSink(answers);
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const deliveries: Delivery[] = [];
  const attempts: { id: string; attempt: number; ok: boolean }[] = [];
  const attemptWaiters: { count: number; resolve: () => void }[] = [];
  const channel = webhookChannel(
    {
      name: "webhook",
      url: sink.url,
      format: "json",
      secret: SECRET,
      events: new Set(["task.failed", "run.unhealthy"]),
      ...settings,
    },
    fetch,
    () => clock.nowMs(),
  );
  const manager = new NotificationManager({
    channels: [channel],
    limits: { ...LIMITS, ...limits },
    clock,
    onDelivery: (d) => {
      deliveries.push(d);
    },
    onAttempt: (_c, id, attempt, result) => {
      attempts.push({ id, attempt, ok: result.ok });
      for (const w of attemptWaiters.filter((w) => attempts.length >= w.count)) {
        attemptWaiters.splice(attemptWaiters.indexOf(w), 1);
        w.resolve();
      }
    },
  });
  const attemptsDone = (count: number) =>
    attempts.length >= count
      ? Promise.resolve()
      : new Promise<void>((resolve) => attemptWaiters.push({ count, resolve }));
  return { sink, clock, manager, deliveries, attempts, attemptsDone };
}

Deno.test("a signed JSON webhook: the signature checks, the timestamp is in the signed body, the secret is nowhere", async () => {
  const t = setup([]);
  try {
    t.manager.notify(notification("task.failed", "n1"));
    const [got] = await t.sink.waitFor(1);
    await t.manager.drain(0);
    const now = t.clock.nowMs() / 1000;
    strictEqual(checkDelivery(SECRET, got.body, got.headers, now), undefined);
    strictEqual(got.headers.get("x-bernstein-event"), "task.failed");
    strictEqual(got.headers.get("x-bernstein-delivery"), "n1");
    const body = got.json as Record<string, unknown>;
    deepStrictEqual(
      [body.schema, body.version, body.event, body.timestamp],
      ["bernstein-notification", 1, "task.failed", Math.floor(now)],
    );
    strictEqual(String(body.timestamp), got.headers.get("x-bernstein-timestamp"));
    // A changed body, a wrong key, an old delivery and a moved timestamp are all refused.
    const tampered = new TextEncoder().encode(
      new TextDecoder().decode(got.body).replace("n1", "n2"),
    );
    strictEqual(checkDelivery(SECRET, tampered, got.headers, now), "mismatch");
    strictEqual(checkDelivery("other", got.body, got.headers, now), "mismatch");
    strictEqual(checkDelivery(SECRET, got.body, got.headers, now + 301), "stale");
    const moved = new Headers(got.headers);
    moved.set("x-bernstein-timestamp", String(Math.floor(now) + 5));
    strictEqual(checkDelivery(SECRET, got.body, moved, now), "bad-timestamp");
    const all = new TextDecoder().decode(got.body) + JSON.stringify([...got.headers]);
    ok(!all.includes(SECRET), "the secret itself is never sent");
    deepStrictEqual(t.deliveries.map((d) => [d.outcome, d.attempts, d.status]), [
      ["delivered", 1, "HTTP 200"],
    ]);
  } finally {
    await t.sink.close();
  }
});

Deno.test("5xx answers are retried after a doubling backoff on the fake clock; a channel keeps its order", async () => {
  const t = setup([{ status: 503 }, { status: 502 }, { status: 200 }]);
  try {
    for (const id of ["a", "b", "c"]) t.manager.notify(notification("task.failed", id));
    await t.attemptsDone(1);
    strictEqual(t.sink.received.length, 1);
    t.clock.advance(backoffMs(1, LIMITS) - 1);
    // Not yet: the second attempt waits the whole first backoff.
    strictEqual(t.attempts.length, 1);
    t.clock.advance(1);
    await t.attemptsDone(2);
    t.clock.advance(backoffMs(2, LIMITS));
    await t.sink.waitFor(5);
    await t.manager.drain(0);
    deepStrictEqual(
      t.sink.received.map((r) => (r.json as { id: string }).id),
      ["a", "a", "a", "b", "c"],
    );
    deepStrictEqual(t.deliveries.map((d) => [d.id, d.outcome, d.attempts]), [
      ["a", "delivered", 3],
      ["b", "delivered", 1],
      ["c", "delivered", 1],
    ]);
    strictEqual(backoffMs(2, LIMITS), 2000);
    strictEqual(backoffMs(9, LIMITS), 8000, "capped");
  } finally {
    await t.sink.close();
  }
});

Deno.test("an attempt the receiver never answers times out on the fake clock and is retried", async () => {
  const t = setup(["hang", { status: 204 }]);
  try {
    t.manager.notify(notification("run.unhealthy", "slow"));
    await t.sink.waitFor(1);
    t.clock.advance(LIMITS.timeoutMs);
    await t.attemptsDone(1);
    t.clock.advance(backoffMs(1, LIMITS));
    await t.sink.waitFor(2);
    await t.manager.drain(0);
    deepStrictEqual(t.deliveries.map((d) => [d.outcome, d.attempts, d.status]), [
      ["delivered", 2, "HTTP 204"],
    ]);
  } finally {
    await t.sink.close();
  }
});

Deno.test("a 4xx refusal is final, 429 waits its Retry-After, redirects are not followed", async () => {
  const t = setup([
    { status: 404 },
    { status: 429, headers: { "Retry-After": "5" } },
    { status: 200 },
    { status: 302, headers: { Location: "http://127.0.0.1:1/elsewhere" } },
  ]);
  try {
    t.manager.notify(notification("task.failed", "gone"));
    t.manager.notify(notification("task.failed", "limited"));
    t.manager.notify(notification("task.failed", "moved"));
    await t.attemptsDone(2);
    t.clock.advance(backoffMs(1, LIMITS)); // 1 s: not enough, the receiver asked for 5
    strictEqual(t.sink.received.length, 2);
    t.clock.advance(4000);
    await t.sink.waitFor(4);
    await t.manager.drain(0);
    deepStrictEqual(t.deliveries.map((d) => [d.id, d.outcome, d.attempts, d.status]), [
      ["gone", "failed", 1, "HTTP 404"],
      ["limited", "delivered", 2, "HTTP 200"],
      ["moved", "failed", 1, "HTTP 302"],
    ]);
    strictEqual(t.sink.received.length, 4, "the redirect was not followed");
  } finally {
    await t.sink.close();
  }
});

Deno.test("no receiver at all: retried, then failed, and the error hides the URL's secret path", async () => {
  const t = setup([], { url: "http://127.0.0.1:1/hooks/T000/SECRETPATH" }, { maxAttempts: 2 });
  try {
    t.manager.notify(notification("task.failed", "nobody"));
    await t.attemptsDone(1);
    t.clock.advance(backoffMs(1, LIMITS));
    await t.attemptsDone(2);
    await t.manager.drain(0);
    const [d] = t.deliveries;
    deepStrictEqual([d.outcome, d.attempts, d.status], ["failed", 2, null]);
    ok(d.error !== null && !d.error.includes("SECRETPATH"), String(d.error));
    strictEqual(t.manager.tally()[0].target, "http://127.0.0.1:1/…");
  } finally {
    await t.sink.close();
  }
});

Deno.test("notify() never waits: a full queue drops and counts, and drain drops what is left at its deadline", async () => {
  const t = setup(["hang"], {}, { queueSize: 2, timeoutMs: 600_000 });
  try {
    for (const id of ["1", "2", "3", "4", "5"]) t.manager.notify(notification("task.failed", id));
    // 1 is in flight, 2 and 3 wait, 4 and 5 found the queue full.
    deepStrictEqual(t.deliveries.map((d) => [d.id, d.outcome, d.error]), [
      ["4", "dropped", "queue full"],
      ["5", "dropped", "queue full"],
    ]);
    await t.sink.waitFor(1);
    const drained = t.manager.drain(5000);
    t.clock.advance(5000);
    const tally = await drained;
    deepStrictEqual(tally.map((c) => [c.delivered, c.failed, c.dropped]), [[0, 0, 5]]);
    deepStrictEqual(t.deliveries.map((d) => d.id).sort(), ["1", "2", "3", "4", "5"]);
    // After the end, nothing is queued any more.
    t.manager.notify(notification("task.failed", "late"));
    strictEqual(t.deliveries.at(-1)?.error, "the run had ended");
  } finally {
    await t.sink.close();
  }
});

Deno.test("events outside a channel's filter are not sent; a test notification always is", async () => {
  const t = setup([]);
  try {
    t.manager.notify(notification("run.started", "quiet"));
    t.manager.notify(notification("notify.test", "test"));
    await t.sink.waitFor(1);
    await t.manager.drain(0);
    deepStrictEqual(t.sink.received.map((r) => (r.json as { id: string }).id), ["test"]);
  } finally {
    await t.sink.close();
  }
});

Deno.test("Slack and Discord presets: their shapes, agent text escaped, no mentions", async () => {
  const hostile = "<!channel> @everyone <https://evil.example|click> & more";
  for (const format of ["slack", "discord"] as const) {
    const t = setup([], { format });
    try {
      t.manager.notify(notification("task.failed", format, { title: hostile, text: hostile }));
      const [got] = await t.sink.waitFor(1);
      await t.manager.drain(0);
      const body = got.json as Record<string, unknown>;
      if (format === "slack") {
        // Slack parses mrkdwn (and the fallback text) for links and mentions; plain_text not.
        const blocks = body.blocks as { type: string; text?: { type: string; text: string } }[];
        const parsed = [
          String(body.text),
          ...blocks.filter((b) => b.text?.type === "mrkdwn").map((b) => b.text?.text),
        ].join("\n");
        ok(!parsed.includes("<!channel>") && !parsed.includes("<https://"), parsed);
        ok(parsed.includes("&lt;!channel&gt;"), parsed);
        deepStrictEqual(blocks[0], {
          type: "header",
          text: { type: "plain_text", text: hostile, emoji: false },
        });
      } else {
        deepStrictEqual(body.allowed_mentions, { parse: [] });
        const embed = (body.embeds as Record<string, unknown>[])[0];
        strictEqual(embed.title, hostile);
        strictEqual(embed.color, 0xd29922);
      }
      ok(got.headers.get("x-bernstein-signature")?.startsWith("sha256="));
    } finally {
      await t.sink.close();
    }
  }
});

Deno.test("a receiver that answers with an endless body: the delivery counts, the body is not read", async () => {
  const huge = 1024 * 1024 * 1024; // 1 GiB, made only as far as it is read
  const t = setup([{ status: 200, bodyBytes: huge }]);
  try {
    t.manager.notify(notification("task.failed", "big"));
    await t.sink.waitFor(1);
    await t.attemptsDone(1);
    await t.manager.drain(0);
    deepStrictEqual(t.deliveries.map((d) => [d.outcome, d.status]), [["delivered", "HTTP 200"]]);
    ok(t.sink.bodyBytesSent() < 64 * 1024 * 1024, `${t.sink.bodyBytesSent()} bytes were made`);
  } finally {
    await t.sink.close();
  }
});

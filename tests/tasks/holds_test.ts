import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import {
  HoldNotFoundError,
  MemoryEventSink,
  openHoldStore,
  TaskLogCorruptError,
  TaskValidationError,
} from "../../src/tasks/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("holds: add, list, release and expiry, each recorded as an event", async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const sink = new MemoryEventSink();
  const holds = await openHoldStore(undefined, { clock, random: new SeededRandom(5), sink });
  const a = await holds.add({ actor: "operator", reason: "adding tasks", ttlMs: 60_000 });
  const b = await holds.add({ actor: "agent:m", reason: "decomposing", ttlMs: 5_000 });
  assert.match(a.id, /^h-[0-9a-f]{16}$/);
  assert.equal(a.expires_at, "2026-01-01T00:01:00.000Z");
  assert.deepEqual((await holds.list()).map((h) => h.id), [a.id, b.id]);
  clock.advance(5_000);
  assert.deepEqual((await holds.list()).map((h) => h.id), [a.id]);
  const released = await holds.release(a.id, { actor: "operator", reason: "done adding" });
  assert.equal(released.id, a.id);
  assert.deepEqual(await holds.list(), []);
  await assert.rejects(
    holds.release(a.id, { actor: "operator", reason: "again" }),
    HoldNotFoundError,
  );
  assert.deepEqual(
    sink.events.map((e) => [e.type, e.resource_id, e.actor, e.reason]),
    [
      ["hold.added", a.id, "operator", "adding tasks"],
      ["hold.added", b.id, "agent:m", "decomposing"],
      ["hold.released", b.id, "orchestrator", "expired"],
      ["hold.released", a.id, "operator", "done adding"],
    ],
  );
  await assert.rejects(
    holds.add({ actor: "x", reason: "y", ttlMs: 0 }),
    (e: unknown) => e instanceof TaskValidationError && e.location === "ttl_s",
  );
});

Deno.test("holds: saved holds survive a restart; a damaged file is an error", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "holds.json");
    const clock = new FakeClock();
    const first = await openHoldStore(path, { clock, random: new SeededRandom(1) });
    const h = await first.add({ actor: "operator", reason: "wait", ttlMs: 60_000 });
    assert.equal(((await Deno.stat(path)).mode ?? 0) & 0o777, 0o600);
    const second = await openHoldStore(path, { clock, random: new SeededRandom(2) });
    assert.deepEqual(await second.list(), [h]);
    await Deno.writeTextFile(path, '{"v":1,"holds":[{"id":"nope"}]}');
    await assert.rejects(
      openHoldStore(path, { clock, random: new SeededRandom(2) }),
      (e: unknown) => e instanceof TaskLogCorruptError && e.location === path,
    );
  });
});

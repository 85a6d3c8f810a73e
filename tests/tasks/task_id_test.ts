import assert from "node:assert/strict";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import { TaskIdGenerator } from "../../src/tasks/mod.ts";

Deno.test("task ids: deterministic under a seeded random, time-ordered, monotonic per ms", () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const a = new TaskIdGenerator(clock, new SeededRandom(9));
  const b = new TaskIdGenerator(clock, new SeededRandom(9));
  const ids = [a.next(), a.next(), a.next()];
  assert.deepEqual([b.next(), b.next(), b.next()], ids);
  assert.ok(ids[0] < ids[1] && ids[1] < ids[2]);
  assert.equal(ids[0].slice(0, 12), ids[2].slice(0, 12), "same millisecond, same time part");
  clock.advance(1);
  const later = a.next();
  assert.ok(later > ids[2]);
  assert.notEqual(later.slice(0, 12), ids[0].slice(0, 12));
  for (const id of [...ids, later]) assert.match(id, /^t-[0-9a-hjkmnp-tv-z]{26}$/);
});

Deno.test("task ids: a new generator continues after observed ids of the same millisecond", () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const first = new TaskIdGenerator(clock, new SeededRandom(1));
  const old = Array.from({ length: 5 }, () => first.next());
  for (let seed = 0; seed < 20; seed++) {
    const fresh = new TaskIdGenerator(clock, new SeededRandom(seed));
    for (const id of old) fresh.observe(id);
    fresh.observe("my-own-id");
    assert.ok(fresh.next() > old[4], `seed ${seed}`);
  }
});

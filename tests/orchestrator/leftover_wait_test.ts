// A new run waits for the agents it ended to be gone (src/orchestrator/recovery.ts untilGone):
// each look is asynchronous (isProcessAlive reads /proc without blocking the event loop, where
// the run's task server already answers), it backs off from 10 to 250 ms on the run's clock,
// and it gives up after 30 s of a process that will not die.
import assert from "node:assert/strict";
import { FakeClock } from "../../src/io/mod.ts";
import { isProcessAlive } from "../../src/orchestrator/pid_liveness.ts";
import { untilGone } from "../../src/orchestrator/recovery.ts";

/** Lets woken sleepers and settled looks run their continuations. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("leftover wait: looks again with a growing pause until every pid is gone", async () => {
  const clock = new FakeClock();
  const looks: [number, number][] = [];
  let deadAfter = 3; // pid 7 dies after its third look
  const alive = (pid: number) => {
    looks.push([pid, clock.monotonicMs() - start]);
    return Promise.resolve(pid === 7 && --deadAfter > 0);
  };
  const start = clock.monotonicMs();
  let done = false;
  const waited = untilGone([7, 8], alive, clock).then(() => (done = true));
  for (const pause of [10, 20]) {
    await settle();
    assert.equal(done, false);
    clock.advance(pause);
  }
  await waited;
  assert.deepEqual(looks, [[7, 0], [8, 0], [7, 10], [7, 30]], "pid 8, gone, is not asked again");
});

Deno.test("leftover wait: the event loop runs while a look is under way", async () => {
  let answer: (alive: boolean) => void = () => {};
  const look = new Promise<boolean>((resolve) => (answer = resolve));
  let done = false;
  const waited = untilGone([7], () => look, new FakeClock()).then(() => (done = true));
  // Other work (a request to the task server) goes on while the look waits.
  const other = await new Promise<string>((resolve) => setTimeout(() => resolve("served"), 0));
  assert.equal(other, "served");
  assert.equal(done, false);
  answer(false);
  await waited;
  assert.equal(done, true);
});

Deno.test("leftover wait: a process that never dies is given up on after 30 s", async () => {
  const clock = new FakeClock();
  const start = clock.monotonicMs();
  let done = false;
  const waited = untilGone([7], () => Promise.resolve(true), clock).then(() => (done = true));
  for (let i = 0; i < 1000 && !done; i++) {
    await settle();
    if (!done) clock.advance(250);
  }
  await waited;
  assert.ok(clock.monotonicMs() - start >= 30_000, "it waited the whole 30 s");
  assert.ok(clock.monotonicMs() - start <= 30_250, "and not longer");
});

Deno.test({
  name: "leftover wait: a real SIGKILLed process is seen gone; a live one alive",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const child = new Deno.Command("sleep", { args: ["600"], stdout: "null", stderr: "null" })
      .spawn();
    try {
      assert.equal(await isProcessAlive(child.pid), true);
      child.kill("SIGKILL");
      await untilGone([child.pid]);
      assert.equal(await isProcessAlive(child.pid), false);
    } finally {
      await child.status;
    }
  },
});

// The pack builder's wait for room in a worker's inbox: none while there is room, then until
// half of it is free again, or the worker's error.
import { rejects, strictEqual } from "node:assert/strict";
import { WorkerBacklog } from "../../src/compliance/_worker_backlog.ts";

Deno.test("a full backlog waits until half of it is answered", async () => {
  const backlog = new WorkerBacklog(4);
  for (let i = 0; i < 4; i++) backlog.sent();
  strictEqual(backlog.wait(), undefined, "4 unanswered of 4 leave room");
  backlog.sent();
  const room = backlog.wait();
  strictEqual(room instanceof Promise, true);
  strictEqual(backlog.wait(), room, "one wait, however many ask");
  let free = false;
  room?.then(() => free = true);
  backlog.answered(); // 4 left
  backlog.answered(); // 3 left
  await Promise.resolve();
  strictEqual(free, false, "not before half is free");
  backlog.answered(); // 2 left
  await room;
  strictEqual(backlog.wait(), undefined);
});

Deno.test("a worker's failure ends the wait with its error", async () => {
  const backlog = new WorkerBacklog(1);
  backlog.sent();
  backlog.sent();
  const room = backlog.wait();
  backlog.failed(new Error("worker died"));
  await rejects(room ?? Promise.resolve(), /worker died/);
});

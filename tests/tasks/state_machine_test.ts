import assert from "node:assert/strict";
import {
  canTransition,
  FINAL_STATUSES,
  nextStatuses,
  TASK_STATUSES,
  type TaskStatus,
} from "../../src/tasks/mod.ts";

// The expected table, written out independently of src/tasks/state_machine.ts: any change to
// the machine must change this list too.
const LEGAL = `
planned→open planned→cancelled
open→claimed open→blocked open→failed open→cancelled
claimed→in_progress claimed→open claimed→failed claimed→blocked claimed→cancelled claimed→orphaned
in_progress→done in_progress→failed in_progress→blocked in_progress→waiting_for_subtasks
in_progress→open in_progress→cancelled in_progress→orphaned
waiting_for_subtasks→open waiting_for_subtasks→done waiting_for_subtasks→failed
waiting_for_subtasks→cancelled
done→closed done→failed
failed→open
blocked→open blocked→failed blocked→cancelled
orphaned→open orphaned→failed orphaned→cancelled
`.trim().split(/\s+/);

Deno.test("state machine: every one of the 121 (from, to) pairs matches the expected table", () => {
  const legal = new Set(LEGAL);
  let pairs = 0;
  for (const from of TASK_STATUSES) {
    for (const to of TASK_STATUSES) {
      assert.equal(canTransition(from, to), legal.has(`${from}→${to}`), `${from} → ${to}`);
      pairs++;
    }
  }
  assert.equal(pairs, 121);
  assert.equal(LEGAL.length, 32);
});

Deno.test("state machine: the main line is legal; closed and cancelled are final", () => {
  const main: TaskStatus[] = ["planned", "open", "claimed", "in_progress", "done", "closed"];
  for (let i = 1; i < main.length; i++) assert.ok(canTransition(main[i - 1], main[i]));
  assert.deepEqual([...FINAL_STATUSES].sort(), ["cancelled", "closed"]);
  for (const s of TASK_STATUSES) assert.ok(!canTransition(s, s), `${s} → ${s} is not a change`);
  assert.deepEqual(nextStatuses("failed"), ["open"]);
});

// Which run facts tell people something (notificationOfFact, pure) and the end-of-run notice:
// a task's failure once, when final (not per retried attempt, not per dependent); a resumed
// run is run.started; a parked tool call asks for approval; the stalled manager and the
// backstop are critical; the end notice is run.completed or run.unhealthy with its counts.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import {
  notificationOfFact,
  runEndNotice,
  type RunFact,
  type RunOutcome,
} from "../../src/orchestrator/mod.ts";
import { createMemoryTaskStore } from "../../src/tasks/mod.ts";

const titles = (id: string) => (id === "1.1-parse" ? "Write the parser" : undefined);

function failed(final: boolean | undefined, code = "agent-failed"): RunFact {
  return {
    kind: "task.failed",
    taskId: "1.1-parse",
    code,
    detail: "exit 1",
    message: "the agent exited 1",
    ...(final === undefined ? {} : { final }),
  };
}

Deno.test("a task failure is told once, when it is final; dependents and retried attempts are not", () => {
  strictEqual(notificationOfFact(failed(false), titles), undefined);
  strictEqual(notificationOfFact(failed(undefined), titles), undefined);
  strictEqual(notificationOfFact(failed(true, "dependency-failed"), titles), undefined);
  const told = notificationOfFact(failed(true), titles);
  deepStrictEqual(
    [told?.event, told?.title, told?.details],
    [
      "task.failed",
      "Task 1.1-parse (Write the parser) failed",
      { task_id: "1.1-parse", code: "agent-failed", reason: "exit 1" },
    ],
  );
});

Deno.test("run, approval, stall and backstop facts map to their events; others tell nothing", () => {
  const facts: [RunFact, string | undefined][] = [
    [{
      kind: "run.resumed",
      runId: "r1",
      branch: "feature",
      runBranch: "feature",
      attempt: 2,
      source: { kind: "goal", goal: "g" },
      host: "h",
      open: 3,
    }, "run.started"],
    [{
      kind: "policy.parked",
      taskId: "1.1-parse",
      session: "s1",
      approvalId: "ap-1",
      summary: "run rm -rf build",
      timeoutS: 600,
    }, "approval.needed"],
    [{
      kind: "run.manager_stalled",
      runId: "r1",
      report: {},
      aliveS: 120,
      diagnostic: "no task created",
    }, "manager.stalled"],
    [{ kind: "run.backstop", runId: "r1", reason: "no progress", tasks: ["a"] }, "run.backstop"],
    [{ kind: "task.scheduled", taskId: "x", title: "t", role: "backend" }, undefined],
  ];
  for (const [fact, event] of facts) {
    strictEqual(notificationOfFact(fact, titles)?.event, event, fact.kind);
  }
  const approval = notificationOfFact(facts[1][0], titles);
  ok(approval?.text.includes("bernstein approvals") && approval.text.includes("ap-1"));
});

Deno.test("the end notice: HEALTHY is run.completed, anything else run.unhealthy with its counts", async () => {
  const store = createMemoryTaskStore({ clock: new FakeClock(), random: new SeededRandom(1) });
  const [a, b] = await store.createMany([
    { id: "a", title: "A", role: "backend" },
    { id: "b", title: "B", role: "backend" },
  ], { actor: "test" });
  const outcome: RunOutcome = {
    end: "quiescent",
    merges: [{ task_id: "a", session: "s", files: ["x"], sha: "abc" }],
    refused: [],
    keptBranches: [],
    costs: [],
    reason: "",
    policy: { decisions: 0, allow: 0, deny: 0, ask: 0, by_task: {} },
  };
  const good = runEndNotice("r1", {
    outcome,
    tasks: [{ ...a, status: "closed" }, { ...b, status: "closed" }],
    health: "HEALTHY",
  });
  deepStrictEqual([good.event, good.title], ["run.completed", "Run r1 ended HEALTHY: 1 merged"]);
  const bad = runEndNotice("r1", {
    outcome: {
      ...outcome,
      refused: [{ task_id: "b", branch: "bernstein/b", reason: "conflict", detail: "" }],
    },
    tasks: [{ ...a, status: "closed" }, { ...b, status: "failed" }],
    health: "UNHEALTHY",
  });
  strictEqual(bad.event, "run.unhealthy");
  strictEqual(bad.title, "Run r1 ended UNHEALTHY (quiescent): 1 failed, 1 refused");
  ok(bad.text.includes("Refused: b (conflict), work kept on bernstein/b"), bad.text);
  deepStrictEqual(bad.details.tasks, { closed: 1, failed: 1 });
});

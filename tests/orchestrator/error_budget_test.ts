// The error budget's arithmetic: the larger of the floor and 10 % of the finished tasks; spent
// when the final failures reach it (never with none); only final, first-hand failures count.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { budgetTotal, ErrorBudget, spentBudget } from "../../src/orchestrator/mod.ts";

Deno.test("the budget is the larger of the floor and 10% of the finished tasks", () => {
  deepStrictEqual([0, 1, 10, 34, 35, 100, 1000].map((n) => budgetTotal(n, 3)), [
    3,
    3,
    3,
    3,
    4,
    10,
    100,
  ]);
  strictEqual(budgetTotal(4, 0), 0);
  strictEqual(budgetTotal(50, 20), 20);
});

Deno.test("spent once the failures reach the budget, never without a failure", () => {
  strictEqual(spentBudget({ finished: 10, failed: 2 }, 3), undefined);
  strictEqual(spentBudget({ finished: 3, failed: 0 }, 0), undefined);
  const spent = spentBudget({ finished: 10, failed: 3 }, 3);
  deepStrictEqual(
    spent && [spent.finished, spent.failed, spent.budget, spent.min_failures],
    [10, 3, 3, 3],
  );
  strictEqual(spentBudget({ finished: 1, failed: 1 }, 0)?.budget, 0);
});

Deno.test("only final failures count, a dependent's failure is its dependency's, a later success clears", () => {
  const b = new ErrorBudget();
  const failed = (taskId: string, final: boolean, code = "agent-failed") =>
    b.observe({ kind: "task.failed", taskId, code, detail: "", message: "", final });
  failed("a", false);
  failed("b", true);
  failed("c", true, "dependency-failed");
  b.observe({ kind: "task.unchanged", taskId: "d", costUsd: null });
  deepStrictEqual(b.counts(), { finished: 2, failed: 1 });
  failed("a", true);
  deepStrictEqual(b.counts(), { finished: 3, failed: 2 });
});

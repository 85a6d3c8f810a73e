// Conditional dependencies in plans (recovery steps): a stage or a step depends on another
// under a condition; the upstream is recorded as the step's condition, not as a dependency.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { checkPlan, type PlanCheck, type PlanProblem } from "../../src/plan/mod.ts";

function errors(result: PlanCheck): PlanProblem[] {
  return result.problems.filter((p) => p.severity === "error");
}

const RECOVERY = `name: recover
stages:
  - name: build
    steps:
      - title: Build api
  - name: test
    depends_on: [build]
    steps:
      - title: Run tests
  - name: fix
    depends_on:
      - stage: test
        condition: "status == 'failed'"
    steps:
      - title: Fix bugs
  - name: ship
    steps:
      - title: Deploy
        depends_on:
          - step: Run tests
            condition: "status == 'done'"
      - title: Notify
        depends_on: [2.1-run-tests, Deploy]
`;

Deno.test("a stage or step conditional dependency becomes the step's condition, not a dependency", () => {
  const result = checkPlan(RECOVERY, { file: "plan.yaml" });
  deepStrictEqual(errors(result), []);
  const graph = result.graph as NonNullable<typeof result.graph>;
  const byId = new Map(graph.steps.map((s) => [s.id, s]));
  deepStrictEqual(byId.get("3.1-fix-bugs")?.depends_on, []);
  deepStrictEqual(byId.get("3.1-fix-bugs")?.condition, {
    on: ["2.1-run-tests"],
    stage: "test",
    condition: "status == 'failed'",
  });
  deepStrictEqual(byId.get("4.1-deploy")?.condition, {
    on: ["2.1-run-tests"],
    stage: null,
    condition: "status == 'done'",
  });
  // Plain step-level dependencies, by id or title, in plan order.
  deepStrictEqual(byId.get("4.2-notify")?.depends_on, ["2.1-run-tests", "4.1-deploy"]);
  strictEqual(byId.get("4.2-notify")?.condition, undefined);
  deepStrictEqual(graph.stages[2].condition, { stage: "test", condition: "status == 'failed'" });
  deepStrictEqual(graph.stages[2].depends_on, []);
});

Deno.test("conditional dependencies: bad conditions, unknown refs, two conditions and cycles are located", () => {
  const bad = checkPlan(
    RECOVERY.replace(`"status == 'failed'"`, `"status = 'failed'"`),
    { file: "plan.yaml" },
  );
  deepStrictEqual(errors(bad).map((e) => [e.code, e.location, e.message]), [[
    "plan.invalid_condition",
    "plan.yaml:13:20",
    "stages[2].depends_on[0].condition: unexpected '=' (column 8 of the condition)",
  ]]);
  const unknown = checkPlan(RECOVERY.replace("- step: Run tests", "- step: Run test"), {
    file: "plan.yaml",
  });
  deepStrictEqual(errors(unknown).map((e) => [e.code, e.message, e.hint]), [[
    "plan.unknown_step",
    "stages[3].steps[0].depends_on[0].step: unknown step 'Run test'",
    "did you mean 'Run tests'?",
  ]]);
  const twice = checkPlan(
    RECOVERY.replace(
      "      - title: Fix bugs\n",
      "      - title: Fix bugs\n        depends_on: [{step: Build api, condition: \"status == 'failed'\"}]\n",
    ),
    { file: "plan.yaml" },
  );
  deepStrictEqual(errors(twice).map((e) => e.code), ["plan.conditional_twice"]);
  const two = checkPlan(
    RECOVERY.replace(
      "            condition: \"status == 'done'\"\n",
      "            condition: \"status == 'done'\"\n          - {step: Build api, condition: 'true'}\n",
    ),
    { file: "plan.yaml" },
  );
  deepStrictEqual(errors(two).map((e) => [e.code, e.message]), [[
    "plan.conditional_twice",
    "stages[3].steps[0].depends_on[1]: a step has at most one conditional dependency (the failure it recovers from)",
  ]]);
  const cycle = checkPlan(
    `stages:\n  - name: s\n    steps:\n      - title: A\n        depends_on: [B]\n      - title: B\n        depends_on: [{step: A, condition: "status == 'failed'"}]\n`,
    { file: "plan.yaml" },
  );
  deepStrictEqual(errors(cycle).map((e) => [e.code, e.message]), [[
    "plan.dependency_cycle",
    "stages[0].steps[0].depends_on: steps form a cycle: 1.1-a → 1.2-b → 1.1-a",
  ]]);
  const ambiguous = checkPlan(
    `stages:\n  - name: s\n    steps:\n      - title: A\n      - title: A\n      - title: C\n        depends_on: [A]\n`,
    { file: "plan.yaml" },
  );
  deepStrictEqual(errors(ambiguous).map((e) => [e.code, e.hint]), [[
    "plan.ambiguous_step",
    "name the step by its id",
  ]]);
  const stageCycle = checkPlan(
    `stages:\n  - name: a\n    depends_on: [{stage: b, condition: "status == 'failed'"}]\n    steps: [{title: x}]\n  - name: b\n    depends_on: [a]\n    steps: [{title: y}]\n`,
    { file: "plan.yaml" },
  );
  deepStrictEqual(errors(stageCycle).map((e) => e.message), [
    "stages[0].depends_on: stages form a cycle: a → b → a",
  ]);
  const shape = checkPlan(
    `stages:\n  - name: a\n    steps: [{title: x}]\n  - name: b\n    depends_on: [{stage: a, when: "true"}, 3]\n    steps: [{title: y}]\n`,
    { file: "plan.yaml" },
  );
  deepStrictEqual(errors(shape).map((e) => [e.code, e.hint ?? e.message]), [
    ["plan.unknown_key", "did you mean 'condition'?"],
    [
      "plan.invalid_type",
      "stages[1].depends_on[1]: expected a stage name or {stage, condition}, got an integer",
    ],
  ]);
});

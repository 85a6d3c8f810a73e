import { deepStrictEqual, match, ok, strictEqual, throws } from "node:assert/strict";
import { canonicalize } from "../../src/canonical/mod.ts";
import {
  checkPlan,
  loadPlanFile,
  parsePlan,
  type PlanCheck,
  planGraphJson,
  PlanLoadError,
  type PlanProblem,
  stepId,
} from "../../src/plan/mod.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";

const EXAMPLE = `${REPO_ROOT}fixtures/plans/example.yaml`;

function errors(result: PlanCheck): PlanProblem[] {
  return result.problems.filter((p) => p.severity === "error");
}

/** Loads `text` expecting exactly one error; returns it. */
function onlyError(text: string): PlanProblem {
  const result = checkPlan(text, { file: "plan.yaml" });
  const errs = errors(result);
  strictEqual(result.graph, undefined);
  strictEqual(errs.length, 1, JSON.stringify(errs, null, 1));
  return errs[0];
}

function plan(stepYaml: string): string {
  return `name: t\nstages:\n  - name: build\n    steps:\n      - title: Do it\n${stepYaml}`;
}

Deno.test("example plan loads into two stages with parallel steps and stage dependencies", async () => {
  const graph = await loadPlanFile(EXAMPLE, { shownAs: "example.yaml" });
  strictEqual(graph.name, "greeting-service");
  strictEqual(graph.cli, "scripted");
  strictEqual(graph.max_agents, 3);
  deepStrictEqual(graph.stages.map((s) => s.name), ["build", "verify"]);
  const build = graph.stages[0].step_ids;
  deepStrictEqual(build, [
    "1.1-add-the-greeting-module",
    "1.2-add-the-farewell-module",
    "1.3-write-the-usage-notes",
  ]);
  for (const step of graph.steps) {
    deepStrictEqual(step.depends_on, step.stage === "build" ? [] : build);
  }
  const first = graph.steps[0];
  strictEqual(first.location, "example.yaml:10:9");
  strictEqual(first.field, "stages[0].steps[0]");
  deepStrictEqual(first.completion_signals, [
    { kind: "path_exists", path: "src/greet.ts" },
    { kind: "file_contains", path: "src/greet.ts", contains: "export function greet" },
  ]);
  const review = graph.steps[4];
  strictEqual(review.priority, 1);
  strictEqual(review.role, "reviewer");
  strictEqual(review.scope, "medium"); // default
  strictEqual(review.complexity, "medium"); // default
  strictEqual(graph.steps[3].role, "qa");
});

Deno.test("plan graph is deterministic: same bytes give the same graph and the same JSON", async () => {
  const text = await Deno.readTextFile(EXAMPLE);
  const a = parsePlan(text, { file: "example.yaml" });
  const b = parsePlan(text, { file: "example.yaml" });
  deepStrictEqual(a, b);
  strictEqual(
    canonicalize(planGraphJson(a), "canon"),
    canonicalize(planGraphJson(b), "canon"),
  );
});

Deno.test("step ids come from position and title, not from other fields", () => {
  strictEqual(stepId(0, 1, "Add the API!"), "1.2-add-the-api");
  strictEqual(stepId(2, 0, "Café — résumé"), "3.1-cafe-resume");
  strictEqual(stepId(0, 0, "!!!"), "1.1-step");
  strictEqual(stepId(0, 0, "x".repeat(80)).length, "1.1-".length + 40);
  const a = parsePlan(plan("        description: one\n"));
  const b = parsePlan(plan("        description: two\n        scope: large\n"));
  strictEqual(a.steps[0].id, b.steps[0].id);
  strictEqual(a.steps[0].id, "1.1-do-it");
});

Deno.test("a step depends on every step of the stages its stage names, in plan order, not transitively", () => {
  const graph = parsePlan(`
stages:
  - name: c
    depends_on: [b, a]
    steps: [{title: C1}]
  - name: a
    steps: [{title: A1}, {title: A2}]
  - name: b
    depends_on: [a]
    steps: [{title: B1}]
  - name: d
    depends_on: [c]
    steps: [{title: D1}, {title: D2}]
`);
  const deps = Object.fromEntries(graph.steps.map((s) => [s.id, s.depends_on]));
  deepStrictEqual(deps, {
    "1.1-c1": ["2.1-a1", "2.2-a2", "3.1-b1"],
    "2.1-a1": [],
    "2.2-a2": [],
    "3.1-b1": ["2.1-a1", "2.2-a2"],
    "4.1-d1": ["1.1-c1"],
    "4.2-d2": ["1.1-c1"],
  });
  strictEqual(graph.name, "plan"); // default: the file name without extension
});

Deno.test("attachments given as a scalar fail the load naming the step, at the value", () => {
  const err = onlyError(plan("        attachments: shot.png\n"));
  strictEqual(err.code, "attach.invalid");
  strictEqual(err.location, "plan.yaml:6:22");
  strictEqual(
    err.message,
    "stages[0].steps[0].attachments: attachments of step 'Do it' must be a list of file paths, got a string",
  );
  strictEqual(err.hint, "write 'attachments: [shot.png]'");
  throws(() => parsePlan(plan("        attachments: shot.png\n")), (e: unknown) => {
    ok(e instanceof PlanLoadError);
    strictEqual(e.code, "attach.invalid");
    strictEqual(e.exitCode, 2);
    strictEqual(e.location, "plan.yaml:6:22");
    return true;
  });
  strictEqual(onlyError(plan("        attachments: {a: 1}\n")).code, "attach.invalid");
});

Deno.test("null attachments mean none; a list keeps its order", () => {
  strictEqual(parsePlan(plan("        attachments:\n")).steps[0].attachments.length, 0);
  strictEqual(parsePlan(plan("        attachments: ~\n")).steps[0].attachments.length, 0);
  deepStrictEqual(
    parsePlan(plan("        attachments: [b.png, docs/a.md]\n")).steps[0].attachments,
    ["b.png", "docs/a.md"],
  );
});

Deno.test("a non-string attachment is an error at its own position, never coerced", () => {
  const result = checkPlan(plan("        attachments: [ok.png, 42, true, ~]\n"), {
    file: "plan.yaml",
  });
  deepStrictEqual(errors(result).map((e) => [e.location, e.message, e.code]), [
    [
      "plan.yaml:6:31",
      "stages[0].steps[0].attachments[1]: expected a file path or a {name, text} / {name, image} mapping, got an integer",
      "attach.invalid",
    ],
    [
      "plan.yaml:6:35",
      "stages[0].steps[0].attachments[2]: expected a file path or a {name, text} / {name, image} mapping, got a boolean",
      "attach.invalid",
    ],
    [
      "plan.yaml:6:41",
      "stages[0].steps[0].attachments[3]: expected a file path or a {name, text} / {name, image} mapping, got null",
      "attach.invalid",
    ],
  ]);
});

Deno.test("attachment paths are checked as relative paths, and at most 20 are allowed", () => {
  const up = onlyError(plan("        attachments: [../secret.png]\n"));
  strictEqual(up.location, "plan.yaml:6:23");
  strictEqual(
    up.message,
    "stages[0].steps[0].attachments[0]: path '../secret.png' has a '..' segment",
  );
  const abs = onlyError(plan("        attachments: [/etc/passwd]\n"));
  strictEqual(abs.message, "stages[0].steps[0].attachments[0]: path '/etc/passwd' is absolute");
  const many = Array.from({ length: 21 }, (_, i) => `a${i}.png`).join(", ");
  const tooMany = onlyError(plan(`        attachments: [${many}]\n`));
  strictEqual(tooMany.code, "attach.invalid");
  strictEqual(
    tooMany.message,
    "stages[0].steps[0].attachments: step 'Do it' has 21 attachments; at most 20 per task",
  );
});

Deno.test("YAML syntax errors and non-mapping documents are located", () => {
  const result = checkPlan("name: x\nstages: [\n  - name: a\n", { file: "plan.yaml" });
  strictEqual(result.graph, undefined);
  ok(result.problems.length >= 1);
  for (const p of result.problems) {
    strictEqual(p.code, "plan.yaml_syntax");
    ok(/^plan\.yaml:[234]:\d+$/.test(p.location ?? ""), p.location);
  }
  const dup = onlyError("name: a\nname: b\nstages: []\n");
  strictEqual(dup.code, "plan.yaml_syntax");
  strictEqual(dup.location, "plan.yaml:2:1");
  const list = onlyError("- a\n- b\n");
  strictEqual(list.code, "plan.not_a_mapping");
  strictEqual(list.location, "plan.yaml");
});

Deno.test("missing or empty stages and steps are errors at the right place", () => {
  const none = onlyError("name: x\n");
  strictEqual(none.code, "plan.missing_field");
  strictEqual(none.message, "stages: 'stages' is required");
  strictEqual(none.location, "plan.yaml:1:1");
  strictEqual(onlyError("stages: []\n").message, "stages: a plan needs at least one stage");
  strictEqual(onlyError("stages: []\n").location, "plan.yaml:1:9");
  const scalar = onlyError("stages: build\n");
  strictEqual(scalar.code, "plan.invalid_type");
  const noSteps = onlyError("stages:\n  - name: a\n");
  strictEqual(
    noSteps.message,
    "stages[0].steps: 'steps' is required (a stage needs at least one step)",
  );
  strictEqual(noSteps.location, "plan.yaml:2:5");
  const emptySteps = onlyError("stages:\n  - name: a\n    steps: []\n");
  strictEqual(emptySteps.location, "plan.yaml:3:12");
  const noName = onlyError("stages:\n  - steps: [{title: x}]\n");
  strictEqual(noName.message, "stages[0].name: 'name' is required");
  strictEqual(noName.location, "plan.yaml:2:5");
  const noTitle = onlyError("stages:\n  - name: a\n    steps:\n      - role: qa\n");
  strictEqual(noTitle.message, "stages[0].steps[0].title: 'title' is required");
  strictEqual(noTitle.location, "plan.yaml:4:9");
  const stepScalar = onlyError("stages:\n  - name: a\n    steps:\n      - just a title\n");
  strictEqual(stepScalar.code, "plan.invalid_type");
  strictEqual(stepScalar.location, "plan.yaml:4:9");
  strictEqual(
    onlyError(plan("        title: ''\n").replace("      - title: Do it\n", "      -\n")).code,
    "plan.invalid_value",
  );
});

Deno.test("unknown keys suggest the closest known key at every level", () => {
  const top = onlyError("nmae: x\nstages:\n  - name: a\n    steps: [{title: t}]\n");
  strictEqual(top.code, "plan.unknown_key");
  strictEqual(top.location, "plan.yaml:1:1");
  strictEqual(top.message, "nmae: unknown key 'nmae'");
  strictEqual(top.hint, "did you mean 'name'?");
  const stage = onlyError("stages:\n  - name: a\n    needs: [b]\n    steps: [{title: t}]\n");
  strictEqual(stage.location, "plan.yaml:3:5");
  strictEqual(stage.hint, "did you mean 'depends_on'?");
  const step = onlyError(plan("        complexty: high\n"));
  strictEqual(step.location, "plan.yaml:6:9");
  strictEqual(step.message, "stages[0].steps[0].complexty: unknown key 'complexty'");
  strictEqual(step.hint, "did you mean 'complexity'?");
  const far = onlyError(plan("        zzzzzz: 1\n"));
  ok(far.hint?.startsWith("known keys: title, description"), far.hint);
});

Deno.test("bad enum values list the accepted values", () => {
  const scope = onlyError(plan("        scope: huge\n"));
  strictEqual(
    scope.message,
    "stages[0].steps[0].scope: 'huge' is not one of: small, medium, large, xl",
  );
  strictEqual(scope.location, "plan.yaml:6:16");
  const complexity = onlyError(plan("        complexity: hihg\n"));
  strictEqual(
    complexity.message,
    "stages[0].steps[0].complexity: 'hihg' is not one of: low, medium, high",
  );
  strictEqual(complexity.hint, "did you mean 'high'?");
  const effort = onlyError(plan("        effort: extreme\n"));
  strictEqual(
    effort.message,
    "stages[0].steps[0].effort: 'extreme' is not one of: low, medium, high, max",
  );
  const priority = onlyError(plan("        priority: 7\n"));
  strictEqual(
    priority.message,
    "stages[0].steps[0].priority: 7 is not one of: 1 (critical), 2 (normal), 3 (low)",
  );
  strictEqual(onlyError(plan("        priority: high\n")).code, "plan.invalid_value");
  const agents = onlyError("max_agents: 0\nstages:\n  - name: a\n    steps: [{title: t}]\n");
  strictEqual(agents.message, "max_agents: expected a positive integer, got 0");
  strictEqual(agents.location, "plan.yaml:1:13");
  const role = onlyError(plan("        role: ../../etc\n"));
  strictEqual(role.code, "plan.invalid_value");
  strictEqual(role.location, "plan.yaml:6:15");
});

Deno.test("unknown stages in depends_on are errors naming the stage and the closest one", () => {
  const err = onlyError(
    "stages:\n  - name: build\n    steps: [{title: b}]\n  - name: test\n    depends_on: [biuld]\n    steps: [{title: t}]\n",
  );
  strictEqual(err.code, "plan.unknown_stage");
  strictEqual(err.location, "plan.yaml:5:18");
  strictEqual(err.message, "stages[1].depends_on[0]: unknown stage 'biuld'; stages: build, test");
  strictEqual(err.hint, "did you mean 'build'?");
  const scalar = onlyError(
    "stages:\n  - name: build\n    steps: [{title: b}]\n  - name: test\n    depends_on: build\n    steps: [{title: t}]\n",
  );
  strictEqual(scalar.message, "stages[1].depends_on: must be a list of stage names, got a string");
  strictEqual(scalar.hint, "write 'depends_on: [build]'");
});

Deno.test("dependency cycles are errors naming the stages in the cycle", async () => {
  const text = await Deno.readTextFile(`${REPO_ROOT}fixtures/plans/bad/cycle.yaml`);
  const result = checkPlan(text, { file: "cycle.yaml" });
  deepStrictEqual(errors(result).map((e) => [e.code, e.location, e.message]), [[
    "plan.dependency_cycle",
    "cycle.yaml:4:17",
    "stages[0].depends_on: stages form a cycle: build → test → build",
  ]]);
  const self = onlyError("stages:\n  - name: a\n    depends_on: [a]\n    steps: [{title: t}]\n");
  strictEqual(self.message, "stages[0].depends_on: stages form a cycle: a → a");
  const dup = onlyError(
    "stages:\n  - name: a\n    steps: [{title: t}]\n  - name: a\n    steps: [{title: u}]\n",
  );
  strictEqual(dup.code, "plan.duplicate_stage");
  strictEqual(dup.location, "plan.yaml:4:11");
});

Deno.test("a bernstein.yaml passed as a plan gets one error with a hint", async () => {
  const text = await Deno.readTextFile(`${REPO_ROOT}fixtures/plans/bad/looks_like_config.yaml`);
  const result = checkPlan(text, { file: "bernstein.yaml" });
  const errs = errors(result);
  strictEqual(errs.length, 1);
  strictEqual(errs[0].code, "plan.looks_like_config");
  strictEqual(errs[0].location, "bernstein.yaml:2:1");
  ok(errs[0].message.includes("looks like a bernstein.yaml"), errs[0].message);
  ok(errs[0].hint?.includes("stages:"), errs[0].hint);
});

Deno.test("owned files are checked as relative paths", () => {
  const err = onlyError(plan("        files: [src/ok.ts, /abs/path.ts]\n"));
  strictEqual(err.location, "plan.yaml:6:28");
  strictEqual(err.message, "stages[0].steps[0].files[1]: path '/abs/path.ts' is absolute");
});

Deno.test("completion signals: every form loads; every malformed one is located", () => {
  const graph = parsePlan(plan(`        completion_signals:
          - path_exists: src/a.ts
          - glob_exists: "tests/**/*_test.ts"
          - file_contains: {path: src/a.ts, contains: "export"}
          - file_contains: {path: src/a.ts, regex: "^export function \\\\w+"}
          - test_passes: [deno, test]
          - test_passes: {command: [deno, test, -A], timeout_s: 90}
`));
  deepStrictEqual(graph.steps[0].completion_signals, [
    { kind: "path_exists", path: "src/a.ts" },
    { kind: "glob_exists", glob: "tests/**/*_test.ts" },
    { kind: "file_contains", path: "src/a.ts", contains: "export" },
    { kind: "file_contains", path: "src/a.ts", regex: "^export function \\w+" },
    { kind: "test_passes", command: ["deno", "test"] },
    { kind: "test_passes", command: ["deno", "test", "-A"], timeout_s: 90 },
  ]);
  const cases: [string, string, string, string][] = [
    [
      "- path_exist: a",
      "plan.yaml:7:13",
      "stages[0].steps[0].completion_signals[0].path_exist: unknown signal 'path_exist'; accepted: path_exists, glob_exists, file_contains, test_passes",
      "did you mean 'path_exists'?",
    ],
    [
      "- {path_exists: a, glob_exists: b}",
      "plan.yaml:7:13",
      "stages[0].steps[0].completion_signals[0]: a signal has exactly one key (path_exists, glob_exists, file_contains, test_passes), got path_exists, glob_exists",
      "",
    ],
    [
      "- {type: path_exists, value: a}",
      "plan.yaml:7:13",
      "stages[0].steps[0].completion_signals[0]: a signal has exactly one key (path_exists, glob_exists, file_contains, test_passes), got type, value",
      "write '- path_exists: …' (one key per signal)",
    ],
    [
      "- src/a.ts",
      "plan.yaml:7:13",
      "stages[0].steps[0].completion_signals[0]: expected a mapping with one key (path_exists, glob_exists, file_contains, test_passes), got a string",
      "write '- path_exists: src/a.ts'",
    ],
    [
      "- path_exists: ../a",
      "plan.yaml:7:26",
      "stages[0].steps[0].completion_signals[0].path_exists: path '../a' has a '..' segment",
      "",
    ],
    [
      "- path_exists: 3",
      "plan.yaml:7:26",
      "stages[0].steps[0].completion_signals[0].path_exists: expected a relative path, got an integer",
      "",
    ],
    [
      "- glob_exists: 'src/[a.ts'",
      "plan.yaml:7:26",
      "stages[0].steps[0].completion_signals[0].glob_exists: 'src/[a.ts' has an unclosed '['",
      "",
    ],
    [
      "- glob_exists: /abs/*.ts",
      "plan.yaml:7:26",
      "stages[0].steps[0].completion_signals[0].glob_exists: path '/abs/*.ts' is absolute",
      "",
    ],
    [
      "- file_contains: {path: a}",
      "plan.yaml:7:28",
      "stages[0].steps[0].completion_signals[0].file_contains: give exactly one of 'contains' (a substring) or 'regex'",
      "",
    ],
    [
      "- file_contains: {path: a, contains: x, regex: y}",
      "plan.yaml:7:28",
      "stages[0].steps[0].completion_signals[0].file_contains: give exactly one of 'contains' (a substring) or 'regex'",
      "",
    ],
    [
      "- file_contains: {path: a, regex: '('}",
      "plan.yaml:7:45",
      "stages[0].steps[0].completion_signals[0].file_contains.regex: invalid regular expression: Invalid regular expression: /(/u: Unterminated group",
      "",
    ],
    [
      "- file_contains: {contains: x}",
      "plan.yaml:7:28",
      "stages[0].steps[0].completion_signals[0].file_contains.path: 'path' is required",
      "",
    ],
    [
      "- file_contains: a.ts",
      "plan.yaml:7:28",
      "stages[0].steps[0].completion_signals[0].file_contains: expected a mapping {path, contains} or {path, regex}, got a string",
      "",
    ],
    [
      "- test_passes: deno test",
      "plan.yaml:7:26",
      "stages[0].steps[0].completion_signals[0].test_passes: must be an argv list (commands never go through a shell)",
      "write [deno, test]",
    ],
    [
      "- test_passes: []",
      "plan.yaml:7:26",
      "stages[0].steps[0].completion_signals[0].test_passes: expected a non-empty argv list, got a list",
      "",
    ],
    [
      "- test_passes: [deno, 1]",
      "plan.yaml:7:33",
      "stages[0].steps[0].completion_signals[0].test_passes[1]: expected a string, got an integer",
      "",
    ],
    [
      "- test_passes: {command: [x], timeout_s: -1}",
      "plan.yaml:7:52",
      "stages[0].steps[0].completion_signals[0].test_passes.timeout_s: expected a positive number of seconds, got -1",
      "",
    ],
    [
      "- test_passes: {command: [x], timout_s: 3}",
      "plan.yaml:7:41",
      "stages[0].steps[0].completion_signals[0].test_passes.timout_s: unknown key 'timout_s'",
      "did you mean 'timeout_s'?",
    ],
  ];
  for (const [signal, location, message, hint] of cases) {
    const problems = errors(
      checkPlan(plan(`        completion_signals:\n          ${signal}\n`), { file: "plan.yaml" }),
    );
    ok(problems.length >= 1, signal);
    strictEqual(problems[0].location, location, signal);
    strictEqual(problems[0].message, message, signal);
    strictEqual(problems[0].hint ?? "", hint, signal);
  }
});

Deno.test("an unknown cli is an error only when the caller passes the known adapters", () => {
  const text = plan("        cli: claud\n");
  ok(checkPlan(text).graph);
  const result = checkPlan(text, { file: "plan.yaml", knownClis: ["claude", "codex"] });
  const errs = errors(result);
  strictEqual(errs.length, 1);
  strictEqual(errs[0].code, "plan.unknown_cli");
  strictEqual(errs[0].location, "plan.yaml:6:14");
  strictEqual(errs[0].hint, "did you mean 'claude'?");
});

Deno.test("every problem of a file is reported, in file order, and the error counts the rest", async () => {
  const text = await Deno.readTextFile(`${REPO_ROOT}fixtures/plans/bad/many_errors.yaml`);
  const result = checkPlan(text, { file: "many_errors.yaml" });
  deepStrictEqual(errors(result).map((e) => [e.location, e.code]), [
    ["many_errors.yaml:6:16", "plan.invalid_value"],
    ["many_errors.yaml:7:9", "plan.unknown_key"],
    ["many_errors.yaml:8:33", "attach.invalid"],
    ["many_errors.yaml:8:37", "attach.invalid"],
    ["many_errors.yaml:10:13", "plan.invalid_value"],
    ["many_errors.yaml:11:26", "plan.invalid_type"],
    ["many_errors.yaml:13:18", "plan.unknown_stage"],
    ["many_errors.yaml:16:17", "plan.invalid_value"],
  ]);
  throws(() => parsePlan(text, { file: "many_errors.yaml" }), (e: unknown) => {
    ok(e instanceof PlanLoadError);
    strictEqual(e.problems.length, 8);
    ok(e.message.endsWith("(and 7 more)"), e.message);
    return true;
  });
});

Deno.test("a missing plan file is a PlanLoadError naming the file", async () => {
  try {
    await loadPlanFile("/nonexistent/plan.yaml", { shownAs: "plan.yaml" });
    ok(false, "expected an error");
  } catch (e) {
    ok(e instanceof PlanLoadError);
    strictEqual(e.code, "plan.unreadable");
    strictEqual(e.location, "plan.yaml");
  }
});

Deno.test("connections: names or {name, env}; the variable defaults to BERNSTEIN_CONN_<NAME>", () => {
  deepStrictEqual(
    parsePlan(plan("        connections: [prod-github, {name: db.main, env: PGPASSWORD}]\n"))
      .steps[0].connections,
    [
      { name: "prod-github", env: "BERNSTEIN_CONN_PROD_GITHUB" },
      { name: "db.main", env: "PGPASSWORD" },
    ],
  );
  strictEqual(parsePlan(plan("")).steps[0].connections, undefined);
});

Deno.test("bad connections are errors at their own position: names, reserved or shared variables, keys", () => {
  const result = checkPlan(
    plan(
      "        connections: [Bad, {name: a, env: PATH}, {name: b, env: LD_PRELOAD}, " +
        "{name: c, env: BERNSTEIN_TASK_ID}, {name: d, env: X}, {name: e, env: X}, {name: f, x: 1}]\n",
    ),
    { file: "plan.yaml" },
  );
  deepStrictEqual(
    errors(result).map((e) => [e.field, e.code, e.message.split(": ").slice(1).join(": ")]),
    [
      [
        "stages[0].steps[0].connections[0]",
        "plan.invalid_value",
        "'Bad' is not a connection name ([a-z0-9][a-z0-9._-]*, at most 128)",
      ],
      [
        "stages[0].steps[0].connections[1]",
        "plan.invalid_value",
        "env: 'PATH' is reserved (the agent's own environment, loader, proxy or bernstein's)",
      ],
      [
        "stages[0].steps[0].connections[2]",
        "plan.invalid_value",
        "env: 'LD_PRELOAD' is reserved (the agent's own environment, loader, proxy or bernstein's)",
      ],
      [
        "stages[0].steps[0].connections[3]",
        "plan.invalid_value",
        "env: 'BERNSTEIN_TASK_ID' is reserved (the agent's own environment, loader, proxy or bernstein's)",
      ],
      ["stages[0].steps[0].connections[5]", "plan.invalid_value", "two connections in X"],
      [
        "stages[0].steps[0].connections[6]",
        "plan.invalid_value",
        "unknown key 'x' (accepted: name, env)",
      ],
    ],
  );
  const scalar = onlyError(plan("        connections: prod-github\n"));
  strictEqual(scalar.field, "stages[0].steps[0].connections");
  match(scalar.message, /must be a list/);
});

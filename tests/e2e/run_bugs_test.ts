// Run bugs found while making the configuration honest (issue 12 §4), each in a real run with
// the scripted agent, real git and the real task server.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../_helpers/temp.ts";
import { bern, eventsOf, prepareRepo, step, summaryOf } from "./_run_helpers.ts";

Deno.test("a dependency that fails once and succeeds on retry still lets its dependent run", async () => {
  await withTempDir(async (dir) => {
    const marker = join(dir, "..", `${dir.split("/").pop()}.flaky`);
    const flaky = `@agent run sh -c "test -e '${marker}' || { touch '${marker}'; exit 1; }"`;
    await prepareRepo(
      dir,
      `cli: scripted
stages:
  - name: first
    steps:
${step("Flaky", [flaky, "@agent write a.txt a"])}
  - name: second
    depends_on: [first]
    steps:
${step("After", ["@agent write b.txt b"])}
`,
      { tuning: { tasks: { default_max_retries: 1 } } },
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr + run.stdout);
    const summary = summaryOf(run);
    strictEqual(summary.health, "HEALTHY");
    const failed = eventsOf(run).filter((e) => e.type === "task.failed").map((e) => e.task_id);
    deepStrictEqual(failed, ["1.1-flaky"], "only the flaky attempt failed");
    strictEqual(await Deno.readTextFile(join(dir, "b.txt")), "b\n");
  });
});

Deno.test("a task created 'planned' through the task server does not keep the run alive", async () => {
  await withTempDir(async (dir) => {
    const post = [
      "const r = await fetch(Deno.env.get('BERNSTEIN_SERVER_URL') + '/tasks', {method: 'POST',",
      "headers: {authorization: 'Bearer ' + Deno.env.get('BERNSTEIN_TASK_TOKEN'),",
      "'content-type': 'application/json'},",
      "body: JSON.stringify({title: 'Later', description: 'x', role: 'backend', status: 'planned'})});",
      "if (!r.ok) throw new Error(r.status + ' ' + await r.text());",
    ].join(" ");
    await prepareRepo(
      dir,
      `cli: scripted
stages:
  - name: s
    steps:
${
        step(
          "Plan ahead",
          [`@agent run deno eval "${post}"`, "@agent write a.txt a"],
          "        role: manager\n",
        )
      }
`,
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 1, run.stderr + run.stdout);
    const summary = summaryOf(run);
    strictEqual(summary.end, "quiescent");
    strictEqual(summary.health, "UNHEALTHY");
    deepStrictEqual((summary.tasks as Record<string, number>).planned, 1);
    strictEqual(
      summary.reason,
      "every runnable task finished; 1 task(s) left planned: nothing opens a planned task once no agent runs",
    );
  });
});

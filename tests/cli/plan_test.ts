// Whole-binary tests of `bernstein plan …` under the real `bernstein` permission set.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runBernstein } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("plan validate prints the graph of a valid plan and exits 0", async () => {
  const run = await runBernstein(["plan", "validate", "fixtures/plans/example.yaml"]);
  strictEqual(run.code, 0, run.stderr);
  const lines = run.stdout.trim().split("\n");
  strictEqual(
    lines[0],
    "plan greeting-service (fixtures/plans/example.yaml) OK: 2 stages, 5 steps, max_agents 3",
  );
  strictEqual(lines[1], "stage build");
  ok(lines[2].startsWith("  1.1-add-the-greeting-module"), lines[2]);
  strictEqual(lines[5], "stage verify  (after build)");
  const json = await runBernstein(["plan", "validate", "fixtures/plans/example.yaml", "--json"]);
  const doc = JSON.parse(json.stdout);
  strictEqual(doc.ok, true);
  deepStrictEqual(doc.plan.steps[3].depends_on, [
    "1.1-add-the-greeting-module",
    "1.2-add-the-farewell-module",
    "1.3-write-the-usage-notes",
  ]);
});

Deno.test("plan validate prints every error with file:line:col and exits 1", async () => {
  const run = await runBernstein([
    "plan",
    "validate",
    "fixtures/plans/bad/attachments_scalar.yaml",
  ]);
  strictEqual(run.code, 1);
  strictEqual(
    run.stderr.trim(),
    "error[attach.invalid]: fixtures/plans/bad/attachments_scalar.yaml:6:22: stages[0].steps[0].attachments: attachments of step 'Describe the screenshot' must be a list of file paths, got a string (write 'attachments: [screenshot.png]')",
  );
  strictEqual(
    run.stdout.trim(),
    "plan INVALID: 1 error in fixtures/plans/bad/attachments_scalar.yaml",
  );
  const many = await runBernstein([
    "plan",
    "validate",
    "fixtures/plans/bad/many_errors.yaml",
    "--json",
  ]);
  strictEqual(many.code, 1);
  const doc = JSON.parse(many.stdout);
  strictEqual(doc.plan, null);
  strictEqual(doc.problems.length, 8);
  const missing = await runBernstein(["plan", "validate", "nope.yaml"], {
    cwd: `${REPO_ROOT}fixtures`,
  });
  strictEqual(missing.code, 1);
  strictEqual(
    missing.stderr.trim(),
    "error[plan.unreadable]: nope.yaml: cannot read the plan: no such file",
  );
});

Deno.test("plan backlog lists items and honours BERNSTEIN_TASK_FILTER", async () => {
  await withTempDir(async (dir) => {
    const open = join(dir, ".sdd", "backlog", "open");
    await Deno.mkdir(open, { recursive: true });
    await Deno.writeTextFile(
      join(open, "fix-login.md"),
      "---\npriority: 1\n---\n# Fix the login\n",
    );
    await Deno.writeTextFile(
      join(open, "docs.yaml"),
      "title: Write docs\ndepends_on: [fix-login]\n",
    );
    const all = await runBernstein(["plan", "backlog", "--json"], { cwd: dir });
    strictEqual(all.code, 0, all.stderr);
    deepStrictEqual(JSON.parse(all.stdout).items.map((i: { id: string }) => i.id), [
      "docs",
      "fix-login",
    ]);
    const some = await runBernstein(["plan", "backlog"], {
      cwd: dir,
      env: { BERNSTEIN_TASK_FILTER: "fix-*" },
    });
    strictEqual(some.code, 0, some.stderr);
    ok(
      some.stdout.startsWith("backlog OK: 2 items, 1 selected by BERNSTEIN_TASK_FILTER=fix-*"),
      some.stdout,
    );
    ok(/^\s+skip\s+docs/m.test(some.stdout), some.stdout);
    ok(/^\s+run\s+fix-login\s+p1\s+Fix the login$/m.test(some.stdout), some.stdout);
    const broken = await runBernstein(["plan", "backlog"], {
      cwd: dir,
      env: { BERNSTEIN_TASK_FILTER: "docs" },
    });
    strictEqual(broken.code, 1);
    ok(
      broken.stderr.includes(
        "error[backlog.filtered_dependency]: .sdd/backlog/open/docs.yaml:2:14",
      ),
      broken.stderr,
    );
  });
});

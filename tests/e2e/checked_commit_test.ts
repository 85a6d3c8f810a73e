// The merge takes the commit the gates checked. A tests gate runs the agent's own code in its
// worktree; without a sandbox that code can commit on the agent's branch after the git-safety
// and secrets gates have read it. The run must merge what was checked, never the moved tip.
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { git, withTempDir } from "../_helpers/temp.ts";
import { bern, eventsOf, prepareRepo, scriptedPlan, step } from "./_run_helpers.ts";

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

Deno.test("a gate command that commits on the agent's branch does not get its commit merged", async () => {
  await withTempDir(async (dir) => {
    // Plays the hostile agent's tests: commit a file nothing checked, note the commit's id
    // outside the repository (the run deletes the branch after its merge), then pass.
    const mark = `${dir}.sneak`;
    const sneak = "printf 'sneaked\\n' > sneaked.txt && git add sneaked.txt && " +
      "git -c user.name=tests -c user.email=tests@example.invalid commit -q -m sneak && " +
      `git rev-parse HEAD > '${mark}'`;
    await prepareRepo(
      dir,
      scriptedPlan(step("Write a", ["@agent write a.txt alpha"])),
      {
        isolation: "none",
        quality_gates: { tests: { command: ["sh", "-c", sneak] } },
      },
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr + run.stdout);
    const merged = eventsOf(run).filter((e) => e.type === "task.merged").map((e) => e.task_id);
    strictEqual(merged.join(","), "1.1-write-a");
    strictEqual(await Deno.readTextFile(join(dir, "a.txt")), "alpha\n");
    strictEqual(
      await exists(join(dir, "sneaked.txt")),
      false,
      "the unchecked commit is not merged",
    );
    // The gate's commit was made (else this test proves nothing), and the merge is not it.
    const sneaked = (await Deno.readTextFile(mark)).trim();
    await Deno.remove(mark);
    strictEqual((await git(dir, "log", "-1", "--format=%s", sneaked)).trim(), "sneak");
    const parents = (await git(dir, "log", "-1", "--format=%P", "HEAD")).trim().split(" ");
    strictEqual(parents.length, 2, "HEAD is the task's merge");
    const checked = (await git(dir, "rev-parse", `${sneaked}^`)).trim();
    strictEqual(parents[1], checked, "the merge's second parent is the checked commit");
    const mergedFiles = await git(
      dir,
      "log",
      "--format=",
      "--name-only",
      "-m",
      "--first-parent",
      "HEAD",
    );
    ok(!mergedFiles.includes("sneaked.txt"), mergedFiles);
  });
});

// Two `bernstein run`s of one project started at the same instant, 20 times: the run lock is
// taken before any state is read or moved, so one runs and the other is refused with
// run.in_progress (or, when the first has already finished, runs after it) — the loser never
// moves the winner's live task log to `.sdd/runs/unknown-…`, and every run that ran ends whole.
import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../_helpers/temp.ts";
import { prepareRepo, startBernstein, step } from "./_run_helpers.ts";

const TRIALS = 20;

async function outcome(
  child: Deno.ChildProcess,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await child.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("two runs started at the same instant, 20 times: one runs, the other is refused before touching state", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      `cli: scripted\nstages:\n  - name: s\n    steps:\n${step("Quick", ["@agent summary ok"])}\n`,
    );
    let refusedCount = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const a = startBernstein(dir, ["run", "plan.yaml", "--fresh", "--json"]);
      const b = startBernstein(dir, ["run", "plan.yaml", "--fresh", "--json"]);
      const results = await Promise.all([outcome(a), outcome(b)]);
      const ran = results.filter((r) => r.code === 0);
      const refused = results.filter((r) => r.code !== 0);
      const context = results.map((r) => `exit ${r.code}\n${r.stderr}\n${r.stdout.slice(-1500)}`)
        .join("\n---\n");
      assert.ok(ran.length >= 1, `trial ${trial}: no run ran\n${context}`);
      for (const r of refused) {
        assert.match(
          r.stderr,
          /^error\[run\.in_progress\]: another bernstein run of this project holds /m,
          context,
        );
        assert.ok(!r.stdout.includes('"type":"run.started"'), "the refused run started nothing");
      }
      refusedCount += refused.length;
      for (const r of ran) {
        const summary = JSON.parse(r.stdout.trim().split("\n").at(-1) as string);
        assert.equal(summary.type, "run.summary", context);
        assert.equal(summary.summary.health, "HEALTHY", context);
      }
      const runs = await Array.fromAsync(Deno.readDir(join(dir, ".sdd", "runs")));
      assert.deepEqual(
        runs.filter((e) => e.name.startsWith("unknown-")).map((e) => e.name),
        [],
        `trial ${trial}: a live task log was moved away`,
      );
    }
    // The machine decides how often the two overlap; on any machine most trials do.
    console.log(`run lock: ${refusedCount} of ${TRIALS} trials refused the second run`);
  });
});

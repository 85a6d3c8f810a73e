// The run lock is taken before any state is read or moved. Held by another process, a second
// `bernstein run` is refused with run.in_progress and touches nothing: the held case is set up
// deterministically (the test holds the lock over a previous run's state, exactly the window a
// winner is in before it has written anything), and a few pairs of runs started at the same
// instant show the real race ends the same way: one runs (or both, one after the other), the
// refused one never moves the winner's live task log to `.sdd/runs/unknown-…`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { closeLockFile, sddFile } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { prepareRepo, startBernstein, step } from "./_run_helpers.ts";

const PLAN = `cli: scripted\nstages:\n  - name: s\n    steps:\n${
  step("Quick", ["@agent summary ok"])
}\n`;

/** Same-instant pairs: the held case above is the deterministic proof, these the real race. */
const TRIALS = 4;

const REFUSED = /^error\[run\.in_progress\]: another bernstein run of this project holds /m;

async function outcome(
  child: Deno.ChildProcess,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await child.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

/** Every file under `.sdd/` except the lock, with its bytes (what a refused run must not touch). */
async function sddState(dir: string): Promise<Map<string, string>> {
  const state = new Map<string, string>();
  const walk = async (folder: string, prefix: string): Promise<void> => {
    for await (const entry of Deno.readDir(folder)) {
      const path = join(folder, entry.name);
      const name = `${prefix}${entry.name}`;
      if (entry.isDirectory) await walk(path, `${name}/`);
      else if (name !== "run.lock") state.set(name, await Deno.readTextFile(path));
    }
  };
  await walk(join(dir, ".sdd"), "");
  return state;
}

Deno.test("a run while another process holds the run lock is refused before it reads or moves any state", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, PLAN);
    const first = await outcome(startBernstein(dir, ["run", "plan.yaml", "--json"]));
    assert.equal(first.code, 0, first.stderr);
    const before = await sddState(dir);
    assert.ok(before.has("runtime/tasks.jsonl"), "the first run left its task log");

    const holder = await Deno.open(sddFile(join(dir, ".sdd"), "runLock"), {
      read: true,
      write: true,
    });
    try {
      assert.ok(await holder.tryLock(true), "the test holds the run lock");
      // --fresh would archive the previous run's task log: the lock must refuse it first.
      const second = await outcome(startBernstein(dir, ["run", "plan.yaml", "--fresh", "--json"]));
      assert.notEqual(second.code, 0, second.stdout);
      assert.match(second.stderr, REFUSED);
      assert.ok(!second.stdout.includes('"type":"run.started"'), "the refused run started nothing");
      assert.deepEqual(await sddState(dir), before, "the refused run changed nothing under .sdd");
    } finally {
      closeLockFile(holder);
    }
  });
});

Deno.test(`two runs started at the same instant, ${TRIALS} times: one runs, the other is refused before touching state`, async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, PLAN);
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
        assert.match(r.stderr, REFUSED, context);
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

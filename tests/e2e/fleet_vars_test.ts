// Fleet variables end to end: `var set/get/list/history/unset` on a real project, a run whose
// plan step reads `${var:threshold}` (pinned at claim on the run spine and the chain), replay
// of the pins byte-identical after later writes, divergence between two tasks explained from
// the chain alone, concurrent writers, tampered blobs and indexes, and bad input.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../_helpers/temp.ts";
import { bern, prepareRepo, summaryOf } from "./_run_helpers.ts";

const plan = (title: string) =>
  `name: vars
cli: scripted
stages:
  - name: read
    steps:
      - title: ${title}
        description: |
          Use the limit \${var:threshold} in mode \${var:mode}.
          @agent write ${
    title.toLowerCase().replaceAll(" ", "-")
  }.txt \${var:threshold} \${var:mode}
`;

async function json(dir: string, args: string[]) {
  const r = await bern(dir, [...args, "--json"]);
  strictEqual(r.code, 0, r.stdout + r.stderr);
  return JSON.parse(r.stdout);
}

async function runPlan(dir: string, title: string): Promise<string> {
  // A fresh plan file per run (an untracked file keeps the work tree clean for merges).
  const file = `plan-${title.toLowerCase().replaceAll(" ", "-")}.yaml`;
  await Deno.writeTextFile(join(dir, file), plan(title));
  const run = await bern(dir, ["run", file, "--json"]);
  strictEqual(run.code, 0, run.stdout + run.stderr);
  const summary = summaryOf(run);
  strictEqual(summary.health, "HEALTHY", run.stdout);
  return String(summary.run_id);
}

Deno.test("a run pins the variables its step reads; replay after later writes is byte-identical; history explains two tasks", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, plan("Read A"));
    strictEqual((await bern(dir, ["var", "set", "threshold", "5"])).code, 0);
    strictEqual((await bern(dir, ["var", "set", "mode", '{"fast":true}'])).code, 0);
    const runA = await runPlan(dir, "Read A");
    // The agent saw the values (the prompt had them in place of the references).
    strictEqual(await Deno.readTextFile(join(dir, "read-a.txt")), '5 {"fast":true}\n');
    const task = await json(dir, ["task", "show", "1.1-read-a"]);
    const pins = (task.metadata ?? task.task.metadata).fleet_pins;
    deepStrictEqual(pins.map((p: { name: string }) => p.name), ["threshold", "mode"]);
    strictEqual(pins[0].chain_position, 0);
    const replayBefore = await json(dir, ["var", "pins", runA]);
    // Later writes change the live value, never the pinned read.
    for (const v of ["6", "7", "8"]) {
      strictEqual((await bern(dir, ["var", "set", "threshold", v])).code, 0);
    }
    strictEqual((await bern(dir, ["var", "get", "threshold"])).stdout, "8\n");
    const replayAfter = await json(dir, ["var", "pins", runA]);
    deepStrictEqual(replayAfter, replayBefore);
    strictEqual(replayAfter.pins[0].value_json, "5");
    strictEqual(replayAfter.pins[0].value_hash, pins[0].value_hash);
    // A second task reads the new value; history names the writes between the two reads.
    await runPlan(dir, "Read B");
    strictEqual(await Deno.readTextFile(join(dir, "read-b.txt")), '8 {"fast":true}\n');
    const between = await json(dir, [
      "var",
      "history",
      "threshold",
      "--between",
      "1.1-read-a",
      "--between",
      "1.1-read-b",
    ]);
    strictEqual(between.same, false);
    deepStrictEqual(between.writes.map((w: { ordinal: number }) => w.ordinal), [1, 2, 3]);
    const text = await bern(dir, [
      "var",
      "history",
      "threshold",
      "--between",
      "1.1-read-a",
      "--between",
      "1.1-read-b",
    ]);
    match(text.stdout, /between them: write 3 by operator/);
    const mode = await json(dir, [
      "var",
      "history",
      "mode",
      "--between",
      "1.1-read-a",
      "--between",
      "1.1-read-b",
    ]);
    strictEqual(mode.same, true);
    deepStrictEqual(mode.writes, []);
    // The whole record still verifies (the pins are on the chain and the spine).
    const verify = await bern(dir, ["audit", "verify"]);
    strictEqual(verify.code, 0, verify.stdout + verify.stderr);
  });
});

Deno.test("a plan step that reads a variable with no value is refused before anything starts (exit 2)", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, plan("Read A"));
    strictEqual((await bern(dir, ["var", "set", "threshold", "5"])).code, 0);
    for (const args of [["run", "plan.yaml", "--dry-run"], ["run", "plan.yaml", "--json"]]) {
      const run = await bern(dir, args);
      strictEqual(run.code, 2, run.stdout + run.stderr);
      match(
        run.stderr,
        /^error\[fleet\.unknown_name\]: step 'Read A' reads \$\{var:mode\}, which has no value/,
      );
      ok(!run.stdout.includes('"type":"task.spawned"'), run.stdout);
    }
    await Deno.writeTextFile(
      join(dir, "bad.yaml"),
      plan("Read A").replace("${var:mode}", "${var:Mode}"),
    );
    const bad = await bern(dir, ["run", "bad.yaml", "--dry-run"]);
    strictEqual(bad.code, 2);
    match(bad.stderr, /^error\[fleet\.bad_reference\]/);
  });
});

// A hostile scripted agent that reads a variable and then tries to rewrite the fleet plane:
// through its tool (a write into .sdd/fleet/ of its worktree, which the run_config gate and the
// policy's immune tier must stop) and through a shell command aimed at the project's own
// .sdd/fleet/ (the sandbox must stop it). Afterwards the variable, its blob and the index are
// unchanged and `audit verify` passes; if a write got through, the fleet pillar must catch it.
import { match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../_helpers/temp.ts";
import { bern, prepareRepo, summaryOf } from "./_run_helpers.ts";

const BWRAP = await Deno.stat("/usr/bin/bwrap").then(() => true, () => false);

function plan(project: string, blob: string): string {
  const index = join(project, ".sdd/fleet/variables/index.json");
  return `name: hostile
cli: scripted
stages:
  - name: attack
    steps:
      - title: Attack the fleet plane
        description: |
          The limit is \${var:threshold}.
          @agent write .sdd/fleet/variables/index.json {"variables":{}}
          @agent run sh -c "printf 99 > ${blob}; printf x > ${index}; true"
          @agent write done.txt \${var:threshold}
`;
}

Deno.test({
  name: `a hostile agent cannot rewrite the project's fleet plane${
    BWRAP ? "" : " (ignored: no bwrap)"
  }`,
  ignore: !BWRAP,
  fn: async () => {
    await withTempDir(async (dir) => {
      await prepareRepo(dir, "name: placeholder\nstages: []\n", { isolation: "sandbox" });
      const set = JSON.parse((await bern(dir, ["var", "set", "threshold", "5", "--json"])).stdout);
      const hex = set.new_value_hash.slice(7);
      const blob = join(dir, ".sdd/fleet/variables/blobs", hex.slice(0, 2), hex);
      const indexBefore = await Deno.readTextFile(join(dir, ".sdd/fleet/variables/index.json"));
      await Deno.writeTextFile(join(dir, "attack.yaml"), plan(dir, blob));
      const run = await bern(dir, ["run", "attack.yaml", "--json"]);
      summaryOf(run);
      // The agent ran and tried both writes (the test is not vacuous).
      ok(run.stdout.includes('"type":"task.spawned"'), run.stdout);
      // The project's fleet plane is untouched.
      strictEqual(await Deno.readTextFile(blob), "5");
      strictEqual(
        await Deno.readTextFile(join(dir, ".sdd/fleet/variables/index.json")),
        indexBefore,
      );
      strictEqual((await bern(dir, ["var", "get", "threshold"])).stdout, "5\n");
      const verify = await bern(dir, ["audit", "verify"]);
      strictEqual(verify.code, 0, verify.stdout + verify.stderr);
      match(verify.stdout, /PASS fleet: \d+ record\(s\), 1 variable\(s\)/);
      // Nothing the agent wrote under .sdd/ reached the branch.
      const tree = await bern(dir, ["task", "show", "1.1-attack-the-fleet-plane", "--json"]);
      ok(tree.code === 0, tree.stderr);
      const merged = await Deno.stat(join(dir, ".sdd/fleet/variables/index.json"));
      ok(merged.isFile);
    });
  },
});

Deno.test("without a sandbox the same shell write lands, and the fleet pillar of audit verify catches it", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, "name: placeholder\nstages: []\n", {
      isolation: "none",
      policy: { enabled: false },
    });
    const set = JSON.parse((await bern(dir, ["var", "set", "threshold", "5", "--json"])).stdout);
    const hex = set.new_value_hash.slice(7);
    const blob = join(dir, ".sdd/fleet/variables/blobs", hex.slice(0, 2), hex);
    await Deno.writeTextFile(join(dir, "attack.yaml"), plan(dir, blob));
    const run = await bern(dir, ["run", "attack.yaml", "--json"]);
    summaryOf(run);
    strictEqual(await Deno.readTextFile(blob), "99");
    const get = await bern(dir, ["var", "get", "threshold"]);
    strictEqual(get.code, 1);
    match(get.stderr, /fleet\.blob_tampered/);
    const verify = await bern(dir, ["audit", "verify"]);
    strictEqual(verify.code, 1);
    match(verify.stderr, new RegExp(`error\\[fleet\\.blob_tampered\\]: ${set.where}`));
    match(verify.stderr, /error\[fleet\.index_tampered\]/);
  });
});

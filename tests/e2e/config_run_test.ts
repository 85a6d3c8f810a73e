// Configuration in real runs: what the configuration says happens, in a real run with the
// scripted agent, real git and the real task server.
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { git, withTempDir } from "../_helpers/temp.ts";
import { bern, prepareRepo, step, summaryOf } from "./_run_helpers.ts";

const ONE_STEP = `cli: scripted
stages:
  - name: s
    steps:
${step("Write a file", ["@agent write out.txt hello"])}
`;

Deno.test("after 'config set' (and a local bernstein.yaml edit) the next run is not refused as dirty", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, ONE_STEP);
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agents: 2\n");
    await git(dir, "add", ".sdd/config.yaml", "bernstein.yaml");
    await git(dir, "commit", "-q", "-m", "track the configuration");
    const set = await bern(dir, ["config", "set", "tuning.agent.kill_grace_s", "3"]);
    strictEqual(set.code, 0, set.stderr);
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agents: 1\n");
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr);
    strictEqual(summaryOf(run).health, "HEALTHY");
    strictEqual(await Deno.readTextFile(join(dir, "out.txt")), "hello\n");
    // A real local edit still refuses the run.
    await Deno.writeTextFile(join(dir, "plan.yaml"), ONE_STEP + "# edited\n");
    const dirty = await bern(dir, ["run", "plan.yaml"]);
    strictEqual(dirty.code, 2);
    ok(dirty.stderr.startsWith("error[run.dirty_tree]"), dirty.stderr);
  });
});

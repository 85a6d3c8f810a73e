// Hot reload decisions: what changed, what applies now, a broken edit reported once.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { loadConfig, type LoadConfigOptions } from "../../src/config/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { applyReloadable, ConfigWatch } from "../../src/orchestrator/mod.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";

async function touch(path: string, text: string, bumpMs: number): Promise<void> {
  await Deno.writeTextFile(path, text);
  // A distinct mtime even on a coarse clock (the watch compares mtime and size).
  const at = new Date(Date.now() + bumpMs);
  await Deno.utime(path, at, at);
}

Deno.test("a watched edit reloads once; a broken one is refused once and the old config stays", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const file = join(dir, "bernstein.yaml");
    await touch(file, "max_agents: 2\n", 0);
    const options: LoadConfigOptions = { cwd: dir, env: mapEnv({}) };
    const loaded = await loadConfig(options);
    ok(loaded.config);
    const running = structuredClone(loaded.config);
    const watch = new ConfigWatch(options, {
      config: loaded.config,
      sourceFiles: loaded.sourceFiles,
    });
    strictEqual(await watch.check(), undefined, "the first look only takes the stamp");
    strictEqual(await watch.check(), undefined, "nothing changed");
    await touch(file, "max_agents: 5\ncompliance:\n  retention_days: 9\n", 10_000);
    const reloaded = await watch.check();
    ok(reloaded?.kind === "reloaded");
    deepStrictEqual(reloaded.applied, ["max_agents"]);
    deepStrictEqual(reloaded.pending, ["compliance.retention_days"]);
    ok(reloaded.oldHash !== reloaded.newHash);
    applyReloadable(running, reloaded.config);
    strictEqual(running.max_agents, 5);
    strictEqual(running.compliance.retention_days, 183, "not reloadable: waits for the next run");
    await touch(file, "max_agents: [\n", 20_000);
    const refused = await watch.check();
    ok(refused?.kind === "refused");
    strictEqual(refused.problem.code, "config.yaml_syntax");
    strictEqual(await watch.check(), undefined, "reported once, not every tick");
    strictEqual(await watch.check(), undefined);
    strictEqual(watch.config.max_agents, 5, "the running configuration is kept");
  });
});

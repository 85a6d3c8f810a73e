// The one precedence rule, every pair of layers: flags > BERNSTEIN_* variables > inline
// override > overlay > project file > plan-file defaults > .sdd/config.yaml > built-in.
import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { loadConfig, type LoadConfigOptions } from "../../src/config/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";

/** Layers lowest first; each sets max_agents to its own number (its index + 10). */
const LAYERS = [
  "default",
  ".sdd/config.yaml",
  "plan",
  "bernstein.yaml",
  "overlay",
  "BERNSTEIN_CONFIG_OVERRIDE",
  "env:BERNSTEIN_MAX_AGENTS",
  "flags",
] as const;

async function setLayer(
  dir: string,
  layer: (typeof LAYERS)[number],
  options: LoadConfigOptions,
  env: Record<string, string>,
): Promise<void> {
  const value = LAYERS.indexOf(layer) + 10;
  switch (layer) {
    case "default":
      return;
    case ".sdd/config.yaml":
      await Deno.mkdir(join(dir, ".sdd"), { recursive: true });
      return await Deno.writeTextFile(join(dir, ".sdd", "config.yaml"), `max_agents: ${value}\n`);
    case "plan":
      options.planDefaults = { file: "plan.yaml", values: { max_agents: value } };
      return;
    case "bernstein.yaml":
      return await Deno.writeTextFile(join(dir, "bernstein.yaml"), `max_agents: ${value}\n`);
    case "overlay":
      return await Deno.writeTextFile(
        join(dir, ".git", "bernstein-overlay.yaml"),
        `max_agents: ${value}\n`,
      );
    case "BERNSTEIN_CONFIG_OVERRIDE":
      env.BERNSTEIN_CONFIG_OVERRIDE = `{max_agents: ${value}}`;
      return;
    case "env:BERNSTEIN_MAX_AGENTS":
      env.BERNSTEIN_MAX_AGENTS = String(value);
      return;
    case "flags":
      options.flags = { max_agents: value };
      return;
  }
}

for (let low = 0; low < LAYERS.length; low++) {
  for (let high = low + 1; high < LAYERS.length; high++) {
    Deno.test(`precedence: ${LAYERS[high]} beats ${LAYERS[low]}`, async () => {
      await withTempDir(async (dir) => {
        await makeRepo(dir);
        const env: Record<string, string> = {};
        const options: LoadConfigOptions = { cwd: dir, env: mapEnv(env) };
        await setLayer(dir, LAYERS[low], options, env);
        await setLayer(dir, LAYERS[high], options, env);
        const loaded = await loadConfig({ ...options, env: mapEnv(env) });
        strictEqual(loaded.config?.max_agents, high + 10);
        strictEqual(loaded.sources.get("max_agents"), LAYERS[high]);
      });
    });
  }
}

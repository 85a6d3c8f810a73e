import { ok, strictEqual } from "node:assert/strict";
import { withConfigReference } from "../../scripts/gen_config_reference.ts";
import { withReference } from "../../scripts/gen_readme.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";

Deno.test("the README command reference matches the command table (run `deno task docs`)", async () => {
  const readme = await Deno.readTextFile(`${REPO_ROOT}README.md`);
  strictEqual(readme, withReference(readme), "README.md is stale: run `deno task docs`");
});

Deno.test("the README configuration reference matches the schema (run `deno task docs`)", async () => {
  const readme = await Deno.readTextFile(`${REPO_ROOT}README.md`);
  strictEqual(
    readme,
    await withConfigReference(readme),
    "README.md is stale: run `deno task docs`",
  );
  for (const key of ["max_agents", "tuning.agent.max_turns", "catalogs.*.priority"]) {
    ok(readme.includes(`| \`${key}\` `), `${key} has a row`);
  }
});

Deno.test("the README shows the two set-up commands", async () => {
  const readme = await Deno.readTextFile(`${REPO_ROOT}README.md`);
  ok(readme.includes("deno task demo"));
  ok(readme.includes("deno task test"));
});

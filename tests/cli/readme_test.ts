import { ok, strictEqual } from "node:assert/strict";
import { withReference } from "../../scripts/gen_readme.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";

Deno.test("the README command reference matches the command table (run `deno task docs`)", async () => {
  const readme = await Deno.readTextFile(`${REPO_ROOT}README.md`);
  strictEqual(readme, withReference(readme), "README.md is stale: run `deno task docs`");
});

Deno.test("the README shows the two set-up commands", async () => {
  const readme = await Deno.readTextFile(`${REPO_ROOT}README.md`);
  ok(readme.includes("deno task demo"));
  ok(readme.includes("deno task test"));
});

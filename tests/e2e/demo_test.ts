import { ok, strictEqual } from "node:assert/strict";
import { runBernstein } from "../_helpers/cli.ts";

Deno.test("deno task demo runs the main job end to end and every stage passes", async () => {
  const r = await runBernstein(["demo"]);
  strictEqual(r.code, 0, r.stdout + r.stderr);
  for (const stage of ["1/5", "2/5", "3/5", "4/5", "5/5"]) ok(r.stdout.includes(stage), stage);
  ok(
    r.stdout.includes("demo complete: 4 steps merged, 1 refused by its gate, the record verifies."),
  );
  ok(r.stdout.includes("gate run_config"), "the refused gate is reported");
});

import { ok, strictEqual } from "node:assert/strict";
import { runBernstein } from "../_helpers/cli.ts";

Deno.test("deno task demo runs the main job end to end and every stage passes", async () => {
  const r = await runBernstein(["demo"]);
  strictEqual(r.code, 0, r.stdout + r.stderr);
  for (const stage of ["1/6", "2/6", "3/6", "4/6", "5/6", "6/6"]) {
    ok(r.stdout.includes(stage), stage);
  }
  ok(
    r.stdout.includes(
      "demo complete: 4 steps merged, 1 refused by its gate, the record and the pack verify.",
    ),
  );
  ok(r.stdout.includes("gate run_config"), "the refused gate is reported");
  ok(/PASS pack: 4 entries/.test(r.stdout), "bernstein-verify passes the pack");
  ok(
    /the run's report: 5 attempts on \d agent slot\(s\), audit pass, lineage pass, scorecard pass/
      .test(r.stdout),
    "the report of the demo run verifies",
  );
});

import { ok, strictEqual } from "node:assert/strict";
import { runBernstein } from "../_helpers/cli.ts";

Deno.test("deno task demo runs the main job end to end and every stage passes", async () => {
  const r = await runBernstein(["demo"]);
  strictEqual(r.code, 0, r.stdout + r.stderr);
  for (const stage of ["1/8", "2/8", "3/8", "4/8", "5/8", "6/8", "7/8", "8/8"]) {
    ok(r.stdout.includes(stage), stage);
  }
  ok(
    r.stdout.includes(
      "demo complete: 5 steps merged (one a recovery step), 1 refused by its gate; the record, the receipt, the pack and the checkpoint verify.",
    ),
  );
  ok(r.stdout.includes("gate run_config"), "the refused gate is reported");
  ok(/recovers 3\.1-check-the-farewell-module-is-tested \(failed/.test(r.stdout), "a recovery");
  ok(/PASS: 4\.1-add-the-missing-farewell-test recovers/.test(r.stdout), "the receipt resolves");
  ok(/PASS pack: 5 entries/.test(r.stdout), "bernstein-verify passes the pack");
  ok(
    /the run's report: 7 attempts on \d agent slot\(s\), audit pass, lineage pass, scorecard pass/
      .test(r.stdout),
    "the report of the demo run verifies",
  );
  // It ends with the run's signed checkpoint verified.
  const verdicts = r.stdout.split("\n").filter((l) => /^\s*(PASS|FAIL)/.test(l));
  ok(
    /PASS chain src\/greet\.ts: .*log matches \d+ checkpoint\(s\)/.test(verdicts.at(-1) ?? ""),
    verdicts.join("\n"),
  );
});

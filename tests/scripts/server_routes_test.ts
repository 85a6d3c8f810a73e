import { ok, strictEqual } from "node:assert/strict";
import { routeTable, withRouteTables } from "../../scripts/gen_server_routes.ts";
import { withoutTablePadding } from "../../scripts/_generated_block.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";

Deno.test("docs/TASK_SERVER.md's route tables match the server's route table (run `deno task docs`)", async () => {
  const text = await Deno.readTextFile(`${REPO_ROOT}docs/TASK_SERVER.md`);
  strictEqual(
    withoutTablePadding(text),
    withoutTablePadding(withRouteTables(text)),
    "docs/TASK_SERVER.md is stale: run `deno task docs`",
  );
});

Deno.test("the generated route table shows each route's access and the keys of its body schema", () => {
  const table = withoutTablePadding(routeTable());
  ok(
    table.includes(
      "| `POST /tasks/{id}/claim` | operator, the task's agent | `{expected_version, agent?}` |",
    ),
  );
  ok(table.includes("| `GET /health` | anyone | |"));
  ok(table.includes("| `DELETE /orchestrator/holds/{id}` | operator | `{reason?}` |"));
});

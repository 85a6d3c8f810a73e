import assert from "node:assert/strict";
import { withAdapterTable } from "../../scripts/gen_adapter_docs.ts";
import { ADAPTER_NAMES } from "../../src/adapters/mod.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";

Deno.test("docs/ADAPTERS.md shows the current registry and capability table (run `deno task docs`)", async () => {
  const doc = await Deno.readTextFile(`${REPO_ROOT}docs/ADAPTERS.md`);
  assert.equal(doc, withAdapterTable(doc), "docs/ADAPTERS.md is stale: run `deno task docs`");
  for (const name of ADAPTER_NAMES) assert.match(doc, new RegExp(`^\\| ${name} +\\|`, "m"));
});

// The committed fixture tree (fixtures/lineage/valid-tree/, reused by the pack verifier's
// tests) is exactly what scripts/lineage_fixture.ts generates, and it passes the gate.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { FIXTURE_DIR, fixtureFiles, generateFixture } from "../../scripts/lineage_fixture.ts";
import { openDirectoryGateInput, runLineageGate } from "../../src/verify/mod.ts";

Deno.test("the committed lineage fixture is not stale (regenerate: scripts/lineage_fixture.ts)", async () => {
  const fresh = await generateFixture();
  const committed = await fixtureFiles(FIXTURE_DIR);
  deepStrictEqual([...committed.keys()].sort(), [...fresh.keys()].sort());
  for (const [rel, bytes] of fresh) {
    deepStrictEqual(committed.get(rel), bytes, `${rel} differs from what the script generates`);
  }
});

Deno.test("the committed lineage fixture passes the gate with its operator secret", async () => {
  const description = JSON.parse(await Deno.readTextFile(join(FIXTURE_DIR, "fixture.json")));
  const opened = await openDirectoryGateInput({
    logPath: join(FIXTURE_DIR, ".sdd/lineage/log.jsonl"),
    cardsDir: join(FIXTURE_DIR, ".sdd/agents"),
    operatorKey: new TextEncoder().encode(description.operator_secret),
  });
  ok(opened !== undefined);
  const result = await runLineageGate(opened.input);
  opened.close();
  deepStrictEqual(result.issues, []);
  strictEqual(result.entries, description.entries);
  strictEqual(result.artefacts, description.artefacts.length);
});

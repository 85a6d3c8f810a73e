// The gate's entry observer sees entries in log order even when signature lookups resolve out
// of order (a pack's members are read asynchronously): the pack's CSV check depends on it.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { signaturePath } from "../../src/lineage/mod.ts";
import { openDirectoryGateInput, runLineageGate } from "../../src/verify/mod.ts";
import { generateTree } from "../_helpers/lineage_tree.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("onEntry follows log order when signature reads finish out of order", async () => {
  await withTempDir(async (dir) => {
    generateTree(dir, { entries: 300, operatorSecret: "order-test" });
    const logPath = join(dir, ".sdd", "lineage", "log.jsonl");
    const opened = await openDirectoryGateInput({ logPath, cardsDir: join(dir, ".sdd", "agents") });
    if (opened === undefined) throw new Error("no log");
    const lineageDir = join(dir, ".sdd", "lineage");
    const { sha256Hex } = await import("../../src/crypto/mod.ts");
    // Lookups are by hash (as in an archive): where each entry's sidecar is, by its hash.
    const artefactOf = new Map<string, string>();
    for (const l of (await Deno.readTextFile(logPath)).trim().split("\n")) {
      const hash = "sha256:" + sha256Hex(new TextEncoder().encode(l));
      artefactOf.set(hash, JSON.parse(l).artefact_path);
    }
    const direct = (hash: string) => {
      const artefact = artefactOf.get(hash);
      return artefact === undefined
        ? undefined
        : Deno.readFileSync(join(lineageDir, signaturePath(artefact, hash)));
    };
    let n = 0;
    const seen: string[] = [];
    const result = await runLineageGate({
      ...opened.input,
      // Later lookups resolve first within a window, as a lazy archive reader might.
      signatures: (hash) =>
        new Promise((resolve) => setTimeout(() => resolve(direct(hash)), (++n % 7) === 0 ? 15 : 0)),
      onEntry: (_entry, hash) => seen.push(hash),
    }).finally(() => opened.close());
    strictEqual(result.ok, true, JSON.stringify(result.issues.slice(0, 3)));
    const lines = (await Deno.readTextFile(logPath)).trim().split("\n");
    strictEqual(seen.length, lines.length);
    deepStrictEqual(seen, lines.map((l) => "sha256:" + sha256Hex(new TextEncoder().encode(l))));
  });
});

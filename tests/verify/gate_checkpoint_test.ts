// The gate against the log's signed checkpoints (issue 15): every deletion, insertion,
// reordering or truncation before the latest checkpoint fails naming the checkpoint and the
// first differing leaf; lines after it are counted, never trusted; orphaned sidecars, forged
// or foreign-key checkpoints and checkpoints kept elsewhere are all checked.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { toHex } from "../../src/canonical/mod.ts";
import {
  ed25519KeyPairFromSeed,
  renderCheckpointDocument,
  sha256,
  signCheckpoint,
} from "../../src/crypto/mod.ts";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import { kidForPublicKey } from "../../src/lineage/mod.ts";
import {
  checkpointTree,
  gateDir,
  kinds,
  TEST_CHECKPOINT_SIGNER,
  testStore,
  writeValidTree,
} from "../_helpers/lineage_tree.ts";
import { withTempDir } from "../_helpers/temp.ts";

const enc = new TextEncoder();

function logPath(dir: string): string {
  return join(dir, ".sdd", "lineage", "log.jsonl");
}

async function readLines(dir: string): Promise<string[]> {
  return (await Deno.readTextFile(logPath(dir))).split("\n").slice(0, -1);
}

async function writeLines(dir: string, lines: string[]): Promise<void> {
  await Deno.writeTextFile(logPath(dir), lines.map((l) => l + "\n").join(""));
}

const hashOf = (line: string) => `sha256:${toHex(sha256(enc.encode(line)))}`;

async function withCheckpointedTree(fn: (dir: string) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    await writeValidTree(dir);
    await checkpointTree(dir);
    await fn(dir);
  });
}

Deno.test("a checkpointed tree passes; the report names the latest checkpoint", async () => {
  await withCheckpointedTree(async (dir) => {
    const result = await gateDir(dir);
    deepStrictEqual(result.issues, []);
    strictEqual(result.checkpoint?.latest?.size, 5);
    strictEqual(result.checkpoint?.matched, 1);
    strictEqual(result.checkpoint?.verified_signatures, 1);
    strictEqual(result.checkpoint?.not_checkpointed, 0);
  });
});

Deno.test("entries after the latest checkpoint are counted as not yet checkpointed", async () => {
  await withCheckpointedTree(async (dir) => {
    const { store, clock } = testStore(dir, { seed: 3 });
    clock.advance(10_000);
    await store.recordWrite("src/c.ts", enc.encode("c1"), {
      agent: "claude-1",
      toolCallId: "t",
      spanId: "s",
    });
    const result = await gateDir(dir);
    strictEqual(result.ok, true);
    strictEqual(result.checkpoint?.not_checkpointed, 1);
  });
});

Deno.test("a deleted unrelated line (a leaf nobody names) fails at the checkpoint with its leaf", async () => {
  await withCheckpointedTree(async (dir) => {
    const lines = await readLines(dir);
    // Line 5 is the pr:// artefact: no entry names it as a parent, so only the checkpoint and
    // its left-over sidecar can tell.
    const gone = hashOf(lines[4]);
    await writeLines(dir, lines.slice(0, 4));
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["log truncated", "orphaned signature"]);
    match(
      result.issues[0].message,
      /^checkpoints\.jsonl:1: log truncated: checkpoint #1 \(size 5, .*\) covers 5 lines, log\.jsonl has 4/,
    );
    strictEqual(result.issues[1].entry_hash, gone);
  });
});

Deno.test("a deleted middle line names the first differing leaf and the entry that is gone", async () => {
  await withCheckpointedTree(async (dir) => {
    const lines = await readLines(dir);
    const gone = hashOf(lines[3]); // src/b.ts, whose only child is none
    await writeLines(dir, [...lines.slice(0, 3), lines[4]]);
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["checkpoint mismatch", "orphaned signature"]);
    ok(
      result.issues[0].message.includes(
        `first differing leaf 3 (log.jsonl:4): the committed line ${gone} is no longer in the log (deleted)`,
      ),
      result.issues[0].message,
    );
  });
});

Deno.test("reordering two unrelated lines passes every per-entry check but not the checkpoint", async () => {
  await withCheckpointedTree(async (dir) => {
    const lines = await readLines(dir);
    // b.ts (line 4) and the pr:// entry (line 5) do not name each other.
    await writeLines(dir, [...lines.slice(0, 3), lines[4], lines[3]]);
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["checkpoint mismatch"]);
    match(
      result.issues[0].message,
      /first differing leaf 3 \(log\.jsonl:4\): the committed line sha256:\w+ is now at log\.jsonl:5 \(reordered\)/,
    );
  });
});

Deno.test("an inserted line and a truncation before the checkpoint both fail", async () => {
  await withCheckpointedTree(async (dir) => {
    const lines = await readLines(dir);
    await writeLines(dir, [lines[0], lines[0], ...lines.slice(1)]);
    const inserted = await gateDir(dir);
    ok(kinds(inserted).includes("checkpoint mismatch"), JSON.stringify(kinds(inserted)));
    match(
      inserted.issues.find((i) => i.kind === "checkpoint mismatch")?.message ?? "",
      /first differing leaf 1 \(log\.jsonl:2\)/,
    );
    await writeLines(dir, lines.slice(0, 2));
    ok(kinds(await gateDir(dir)).includes("log truncated"));
  });
});

Deno.test("a forged checkpoint, another key's checkpoint and an unknown key are reported", async () => {
  await withCheckpointedTree(async (dir) => {
    const cps = join(dir, ".sdd", "lineage", "checkpoints.jsonl");
    const line = await Deno.readTextFile(cps);
    await Deno.writeTextFile(cps, line.replace(/"size":5/, '"size":4'));
    deepStrictEqual(kinds(await gateDir(dir)), ["checkpoint signature invalid"]);
    const mallory = ed25519KeyPairFromSeed(new SeededRandom(66).bytes(32));
    const forged = await gateDir(dir, { operatorPublicKey: mallory.publicKey });
    ok(kinds(forged).includes("checkpoint signature invalid"));
    await Deno.writeTextFile(cps, line);
    const opened = await import("../../src/verify/mod.ts");
    const input = await opened.openDirectoryGateInput({
      logPath: logPath(dir),
      cardsDir: join(dir, ".sdd", "agents"),
    });
    const r = await opened.runLineageGate(
      input?.input ?? (() => {
        throw new Error("no log");
      })(),
    );
    input?.close();
    deepStrictEqual(kinds(r), ["checkpoint signature unverifiable"]);
  });
});

Deno.test("an older checkpoint kept elsewhere catches a log rewritten and re-checkpointed", async () => {
  await withCheckpointedTree(async (dir) => {
    const lines = await readLines(dir);
    const cpLine = (await Deno.readTextFile(join(dir, ".sdd/lineage/checkpoints.jsonl"))).trim();
    const old = JSON.parse(cpLine);
    const kept = renderCheckpointDocument({
      checkpoint: old,
      operatorPublicKey: TEST_CHECKPOINT_SIGNER.publicKey,
    });
    // The operator (or whoever holds its key) rewrites history: line 5 goes, all checkpoint
    // files are made anew over the rewritten log, and the sidecar is removed too.
    await writeLines(dir, lines.slice(0, 4));
    for (const f of ["checkpoints.jsonl", "checkpoint-leaves.bin", "checkpoint-state.json"]) {
      await Deno.remove(join(dir, ".sdd/lineage", f));
    }
    await Deno.remove(join(dir, ".sdd/lineage/signatures"), { recursive: true });
    await checkpointTree(dir, new FakeClock(Date.UTC(2026, 0, 3)));
    // Sidecars are gone, so re-sign nothing: look only at the checkpoint verdicts.
    const own = await gateDir(dir);
    ok(!kinds(own).some((k) => k.startsWith("checkpoint") || k === "log truncated"));
    const withKept = await gateDir(dir, {
      externalCheckpoints: [{ name: "auditor-copy.json", bytes: kept }],
    });
    const truncated = withKept.issues.find((i) => i.kind === "log truncated");
    ok(truncated, JSON.stringify(kinds(withKept)));
    match(
      truncated.message,
      /^auditor-copy\.json: log truncated: the checkpoint in auditor-copy\.json/,
    );
    // A checkpoint signed by another key is refused, not believed.
    const mallory = ed25519KeyPairFromSeed(new SeededRandom(67).bytes(32));
    const fake = renderCheckpointDocument({
      checkpoint: signCheckpoint({ ...old }, {
        ...mallory,
        kid: kidForPublicKey(mallory.publicKey),
      }),
      operatorPublicKey: mallory.publicKey,
    });
    const refused = await gateDir(dir, {
      externalCheckpoints: [{ name: "fake.json", bytes: fake }],
    });
    ok(kinds(refused).includes("checkpoint signature invalid"));
  });
});

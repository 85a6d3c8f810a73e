// `bernstein-verify consistency`: a newer checkpoint must provably extend an older one. Honest
// growth passes; a history rewritten and re-signed with the operator key is a fork; a missing
// proof, another key or a pinned fingerprint that does not match fail with their own words.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { ed25519KeyPairFromSeed, parseCheckpointDocument } from "../../src/crypto/mod.ts";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import { kidForPublicKey } from "../../src/lineage/mod.ts";
import { CHECKPOINT_FILES, exportCheckpoint, writeCheckpoint } from "../../src/tlog/mod.ts";
import { operatorFingerprint } from "../../src/pack_format/mod.ts";
import { verifyCheckpointConsistency } from "../../src/verify/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const enc = new TextEncoder();
const pair = ed25519KeyPairFromSeed(new SeededRandom(8).bytes(32));
const signer = { ...pair, kid: kidForPublicKey(pair.publicKey) };

async function logWith(dir: string, lines: string[]) {
  const path = join(dir, "log.jsonl");
  await Deno.writeFile(path, enc.encode(lines.map((l) => l + "\n").join("")));
  const clock = new FakeClock(Date.UTC(2026, 4, 1) + lines.length * 1000);
  const r = await writeCheckpoint({
    dir,
    log: "lineage",
    files: [{ name: "log.jsonl", path }],
    signer: signer,
    clock,
  });
  return r.checkpoint;
}

async function documentOf(dir: string, from: Uint8Array[] = []) {
  const text = await Deno.readTextFile(join(dir, CHECKPOINT_FILES.checkpoints));
  const latest = JSON.parse(text.trim().split("\n").at(-1) as string);
  return await exportCheckpoint({
    dir,
    checkpoint: latest,
    publicKey: pair.publicKey,
    from: from.map((b) => {
      const p = parseCheckpointDocument(b);
      if (!p.ok) throw new Error(p.problem);
      return p.document;
    }),
  });
}

const LINES = Array.from({ length: 9 }, (_, i) => `{"n":${i}}`);

Deno.test("a newer checkpoint with a proof from the older one passes; the proof is needed", async () => {
  await withTempDir(async (dir) => {
    await logWith(dir, LINES.slice(0, 5));
    const old = await documentOf(dir);
    await logWith(dir, LINES);
    const newer = await documentOf(dir, [old]);
    const r = verifyCheckpointConsistency(
      { name: "old.json", bytes: old },
      { name: "new.json", bytes: newer },
      { operatorFingerprint: operatorFingerprint(pair.publicKey) },
    );
    deepStrictEqual(r.errors, []);
    strictEqual(r.ok, true);
    deepStrictEqual([r.stats.old?.size, r.stats.new?.size], [5, 9]);
    const bare = verifyCheckpointConsistency(
      { name: "old.json", bytes: old },
      { name: "new.json", bytes: await documentOf(dir) },
    );
    deepStrictEqual(bare.errors.map((e) => e.kind), ["consistency proof missing"]);
    // Same checkpoint twice: trivially consistent.
    ok(verifyCheckpointConsistency({ name: "a", bytes: newer }, { name: "b", bytes: newer }).ok);
  });
});

Deno.test("a history rewritten and re-signed with the operator key is a fork of history", async () => {
  await withTempDir(async (honestDir) => {
    await withTempDir(async (forgedDir) => {
      await logWith(honestDir, LINES.slice(0, 5));
      const old = await documentOf(honestDir);
      // The forger rewrites line 3 and grows the log, checkpointing from scratch with the key.
      const rewritten = [...LINES];
      rewritten[2] = '{"n":"two"}';
      await logWith(forgedDir, rewritten);
      // Its writer will not even make a proof from the older checkpoint…
      let refused = false;
      try {
        await documentOf(forgedDir, [old]);
      } catch (error) {
        refused = true;
        match((error as Error).message, /not a prefix of this log's committed history: a fork/);
      }
      ok(refused);
      // …and a proof made from the forged tree (from its own size-5 prefix) does not bridge
      // the honest root.
      const forgedOld = await withTempDir(async (tmp) => {
        await logWith(tmp, rewritten.slice(0, 5));
        return await documentOf(tmp);
      });
      const proofFromForgedTree = JSON.parse(
        new TextDecoder().decode(await documentOf(forgedDir, [forgedOld])),
      );
      proofFromForgedTree.consistency[0].from_root =
        JSON.parse(new TextDecoder().decode(old)).checkpoint.root;
      const r = verifyCheckpointConsistency(
        { name: "old.json", bytes: old },
        { name: "new.json", bytes: enc.encode(JSON.stringify(proofFromForgedTree)) },
      );
      deepStrictEqual(r.errors.map((e) => e.kind), ["fork of history"]);
      match(
        r.errors[0].message,
        /^new\.json: fork of history: .* the consistency proof does not bridge the two roots/,
      );
      // A shorter newer checkpoint is a fork too.
      const shrunk = verifyCheckpointConsistency(
        { name: "new.json", bytes: await documentOf(forgedDir) },
        { name: "old.json", bytes: old },
      );
      deepStrictEqual(shrunk.errors.map((e) => e.kind), ["fork of history"]);
    });
  });
});

Deno.test("checkpoints by different keys, a wrong pin or a damaged document fail", async () => {
  await withTempDir(async (dir) => {
    await logWith(dir, LINES.slice(0, 5));
    const old = await documentOf(dir);
    const other = ed25519KeyPairFromSeed(new SeededRandom(9).bytes(32));
    const pinned = verifyCheckpointConsistency(
      { name: "old.json", bytes: old },
      { name: "new.json", bytes: old },
      { operatorFingerprint: operatorFingerprint(other.publicKey) },
    );
    deepStrictEqual(pinned.errors.map((e) => e.kind), ["operator key mismatch"]);
    const keyed = verifyCheckpointConsistency(
      { name: "old.json", bytes: old },
      { name: "new.json", bytes: old },
      { operatorPublicKey: other.publicKey },
    );
    ok(keyed.errors.some((e) => e.kind === "operator key mismatch"));
    const damaged = verifyCheckpointConsistency(
      { name: "old.json", bytes: old.subarray(0, 40) },
      { name: "new.json", bytes: old },
    );
    deepStrictEqual(damaged.errors.map((e) => e.kind), ["invalid checkpoint"]);
    const text = new TextDecoder().decode(old).replace('"size":5', '"size":6');
    const forged = verifyCheckpointConsistency(
      { name: "old.json", bytes: old },
      { name: "new.json", bytes: enc.encode(text) },
    );
    deepStrictEqual(forged.errors.map((e) => e.kind), ["checkpoint signature invalid"]);
  });
});

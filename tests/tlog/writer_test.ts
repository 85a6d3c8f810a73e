// The checkpoint writer: appends checkpoints that extend the committed history, keeps the
// leaf record in step, uses its hint when it holds and reads the log when not, and refuses
// to sign over a changed history, damaged files or another operator key.
import { deepStrictEqual, match, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  checkLogAgainstCheckpoints,
  ed25519KeyPairFromSeed,
  reviewCheckpointFile,
  sha256,
} from "../../src/crypto/mod.ts";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import { kidForPublicKey } from "../../src/lineage/mod.ts";
import { CHECKPOINT_FILES, CheckpointError, writeCheckpoint } from "../../src/tlog/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const enc = new TextEncoder();
const pair = ed25519KeyPairFromSeed(new SeededRandom(4).bytes(32));
const signer = { ...pair, kid: kidForPublicKey(pair.publicKey) };

async function append(path: string, lines: string[]): Promise<void> {
  await Deno.writeFile(path, enc.encode(lines.map((l) => l + "\n").join("")), { append: true });
}

function digestsOf(text: string): { digests: Uint8Array; count: number } {
  const lines = text.split("\n");
  lines.pop(); // the open tail (empty when the file ends in a newline)
  const digests = new Uint8Array(lines.length * 32);
  lines.forEach((l, i) => digests.set(sha256(enc.encode(l)), i * 32));
  return { digests, count: lines.length };
}

function setup(dir: string) {
  const logPath = join(dir, "log.jsonl");
  const clock = new FakeClock(Date.UTC(2026, 2, 1));
  const write = () => {
    clock.advance(1000);
    return writeCheckpoint({
      dir,
      log: "lineage",
      files: [{ name: "log.jsonl", path: logPath }],
      signer,
      clock,
    });
  };
  return { logPath, write };
}

async function verify(dir: string, logPath: string) {
  const review = reviewCheckpointFile(
    await Deno.readFile(join(dir, CHECKPOINT_FILES.checkpoints)),
    { name: "checkpoints.jsonl", log: "lineage", publicKey: pair.publicKey },
  );
  const result = checkLogAgainstCheckpoints(
    digestsOf(await Deno.readTextFile(logPath)),
    review.usable,
    { logName: "log.jsonl", where: (i) => `log.jsonl:${i + 1}` },
  );
  return { review, result };
}

Deno.test("checkpoints grow with the log and every one of them matches it", async () => {
  await withTempDir(async (dir) => {
    const { logPath, write } = setup(dir);
    const empty = await write();
    strictEqual(empty.checkpoint.size, 0);
    strictEqual(
      empty.checkpoint.root,
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    await append(logPath, ["a", "b", "c"]);
    const first = await write();
    deepStrictEqual([first.created, first.checkpoint.size, first.line], [true, 3, 2]);
    const again = await write();
    strictEqual(again.created, false, "nothing new, nothing written");
    strictEqual(again.checkpoint.ts, first.checkpoint.ts);
    await append(logPath, ["d", "e"]);
    // A torn tail is not a line yet: it is not covered.
    await Deno.writeFile(logPath, enc.encode("{torn"), { append: true });
    const second = await write();
    strictEqual(second.checkpoint.size, 5);
    strictEqual((await Deno.stat(join(dir, CHECKPOINT_FILES.leaves))).size, 5 * 32);
    const { review, result } = await verify(dir, logPath);
    deepStrictEqual(review.problems, []);
    strictEqual(review.verified, 3);
    deepStrictEqual(result.findings, []);
    strictEqual(result.matched, 3);
  });
});

Deno.test("without its hint the writer reads the log and still extends the committed history", async () => {
  await withTempDir(async (dir) => {
    const { logPath, write } = setup(dir);
    await append(logPath, ["a", "b", "c"]);
    await write();
    await Deno.remove(join(dir, CHECKPOINT_FILES.state));
    await append(logPath, ["d"]);
    strictEqual((await write()).checkpoint.size, 4);
    // A stale hint (pointing at a line that is not where it says) is not trusted either.
    await Deno.writeTextFile(
      join(dir, CHECKPOINT_FILES.state),
      (await Deno.readTextFile(join(dir, CHECKPOINT_FILES.state))).replace(
        /"offset":\d+/,
        '"offset":3',
      ),
    );
    await append(logPath, ["e"]);
    strictEqual((await write()).checkpoint.size, 5);
    deepStrictEqual((await verify(dir, logPath)).result.findings, []);
  });
});

Deno.test("the writer refuses to sign over a log whose committed lines changed", async () => {
  await withTempDir(async (dir) => {
    const { logPath, write } = setup(dir);
    await append(logPath, ["a", "b", "c"]);
    await write();
    await Deno.writeTextFile(logPath, "a\nc\nd\ne\n"); // b deleted, lines added
    await Deno.remove(join(dir, CHECKPOINT_FILES.state));
    await rejects(write(), CheckpointError);
    await rejects(write(), (e: Error) => {
      match(
        e.message,
        /no longer holds what the latest checkpoint committed to \(line 2 differs\)/,
      );
      return true;
    });
    // With the hint the same change is caught too: its last committed line is not where it was.
    await Deno.writeTextFile(logPath, "a\nb\nc\n");
    await write();
    await Deno.writeTextFile(logPath, "a\nB\nc\nd\n");
    await rejects(write(), /line 2 differs/);
  });
});

Deno.test("damaged checkpoint files and another operator key are refused with a reason", async () => {
  await withTempDir(async (dir) => {
    const { logPath, write } = setup(dir);
    await append(logPath, ["a", "b"]);
    await write();
    const cps = join(dir, CHECKPOINT_FILES.checkpoints);
    const good = await Deno.readFile(cps);
    await Deno.writeFile(cps, good.subarray(0, good.length - 1));
    await rejects(write(), /torn/);
    await Deno.writeTextFile(cps, "not json\n");
    await rejects(write(), /checkpoints\.jsonl: line 1/);
    await Deno.writeFile(cps, good);
    await Deno.truncate(join(dir, CHECKPOINT_FILES.leaves), 32);
    await Deno.remove(join(dir, CHECKPOINT_FILES.state));
    await append(logPath, ["c"]);
    await rejects(write(), /holds 1 leaves, the latest checkpoint covers 2/);
    const stranger = ed25519KeyPairFromSeed(new SeededRandom(99).bytes(32));
    await rejects(
      writeCheckpoint({
        dir,
        log: "lineage",
        files: [{ name: "log.jsonl", path: logPath }],
        signer: { ...stranger, kid: kidForPublicKey(stranger.publicKey) },
        clock: new FakeClock(),
      }),
      /is not signed by this operator key/,
    );
  });
});

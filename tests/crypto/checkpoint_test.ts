// Signed checkpoints: the line and document formats, signatures, and the check of a log
// against its checkpoints with the first differing leaf named for every kind of tampering.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { canonicalBytes, toHex } from "../../src/canonical/mod.ts";
import {
  checkLogAgainstCheckpoints,
  checkpointLineBytes,
  type CheckpointUnderTest,
  ed25519KeyPairFromSeed,
  MerkleFrontier,
  merkleLeafHash,
  parseCheckpointDocument,
  parseCheckpointLine,
  renderCheckpointDocument,
  sha256,
  signCheckpoint,
  type SignedCheckpoint,
  verifyCheckpointSignature,
} from "../../src/crypto/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import { kidForPublicKey } from "../../src/lineage/mod.ts";

const enc = new TextEncoder();
const pair = ed25519KeyPairFromSeed(new SeededRandom(1).bytes(32));
const signer = { ...pair, kid: kidForPublicKey(pair.publicKey) };
const other = ed25519KeyPairFromSeed(new SeededRandom(2).bytes(32));

function digests(lines: string[]): Uint8Array {
  const out = new Uint8Array(lines.length * 32);
  lines.forEach((l, i) => out.set(sha256(enc.encode(l)), i * 32));
  return out;
}

function rootOf(lines: string[]): string {
  const d = digests(lines);
  const f = new MerkleFrontier();
  for (let i = 0; i < lines.length; i++) f.push(merkleLeafHash(d, i * 32));
  return toHex(f.root());
}

function checkpointOf(lines: string[], size: number, n = 1): CheckpointUnderTest {
  const checkpoint = signCheckpoint({
    log: "lineage",
    root: rootOf(lines.slice(0, size)),
    size,
    ts: `2026-01-01T00:00:0${n}.000000Z`,
  }, signer);
  return { checkpoint, where: `checkpoints.jsonl:${n}`, label: `checkpoint #${n}` };
}

const LINES = Array.from({ length: 12 }, (_, i) => `{"line":${i}}`);

function check(log: string[], committed: string[] | "missing" | undefined, cps = [8, 12]) {
  const all = cps.map((s, i) => checkpointOf(LINES, s, i + 1));
  return checkLogAgainstCheckpoints({ digests: digests(log), count: log.length }, all, {
    logName: "log.jsonl",
    where: (i) => `log.jsonl:${i + 1}`,
    committed: committed === undefined
      ? undefined
      : committed === "missing"
      ? { name: "checkpoint-leaves.bin", problem: "is missing" }
      : { name: "checkpoint-leaves.bin", digests: digests(committed), count: committed.length },
  });
}

const hashOf = (l: string) => `sha256:${toHex(sha256(enc.encode(l)))}`;

Deno.test("a checkpoint line is canon bytes, signed over {log, root, size, ts}, and parses back", () => {
  const c = checkpointOf(LINES, 5).checkpoint;
  const line = checkpointLineBytes(c);
  const parsed = parseCheckpointLine(line);
  ok(parsed.ok);
  deepStrictEqual(parsed.checkpoint, c);
  ok(verifyCheckpointSignature(parsed, pair.publicKey));
  ok(!verifyCheckpointSignature(parsed, other.publicKey));
  const body = canonicalBytes({ log: c.log, root: c.root, size: c.size, ts: c.ts }, "canon");
  const forged: SignedCheckpoint = { ...c, size: 6 };
  const reparsed = parseCheckpointLine(checkpointLineBytes(forged));
  ok(reparsed.ok && !verifyCheckpointSignature(reparsed, pair.publicKey), "size is signed");
  strictEqual(new TextDecoder().decode(body).startsWith('{"log":"lineage","root":"'), true);
});

Deno.test("checkpoint lines with another field set, bad values or spacing are refused", () => {
  const c = checkpointOf(LINES, 5).checkpoint;
  const text = new TextDecoder().decode(checkpointLineBytes(c));
  const bad = [
    text.replace('"size":5', '"size":-1'),
    text.replace('"log":"lineage"', '"log":"other"'),
    text.replace('"root":"', '"root":"x'),
    text.replace(',"ts"', ',"extra":1,"ts"'),
    text.replace(".000000Z", "Z"),
    text.replace('{"log"', '{ "log"'),
    text.replace(/"signature":"[^"]*"/, '"signature":"nope"'),
  ];
  for (const b of bad) ok(!parseCheckpointLine(enc.encode(b)).ok, b);
});

Deno.test("a checkpoint document round-trips and carries its consistency proofs", () => {
  const c = checkpointOf(LINES, 12).checkpoint;
  const bytes = renderCheckpointDocument({
    checkpoint: c,
    operatorPublicKey: pair.publicKey,
    consistency: [{ from_size: 8, from_root: rootOf(LINES.slice(0, 8)), proof: ["ab".repeat(32)] }],
  });
  const parsed = parseCheckpointDocument(bytes);
  ok(parsed.ok);
  deepStrictEqual(parsed.document.checkpoint, c);
  strictEqual(parsed.document.consistency[0].from_size, 8);
  ok(!parseCheckpointDocument(enc.encode("{}")).ok);
  ok(!parseCheckpointDocument(bytes.subarray(0, 20)).ok);
});

Deno.test("an untouched log matches every checkpoint", () => {
  const r = check(LINES, LINES);
  deepStrictEqual(r.findings, []);
  strictEqual(r.matched, 2);
  // Lines after the latest checkpoint do not matter to the check.
  strictEqual(check([...LINES, "{}"], LINES).findings.length, 0);
});

Deno.test("a deleted line is named: leaf, line, and the committed entry that is gone", () => {
  const log = LINES.filter((_, i) => i !== 3);
  const r = check(log, LINES);
  strictEqual(r.findings[0].kind, "checkpoint mismatch");
  match(
    r.findings[0].message,
    /^checkpoints\.jsonl:1: checkpoint mismatch: checkpoint #1 \(size 8, /,
  );
  ok(r.findings[0].message.includes(`first differing leaf 3 (log.jsonl:4)`), r.findings[0].message);
  ok(r.findings[0].message.includes(`${hashOf(LINES[3])} is no longer in the log (deleted)`));
  match(
    r.findings[1].message,
    /1 later checkpoint \(up to checkpoint #2, size 12\) does not match/,
  );
});

Deno.test("a deleted tip and a truncated log fail as truncated", () => {
  for (const log of [LINES.slice(0, 11), LINES.slice(0, 5)]) {
    const r = check(log, LINES);
    const truncated = r.findings.find((f) => f.kind === "log truncated");
    ok(truncated, JSON.stringify(r.findings));
    match(truncated.message, new RegExp(`covers \\d+ lines, log.jsonl has ${log.length}`));
  }
});

Deno.test("inserted, reordered and rewritten lines are told apart", () => {
  const inserted = [...LINES.slice(0, 2), '{"evil":1}', ...LINES.slice(2)];
  match(
    check(inserted, LINES).findings[0].message,
    /leaf 2 \(log.jsonl:3\): sha256:\w+ was not in the committed log \(inserted\)/,
  );
  const reordered = [...LINES];
  [reordered[1], reordered[6]] = [reordered[6], reordered[1]];
  match(
    check(reordered, LINES).findings[0].message,
    /leaf 1 \(log.jsonl:2\): the committed line sha256:\w+ is now at log.jsonl:7 \(reordered\)/,
  );
  const rewritten = [...LINES];
  rewritten[5] = '{"line":"five"}';
  match(
    check(rewritten, LINES).findings[0].message,
    /leaf 5 \(log.jsonl:6\): .* \(line rewritten\)/,
  );
});

Deno.test("without a trustworthy leaf record the mismatch still fails, saying why no leaf is named", () => {
  const log = LINES.filter((_, i) => i !== 3);
  match(
    check(log, "missing").findings[0].message,
    /checkpoint-leaves\.bin is missing, so the first differing leaf cannot be named/,
  );
  match(check(log, undefined).findings[0].message, /no committed leaf record/);
  // A record rewritten along with the log does not reproduce the signed root: not believed.
  match(check(log, log).findings[0].message, /does not reproduce this checkpoint either/);
});

Deno.test("a line too long to hash makes the checkpoints covering it fail, not pass", () => {
  const r = checkLogAgainstCheckpoints(
    { digests: digests(LINES), count: 12, unknown: [9] },
    [checkpointOf(LINES, 8, 1), checkpointOf(LINES, 12, 2)],
    { logName: "log.jsonl", where: (i) => `log.jsonl:${i + 1}` },
  );
  strictEqual(r.matched, 1);
  match(r.findings[0].message, /log\.jsonl:10 is longer than the reader keeps/);
});

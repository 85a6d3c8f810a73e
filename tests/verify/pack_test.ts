// verifyPack in process, for what the conformance suite does not spell out: the figures it
// reports, pinning, the member set, the manifest's shape, external parents and limits. The
// attack catalogue itself runs as a subprocess in tests/conformance/.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { canonicalBytes, type JsonObject, parseJsonBytes } from "../../src/canonical/mod.ts";
import { sealPack, zipMembers } from "../../src/compliance/mod.ts";
import { ed25519KeyPairFromSeed } from "../../src/crypto/mod.ts";
import {
  manifestOutputHash,
  operatorFingerprint,
  PACK_CHECKPOINT_MEMBER,
  PACK_MEMBERS,
} from "../../src/pack_format/mod.ts";
import {
  memoryBytes,
  PACK_LIMITS,
  type PackVerifyResult,
  verifyPack,
} from "../../src/verify/mod.ts";
import { buildPack, renderPackMembers } from "../../src/compliance/mod.ts";
import { rawZip, zipEntries } from "../../scripts/raw_zip.ts";
import { sampleCheckpoint, sampleLog, samplePackContent } from "../../scripts/sample_pack.ts";

const sample = sampleLog({ seed: 11 });
const content = samplePackContent(sample);
const op = sample.operator;
const built = buildPack(content, op);

function kinds(r: PackVerifyResult): string[] {
  return [...new Set(r.errors.map((e) => e.kind))].sort();
}

function reseal(
  members: Map<string, Uint8Array>,
  edit: (manifest: JsonObject) => void = () => {},
): Uint8Array {
  const m = parseJsonBytes(members.get(PACK_MEMBERS.manifest) as Uint8Array) as JsonObject;
  const { input_hashes: _, output_hash: __, ...base } = m;
  edit(base);
  const rest = new Map(members);
  rest.delete(PACK_MEMBERS.manifest);
  rest.delete(PACK_MEMBERS.manifestSignature);
  return zipMembers(sealPack(rest, base, op).members);
}

Deno.test("an honest pack passes with the figures of its window", async () => {
  const r = await verifyPack(memoryBytes(built.zip), {
    operatorFingerprint: operatorFingerprint(op.publicKey),
  });
  deepStrictEqual(r.errors, []);
  strictEqual(r.ok, true);
  strictEqual(r.stats.entries, content.entries.length);
  strictEqual(r.stats.signatures, content.entries.length);
  strictEqual(r.stats.agents, new Set(content.entries.map((e) => e.entry.agent_id)).size);
  strictEqual(r.stats.cards, content.cards.length);
  strictEqual(r.stats.org, "Acme Bank");
  deepStrictEqual(r.stats.period, { since: "2026-03-01", until: "2026-03-31" });
  strictEqual(r.stats.built_at, "2026-04-01T00:00:00Z");
  strictEqual(r.stats.operator_fingerprint, operatorFingerprint(op.publicKey));
  strictEqual(r.stats.operator_pinned, "fingerprint");
  strictEqual(r.stats.hmac_checked, false);
  deepStrictEqual(r.notes, []);
  ok(content.externalParents.length > 0, "the sample window builds on earlier entries");
});

Deno.test("pinning: the right key passes, another key fails, no pin passes with a note", async () => {
  const other = ed25519KeyPairFromSeed(new Uint8Array(32).fill(9)).publicKey;
  const byKey = await verifyPack(memoryBytes(built.zip), { operatorPublicKey: op.publicKey });
  strictEqual(byKey.ok, true);
  strictEqual(byKey.stats.operator_pinned, "key");
  const wrong = await verifyPack(memoryBytes(built.zip), { operatorPublicKey: other });
  deepStrictEqual(kinds(wrong), ["operator key mismatch"]);
  const wrongFp = await verifyPack(memoryBytes(built.zip), {
    operatorFingerprint: operatorFingerprint(other),
  });
  deepStrictEqual(kinds(wrongFp), ["operator key mismatch"]);
  const none = await verifyPack(memoryBytes(built.zip));
  strictEqual(none.ok, true);
  ok(none.notes[0].startsWith("operator key not pinned"));
});

Deno.test("a member outside the format and a missing fixed member are both reported", async () => {
  const extra = new Map(built.members);
  extra.set("notes.txt", new TextEncoder().encode("hi"));
  deepStrictEqual(kinds(await verifyPack(memoryBytes(zipMembers(extra)))), [
    "member not in manifest",
    "unexpected member",
  ]);
  const missing = new Map(built.members);
  missing.delete(PACK_MEMBERS.csv);
  const r = await verifyPack(memoryBytes(zipMembers(missing)));
  deepStrictEqual(kinds(r), ["missing member"]);
  deepStrictEqual(r.errors.map((e) => e.message), [
    "article12-evidence.csv: missing member",
    "article12-evidence.csv: missing member (listed in the manifest)",
  ]);
});

Deno.test("a manifest with spaces, an unknown field or a wrong version is invalid", async () => {
  const spaced = new Map(built.members);
  const m = parseJsonBytes(built.manifestBytes) as JsonObject;
  const text = JSON.stringify(m, (_, v) => typeof v === "bigint" ? Number(v) : v, 1);
  spaced.set(PACK_MEMBERS.manifest, new TextEncoder().encode(text));
  const r1 = await verifyPack(memoryBytes(zipMembers(spaced)));
  ok(kinds(r1).includes("manifest invalid"));
  ok(r1.errors[0].message.includes("bytes are not canonical"));
  const r2 = await verifyPack(memoryBytes(reseal(new Map(built.members), (b) => {
    b.comment = "hello";
  })));
  // Without a valid manifest the window's earlier parents are unknown, so they dangle too.
  deepStrictEqual(kinds(r2), ["dangling parent_hash", "manifest invalid"]);
  ok(r2.errors[0].message.endsWith('unknown field "comment"'));
  ok(r2.notes.some((n) => n.includes("external_parents")));
  const r3 = await verifyPack(memoryBytes(reseal(new Map(built.members), (b) => {
    b.pack_format_version = 1;
  })));
  ok(r3.errors.some((e) => e.message.endsWith("pack_format_version must be one of 2, 3")));
});

Deno.test("external parents must be named by the window and must not be window entries", async () => {
  const first = content.entries[0].hash;
  const r = await verifyPack(memoryBytes(reseal(new Map(built.members), (b) => {
    b.external_parents = [...(b.external_parents as string[]), first].sort();
  })));
  deepStrictEqual(kinds(r), ["external parent invalid"]);
  ok(r.errors[0].message.includes(`${first} is an entry of the window itself`));
  const dropped = await verifyPack(memoryBytes(reseal(new Map(built.members), (b) => {
    b.external_parents = [];
  })));
  deepStrictEqual(kinds(dropped), ["dangling parent_hash"]);
});

Deno.test("each member kind has its own size limit", async () => {
  const limits = structuredClone(PACK_LIMITS) as typeof PACK_LIMITS;
  (limits.member as Record<string, number>).manifest = 1000;
  const r = await verifyPack(memoryBytes(built.zip), { limits });
  deepStrictEqual(kinds(r), ["oversized member"]);
  ok(r.errors[0].message.startsWith('"pack-manifest.json": oversized member: declares'));
});

Deno.test("a damaged log member is a corrupt member, not a crash", async () => {
  const entries = zipEntries(built.members).map((m) =>
    m.name === PACK_MEMBERS.log ? { ...m, crc: 12345 } : m
  );
  const r = await verifyPack(memoryBytes(rawZip(entries)));
  deepStrictEqual(kinds(r), ["corrupt member"]);
  strictEqual(
    r.errors[0].message,
    "lineage-log.jsonl: CRC-32 does not match the central directory",
  );
});

Deno.test("a log that cannot be read through counts no entries and no agents, with or without a worker", async () => {
  // The CRC is checked when the log ends: the gate has seen (most of) its entries by then, and
  // how many depended on the threads' timing; the figures must not.
  const long = sampleLog({ seed: 9, entries: 700, artefacts: 20 });
  const rendered = renderPackMembers(samplePackContent(long));
  const honest = sealPack(rendered.members, rendered.manifestBase, long.operator).members;
  const zip = rawZip(
    zipEntries(honest).map((m) => m.name === PACK_MEMBERS.log ? { ...m, crc: 12345 } : m),
  );
  for (const workers of [0, 1]) {
    const r = await verifyPack(memoryBytes(zip), { workers });
    strictEqual(r.stats.entries, 0);
    strictEqual(r.stats.agents, 0);
    ok(
      r.errors.some((e) =>
        e.message === "lineage-log.jsonl: CRC-32 does not match the central directory"
      ),
    );
  }
});

Deno.test("the output hash covers the manifest without its own field", () => {
  const m = parseJsonBytes(built.manifestBytes) as JsonObject;
  strictEqual(m.output_hash, manifestOutputHash(m));
  const { output_hash: _, ...rest } = m;
  ok(!new TextDecoder().decode(canonicalBytes(rest, "canon")).includes("output_hash"));
  strictEqual(renderPackMembers(content).manifestBase.output_hash, undefined);
});

Deno.test("a long pack gives the same verdict with and without a worker thread", async () => {
  // Enough entries that the worker starts (the first batches are always checked inline).
  const long = sampleLog({ seed: 5, entries: 700, artefacts: 20 });
  const longContent = samplePackContent(long);
  const rendered = renderPackMembers(longContent);
  const pin = { operatorFingerprint: operatorFingerprint(long.operator.publicKey) };
  const honest = zipMembers(
    sealPack(rendered.members, rendered.manifestBase, long.operator).members,
  );
  const inline = await verifyPack(memoryBytes(honest), { ...pin, workers: 0 });
  const pooled = await verifyPack(memoryBytes(honest), { ...pin, workers: 1 });
  deepStrictEqual(inline.errors, []);
  deepStrictEqual(pooled, inline);
  // A worker that marks its replies shows the batches (signatures shipped from the archive)
  // really went to it, and found nothing else.
  const marked = await verifyPack(memoryBytes(honest), {
    ...pin,
    workers: 1,
    workerUrl: new URL("./_marking_worker.ts", import.meta.url),
  });
  ok(marked.errors.length > 0 && marked.errors.every((e) => e.kind === "worker"));
  // Entry 650's signature swapped for entry 649's, resealed so only the signature is wrong.
  const [a, b] = [longContent.entries[649], longContent.entries[648]];
  const members = new Map(rendered.members);
  const nameOf = (hash: string) => `signatures/${hash.slice(7)}.jws`;
  members.set(nameOf(a.hash), members.get(nameOf(b.hash)) as Uint8Array);
  const forged = zipMembers(sealPack(members, rendered.manifestBase, long.operator).members);
  const forgedInline = await verifyPack(memoryBytes(forged), { ...pin, workers: 0 });
  const forgedPooled = await verifyPack(memoryBytes(forged), { ...pin, workers: 1 });
  // Another agent's signature: its header names another kid (a same-agent one would not verify).
  deepStrictEqual(kinds(forgedInline), ["kid binding mismatch"]);
  ok(forgedInline.errors[0].message.startsWith("lineage-log.jsonl:"));
  deepStrictEqual(forgedPooled, forgedInline);
});

Deno.test("a CSV row changed past the first batches is a CSV mismatch with and without a worker", async () => {
  // The window's CSV rows are made where each batch is checked (a worker, past the first 256
  // entries): a change there must be found exactly as on the main thread.
  const long = sampleLog({ seed: 6, entries: 700, artefacts: 20 });
  const rendered = renderPackMembers(samplePackContent(long));
  const pin = { operatorFingerprint: operatorFingerprint(long.operator.publicKey) };
  const csv = new TextDecoder().decode(rendered.members.get(PACK_MEMBERS.csv) as Uint8Array);
  const rows = csv.split("\n");
  // Row 651 (after the header): entry 650's span id gains one character.
  rows[651] = rows[651].replace(",span-", ",span-x");
  ok(rows[651].includes("span-x"));
  const members = new Map(rendered.members);
  members.set(PACK_MEMBERS.csv, new TextEncoder().encode(rows.join("\n")));
  const tampered = zipMembers(sealPack(members, rendered.manifestBase, long.operator).members);
  const inline = await verifyPack(memoryBytes(tampered), { ...pin, workers: 0 });
  const pooled = await verifyPack(memoryBytes(tampered), { ...pin, workers: 1 });
  deepStrictEqual(kinds(inline), ["CSV mismatch"]);
  deepStrictEqual(pooled, inline);
});

Deno.test("a format-3 pack reports its checkpoint; its checkpoint members are required", async () => {
  const r = await verifyPack(memoryBytes(built.zip));
  strictEqual(r.stats.pack_format_version, 3);
  strictEqual(r.stats.checkpoint?.size, sample.log.length, "covers the whole log, not the window");
  const missing = new Map(built.members);
  missing.delete(PACK_CHECKPOINT_MEMBER);
  deepStrictEqual(kinds(await verifyPack(memoryBytes(reseal(missing)))), ["missing member"]);
  // Format 2 packs carry none: one that does is not what it says.
  const v2 = await verifyPack(memoryBytes(reseal(new Map(built.members), (b) => {
    b.pack_format_version = 2;
  })));
  deepStrictEqual(kinds(v2), ["unexpected member"]);
});

Deno.test("a checkpoint by another key, or one that omits a window entry, fails", async () => {
  const mallory = ed25519KeyPairFromSeed(new Uint8Array(32).fill(7));
  const signedByMallory = buildPack({
    ...content,
    checkpoint: sampleCheckpoint(
      { ...sample, operator: { seed: mallory.seed, publicKey: mallory.publicKey } },
      windowLeaves(),
    ),
  }, op);
  deepStrictEqual(kinds(await verifyPack(memoryBytes(signedByMallory.zip))), [
    "checkpoint signature invalid",
    "operator key mismatch",
  ]);
  // A checkpoint of only the log's first lines cannot place the whole window.
  const short = { ...sample, log: sample.log.slice(0, sample.log.length - 1) };
  let refused = false;
  try {
    sampleCheckpoint(short, windowLeaves());
  } catch (error) {
    refused = true;
    ok((error as Error).message.includes("is not covered by the checkpoint"));
  }
  ok(refused, "the builder refuses a checkpoint that does not cover the window");
});

function windowLeaves(): { hash: string; leaf: number }[] {
  const first = sample.log.length - content.entries.length;
  return content.entries.map((e, i) => ({ hash: e.hash, leaf: first + i }));
}

Deno.test("in a pack, problems name pack members, never .sdd paths", async () => {
  const target = content.entries[3];
  const member = `signatures/${target.hash.slice(7)}.jws`;
  const missing = new Map(built.members);
  missing.delete(member);
  const r = await verifyPack(memoryBytes(reseal(missing)));
  const issue = r.errors.find((e) => e.kind === "invalid signature");
  ok(issue, JSON.stringify(r.errors));
  ok(issue.message.includes(`no signature member ${member}`), issue.message);
  ok(r.errors.every((e) => !/signatures\/[0-9a-f]{2}\/[0-9a-f]{64}\//.test(e.message)));
});

Deno.test("orphan signatures are reported once each, in archive order", async () => {
  const members = new Map(built.members);
  const signature = [...members].find(([n]) => n.startsWith("signatures/"))?.[1] as Uint8Array;
  // Hashes whose table slots fall in another order than their names.
  const names = ["80", "7f", "01"].map((b) => `signatures/${b.repeat(32)}.jws`);
  for (const name of names) members.set(name, signature);
  const r = await verifyPack(memoryBytes(reseal(members)), {
    operatorFingerprint: operatorFingerprint(op.publicKey),
  });
  deepStrictEqual(
    r.errors.filter((e) => e.kind === "orphan signature").map((e) => e.message.split(":")[0]),
    [...names].sort(),
  );
});

Deno.test("member checks done beside the gate report in member order, before the window's", async () => {
  // The signature members' hashes are checked while the gate reads the log; their failures
  // must come exactly where the member loop reports them: in member order, among the failures
  // found at once (a corrupt member between them, a card and the CSV before them), and before
  // every failure of the window phase. 700 entries: many log chunks, a worker, and members
  // still unchecked when the log ends (the last is checked after the window).
  const long = sampleLog({ seed: 7, entries: 700, artefacts: 20 });
  const rendered = renderPackMembers(samplePackContent(long));
  const pin = { operatorFingerprint: operatorFingerprint(long.operator.publicKey) };
  const honest = sealPack(rendered.members, rendered.manifestBase, long.operator).members;
  const names = [...honest.keys()].sort();
  const signatures = names.filter((n) => n.startsWith("signatures/"));
  const card = names.find((n) => n.startsWith("agent-cards/")) as string;
  const [first, corrupt, middle, last] = [
    signatures[0],
    signatures[1],
    signatures[350],
    signatures[signatures.length - 1],
  ];
  const flipped = new Set([card, PACK_MEMBERS.csv, first, middle, last]);
  const flip = (b: Uint8Array) => b.map((x, i) => i === b.length - 2 ? x ^ 1 : x);
  const zip = rawZip(
    zipEntries(honest).map((m) => {
      const method = (m.name as string).startsWith("signatures/") ? 0 : 8;
      if (flipped.has(m.name as string)) return { ...m, method, data: flip(m.data) };
      return m.name === corrupt ? { ...m, method, crc: 1 } : { ...m, method };
    }),
  );
  const inline = await verifyPack(memoryBytes(zip), { ...pin, workers: 0 });
  const member = new Set(["input hash mismatch", "corrupt member"]);
  const found = inline.errors.filter((e) => member.has(e.kind));
  deepStrictEqual(found.map((e) => `${e.kind} ${e.message.split(":")[0]}`), [
    `input hash mismatch ${card}`,
    `input hash mismatch ${PACK_MEMBERS.csv}`,
    `input hash mismatch ${first}`,
    `corrupt member ${corrupt}`,
    `input hash mismatch ${middle}`,
    `input hash mismatch ${last}`,
  ]);
  deepStrictEqual(inline.errors.slice(0, found.length), found);
  ok(inline.errors.length > found.length); // the window phase found the flipped signatures too
  ok(inline.errors.some((e) => e.kind === "CSV mismatch"));
  deepStrictEqual(await verifyPack(memoryBytes(zip), { ...pin, workers: 1 }), inline);
});

Deno.test("gate workers started with the archive phases: a worker that cannot load or dies changes no verdict, and none outlives the call", async () => {
  // verifyPack starts the gate's workers once the directory shows a long window; the gate takes
  // them later. Whatever happens to them meanwhile, the verdict is the one checked on this
  // thread, and they are stopped however the call ends (a pack without a log never reaches
  // the gate).
  const long = sampleLog({ seed: 8, entries: 700, artefacts: 20 });
  const rendered = renderPackMembers(samplePackContent(long));
  const pin = { operatorFingerprint: operatorFingerprint(long.operator.publicKey) };
  const honest = sealPack(rendered.members, rendered.manifestBase, long.operator).members;
  const signatures = [...honest.keys()].filter((n) => n.startsWith("signatures/")).sort();
  const forged = new Map(honest);
  forged.set(signatures[600], honest.get(signatures[601]) as Uint8Array);
  const noLog = new Map(honest);
  noLog.delete(PACK_MEMBERS.log);
  const packs = [honest, forged, noLog].map((m) => rawZip(zipEntries(m)));
  for (const zip of packs) {
    const inline = await verifyPack(memoryBytes(zip), { ...pin, workers: 0 });
    for (
      const worker of [
        "./_no_such_worker.ts",
        "./_failing_worker.ts",
        "../../src/verify/_gate_worker.ts",
      ]
    ) {
      const r = await verifyPack(memoryBytes(zip), {
        ...pin,
        workers: 1,
        workerUrl: new URL(worker, import.meta.url),
      });
      deepStrictEqual(r, inline, worker);
    }
  }
});

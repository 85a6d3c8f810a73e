// The streaming ZIP writer: byte-identical to fflate's zipSync (plus the ZIP64 end records
// past 65 535 members) for members up to the one-shot size, reproducible for larger members
// however their bytes are fed, readable by the verifier's reader, Python and unzip, and strict
// about member order.
import { deepStrictEqual, notDeepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { join } from "node:path";
import { type Zippable, zipSync } from "fflate";
import {
  MemberCompressor,
  MemorySink,
  ONE_SHOT_BYTES,
  PACK_DEFLATE_LEVEL,
  prepareMember,
  zipMembers,
  ZipStreamWriter,
} from "../../src/compliance/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import {
  memoryBytes,
  packZipLimits,
  readZipDirectory,
  streamZipMember,
} from "../../src/verify/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

/** What the pack writer produced before it streamed: fflate's zipSync, then ZIP64 end records. */
function referenceZip(members: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const mtime = new Date(1980, 0, 1, 0, 0, 0);
  const tree: Zippable = {};
  for (const name of [...members.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const level = name.startsWith("signatures/") ? 0 : 6;
    tree[name] = [members.get(name) as Uint8Array, { level, mtime }];
  }
  const zip = zipSync(tree, { level: 6, mtime });
  if (members.size <= 0xffff) return zip;
  const eocd = zip.length - 22;
  const old = new DataView(zip.buffer, zip.byteOffset + eocd, 22);
  const cdSize = old.getUint32(12, true);
  const cdOffset = old.getUint32(16, true);
  const out = new Uint8Array(eocd + 56 + 20 + 22);
  out.set(zip.subarray(0, eocd));
  const v = new DataView(out.buffer);
  v.setUint32(eocd, 0x06064b50, true);
  v.setBigUint64(eocd + 4, 44n, true);
  v.setUint16(eocd + 12, 45, true);
  v.setUint16(eocd + 14, 45, true);
  v.setBigUint64(eocd + 24, BigInt(members.size), true);
  v.setBigUint64(eocd + 32, BigInt(members.size), true);
  v.setBigUint64(eocd + 40, BigInt(cdSize), true);
  v.setBigUint64(eocd + 48, BigInt(cdOffset), true);
  v.setUint32(eocd + 56, 0x07064b50, true);
  v.setBigUint64(eocd + 64, BigInt(eocd), true);
  v.setUint32(eocd + 72, 1, true);
  v.setUint32(eocd + 76, 0x06054b50, true);
  v.setUint16(eocd + 84, 0xffff, true);
  v.setUint16(eocd + 86, 0xffff, true);
  v.setUint32(eocd + 88, cdSize, true);
  v.setUint32(eocd + 92, cdOffset, true);
  return out;
}

/** Text that compresses like a log: repeated field names, random hex. */
function logLike(random: SeededRandom, bytes: number): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  let size = 0;
  while (size < bytes) {
    const hex = [...random.bytes(32)].map((b) => b.toString(16).padStart(2, "0")).join("");
    const line = enc.encode(`{"content_hash":"sha256:${hex}","ts_ns":${size}}\n`);
    parts.push(line);
    size += line.length;
  }
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) {
    out.set(p.subarray(0, Math.min(p.length, bytes - at)), at);
    at += p.length;
    if (at >= bytes) break;
  }
  return out;
}

async function inflateAll(zip: Uint8Array): Promise<Map<string, Uint8Array>> {
  const source = memoryBytes(zip);
  const dir = readZipDirectory(source, packZipLimits());
  deepStrictEqual(dir.problems, []);
  const out = new Map<string, Uint8Array>();
  for (const m of dir.members) {
    const parts: Uint8Array[] = [];
    for await (const chunk of streamZipMember(source, m)) parts.push(chunk.slice());
    const whole = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      whole.set(p, at);
      at += p.length;
    }
    out.set(m.name, whole);
  }
  return out;
}

Deno.test("the writer gives fflate zipSync's bytes for small members: names, UTF-8, empty, stored", () => {
  const random = new SeededRandom(3);
  const enc = new TextEncoder();
  const cases: Map<string, Uint8Array>[] = [
    new Map(),
    new Map([["README.md", enc.encode("# pack\n")]]),
    new Map([
      ["verify-instructions.md", enc.encode("x".repeat(5000))],
      ["agent-cards/agent-1/k.json", enc.encode('{"agent_id":"agent-1"}')],
      ["signatures/" + "a".repeat(64) + ".jws", random.bytes(180)],
      ["signatures/" + "b".repeat(64) + ".jws", new Uint8Array(0)],
      ["docs/ünïcödé.md", enc.encode("é\n")],
      ["empty.txt", new Uint8Array(0)],
      ["random.bin", random.bytes(70_000)],
      ["lineage-log.jsonl", logLike(random, ONE_SHOT_BYTES)],
    ]),
  ];
  for (const members of cases) deepStrictEqual(zipMembers(members), referenceZip(members));
});

Deno.test("past 65 535 members: the same bytes as before, ZIP64 end records included", () => {
  const members = new Map<string, Uint8Array>();
  for (let i = 0; i < 66_000; i++) {
    members.set(`signatures/${i.toString(16).padStart(64, "0")}.jws`, new Uint8Array([i & 0xff]));
  }
  members.set("README.md", new TextEncoder().encode("# many\n"));
  deepStrictEqual(zipMembers(members), referenceZip(members));
});

Deno.test("a member past the one-shot size streams: same bytes however it is fed, and it reads back", async () => {
  const random = new SeededRandom(11);
  const big = logLike(random, 3 * ONE_SHOT_BYTES + 12_345);
  const feeds = [[big.length], [1, 7, 65_535, 65_536, 65_537], [4093], [ONE_SHOT_BYTES + 1]];
  const zips = feeds.map((sizes) => {
    const c = new MemberCompressor(PACK_DEFLATE_LEVEL);
    let at = 0;
    for (let i = 0; at < big.length; i++) {
      const n = sizes[i % sizes.length];
      c.write(big.subarray(at, at + n));
      at += n;
    }
    const prepared = c.finish();
    strictEqual(prepared.size, big.length);
    strictEqual(prepared.sha256, sha256Hex(big));
    const sink = new MemorySink();
    const w = new ZipStreamWriter(sink);
    w.add("README.md", new TextEncoder().encode("hi\n"));
    w.addPrepared("lineage-log.jsonl", prepared);
    strictEqual(w.finish(), sink.bytes().length);
    return sink.bytes();
  });
  for (const z of zips.slice(1)) deepStrictEqual(z, zips[0]);
  const back = await inflateAll(zips[0]);
  deepStrictEqual(back.get("lineage-log.jsonl"), big);
  // Not one-shot: a streamed member is not what zipSync would write (and need not be).
  notDeepStrictEqual(
    zips[0],
    referenceZip(
      new Map([["README.md", back.get("README.md") as Uint8Array], ["lineage-log.jsonl", big]]),
    ),
  );
  await withTempDir(async (tmp) => {
    const path = join(tmp, "big.zip");
    await Deno.writeFile(path, zips[0]);
    const py = await new Deno.Command("python3", {
      args: [
        "-c",
        "import sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\nprint(len(z.infolist()), z.testzip())",
        path,
      ],
      stdout: "piped",
    }).output();
    strictEqual(new TextDecoder().decode(py.stdout).trim(), "2 None");
    const unzip = await new Deno.Command("unzip", { args: ["-tq", path], stdout: "piped" })
      .output().catch(() => undefined);
    if (unzip !== undefined) strictEqual(unzip.code, 0, new TextDecoder().decode(unzip.stdout));
  });
});

Deno.test("a member of exactly the one-shot size is deflated in one call; one byte more streams", async () => {
  const random = new SeededRandom(5);
  const at = logLike(random, ONE_SHOT_BYTES + 1);
  const exact = new Map([["lineage-log.jsonl", at.subarray(0, ONE_SHOT_BYTES)]]);
  deepStrictEqual(zipMembers(exact), referenceZip(exact));
  const over = new Map([["lineage-log.jsonl", at]]);
  deepStrictEqual((await inflateAll(zipMembers(over))).get("lineage-log.jsonl"), at);
});

Deno.test("the writer refuses members out of name order, twice, or prepared with the wrong method", () => {
  const w = new ZipStreamWriter(new MemorySink());
  w.add("b.txt", new Uint8Array([1]));
  throws(() => w.add("a.txt", new Uint8Array([1])), /not after b\.txt/);
  throws(() => w.add("b.txt", new Uint8Array([1])), /not after b\.txt/);
  throws(
    () => w.addPrepared("signatures/x.jws", prepareMember("c.txt", new Uint8Array([1]))),
    /wrong method/,
  );
  w.finish();
  throws(() => w.add("z.txt", new Uint8Array([1])), /after finish/);
});

/** `names` joined into one buffer, each padded to the same length (a run's layout). */
function runNames(names: string[]): { names: Uint8Array; nameBytes: number } {
  const enc = new TextEncoder();
  const nameBytes = names.length === 0 ? 0 : names[0].length;
  const out = new Uint8Array(names.length * nameBytes);
  names.forEach((n, k) => out.set(enc.encode(n), k * nameBytes));
  return { names: out, nameBytes };
}

Deno.test("a run of stored members is byte for byte the members added one by one", () => {
  const random = new SeededRandom(11);
  const name = (i: number) => `signatures/${i.toString(16).padStart(64, "0")}.jws`;
  for (const count of [0, 1, 2, 300, 66_000]) {
    // Sizes around the 64 KiB pieces: empty, small, exactly a piece, more than a piece.
    const data = Array.from(
      { length: count },
      (_, k) =>
        k % 97 === 5
          ? random.bytes([0, 65_536, 65_537, 200_000][k % 4])
          : random.bytes(150 + (k % 60)),
    );
    const members = new Map<string, Uint8Array>([
      ["README.md", new TextEncoder().encode("# run\n")],
      ["pack-manifest.json.sig", random.bytes(178)],
    ]);
    data.forEach((d, k) => members.set(name(k), d));
    members.set("verify-instructions.md", random.bytes(900));
    const sink = new MemorySink();
    const w = new ZipStreamWriter(sink);
    w.add("README.md", members.get("README.md") as Uint8Array);
    w.add("pack-manifest.json.sig", members.get("pack-manifest.json.sig") as Uint8Array);
    const run = runNames(data.map((_, k) => name(k)));
    w.addStoredRun(run.names, run.nameBytes, (k) => data[k]);
    w.add("verify-instructions.md", members.get("verify-instructions.md") as Uint8Array);
    const size = w.finish();
    const zip = sink.bytes();
    strictEqual(size, zip.length);
    deepStrictEqual(zip, zipMembers(members));
    if (count === 300) deepStrictEqual(zip, referenceZip(members));
  }
});

Deno.test("a run of stored members is refused out of order, after a later name, or outside signatures/", () => {
  const sig = (c: string) => `signatures/${c.repeat(64)}.jws`;
  const one = new Uint8Array([1]);
  const fresh = () => {
    const w = new ZipStreamWriter(new MemorySink());
    w.add("README.md", one);
    return w;
  };
  const bad: [string[], RegExp][] = [
    [[sig("b"), sig("a")], /not in name order/],
    [[sig("a"), sig("a")], /not in name order/],
    [["README.md"], /not a stored member/],
    [["verify-instructions.md".padEnd(79, "x")], /not a stored member/],
  ];
  for (const [names, expected] of bad) {
    const run = runNames(names);
    throws(() => fresh().addStoredRun(run.names, run.nameBytes, () => one), expected);
  }
  // A name that is not ASCII, and names that are not whole.
  const run = runNames([sig("a"), sig("b")]);
  run.names[90] = 0xc3;
  throws(() => fresh().addStoredRun(run.names, run.nameBytes, () => one), /not ASCII/);
  throws(() => fresh().addStoredRun(new Uint8Array(100), 79, () => one), /not whole/);
  // A run that starts before the last member added.
  const after = fresh();
  after.add(sig("c"), one);
  const early = runNames([sig("b")]);
  throws(() => after.addStoredRun(early.names, early.nameBytes, () => one), /not after/);
  // After the run, a name before its last is refused.
  const w = fresh();
  const ok2 = runNames([sig("a"), sig("c")]);
  w.addStoredRun(ok2.names, ok2.nameBytes, () => one);
  throws(() => w.add(sig("b"), one), /not after/);
  w.finish();
  throws(() => w.addStoredRun(ok2.names, ok2.nameBytes, () => one), /after finish/);
});

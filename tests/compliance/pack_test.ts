// The pure pack builder: reproducible bytes (same inputs, same zip, in any time zone), the
// member set and order of FORMATS.md §5, fixed timestamps, and archives that standard tools
// (unzip, Python's zipfile) read exactly.
import {
  deepStrictEqual,
  notDeepStrictEqual,
  ok,
  rejects,
  strictEqual,
  throws,
} from "node:assert/strict";
import { join } from "node:path";
import { unzipSync } from "fflate";
import {
  buildPack,
  CompliancePackError,
  compressMember,
  MemorySink,
  offThreadDeflate,
  type PackContent,
  type PackHeader,
  WindowMembers,
  writePack,
  zipMembers,
} from "../../src/compliance/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { memoryBytes, packZipLimits, readZipDirectory, verifyPack } from "../../src/verify/mod.ts";
import { sampleLog, samplePackContent, writeSamplePack } from "../../scripts/sample_pack.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

const sample = sampleLog({ seed: 5 });
const content = samplePackContent(sample);

Deno.test("the same inputs give the same bytes; another build time gives other bytes", () => {
  const a = buildPack(content, sample.operator).zip;
  const b = buildPack(samplePackContent(sampleLog({ seed: 5 })), sample.operator).zip;
  deepStrictEqual(a, b);
  const c = buildPack({ ...content, builtAt: "2026-04-02T00:00:00Z" }, sample.operator).zip;
  notDeepStrictEqual(a, c);
});

Deno.test("members are exactly those of FORMATS.md §5 and §8, sorted, deflated (signatures stored), dated 1980-01-01", () => {
  const zip = buildPack(content, sample.operator).zip;
  const dir = readZipDirectory(memoryBytes(zip), packZipLimits());
  deepStrictEqual(dir.problems, []);
  const names = dir.members.map((m) => m.name);
  deepStrictEqual(names, [...names].sort(), "sorted");
  const fixed = names.filter((n) => !n.startsWith("signatures/") && !n.startsWith("agent-cards/"));
  deepStrictEqual(fixed, [
    "README.md",
    "article12-evidence.csv",
    "checkpoint.json",
    "inclusion-proof.json",
    "lineage-log.jsonl",
    "operator.pub",
    "pack-manifest.json",
    "pack-manifest.json.sig",
    "verify-instructions.md",
  ]);
  strictEqual(names.filter((n) => n.startsWith("signatures/")).length, content.entries.length);
  strictEqual(names.filter((n) => n.startsWith("agent-cards/")).length, content.cards.length);
  ok(names.every((n) => !n.endsWith("/")), "no folder entries");
  for (const m of dir.members) {
    strictEqual(
      m.method,
      m.name.startsWith("signatures/") ? 0 : 8,
      `${m.name}: stored or deflated`,
    );
  }
  // Every local header carries DOS time 00:00 and date 1980-01-01 (0x0021).
  const view = new DataView(zip.buffer, zip.byteOffset);
  for (let at = 0; at + 4 <= zip.length;) {
    if (view.getUint32(at, true) !== 0x04034b50) break;
    strictEqual(view.getUint16(at + 10, true), 0, "time");
    strictEqual(view.getUint16(at + 12, true), 0x21, "date");
    at += 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true) +
      view.getUint32(at + 18, true);
  }
});

Deno.test("the bytes do not depend on the builder's time zone", async () => {
  const here = sha256Hex(buildPack(content, sample.operator).zip);
  const code = `import { buildPack } from "${REPO_ROOT}src/compliance/mod.ts";
import { sha256Hex } from "${REPO_ROOT}src/crypto/mod.ts";
import { sampleLog, samplePackContent } from "${REPO_ROOT}scripts/sample_pack.ts";
const s = sampleLog({ seed: 5 });
console.log(sha256Hex(buildPack(samplePackContent(s), s.operator).zip));`;
  for (const tz of ["Pacific/Kiritimati", "America/Los_Angeles"]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "-q", `--config=${REPO_ROOT}deno.json`, code],
      env: { TZ: tz },
      stdout: "piped",
      stderr: "piped",
    }).output();
    strictEqual(out.code, 0, new TextDecoder().decode(out.stderr));
    strictEqual(new TextDecoder().decode(out.stdout).trim(), here, tz);
  }
});

Deno.test("unzip -t and Python's zipfile read every member back exactly", async () => {
  const pack = buildPack(content, sample.operator);
  await withTempDir(async (dir) => {
    const path = join(dir, "pack.zip");
    await Deno.writeFile(path, pack.zip);
    const t = await new Deno.Command("unzip", { args: ["-tq", path], stdout: "piped" }).output();
    strictEqual(t.code, 0, new TextDecoder().decode(t.stdout));
    const py = await new Deno.Command("python3", {
      args: [
        "-c",
        "import hashlib,json,sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\nprint(json.dumps({i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist()}))",
        path,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    strictEqual(py.code, 0, new TextDecoder().decode(py.stderr));
    const seen = JSON.parse(new TextDecoder().decode(py.stdout));
    deepStrictEqual(
      seen,
      Object.fromEntries([...pack.members].map(([n, b]) => [n, sha256Hex(b)])),
    );
  });
});

Deno.test("the builder refuses an embedded key that is not the signer's", () => {
  const other = sampleLog({ seed: 6 }).operator;
  throws(
    () => buildPack({ ...content, operatorPublicKey: other.publicKey }, sample.operator),
    (e: unknown) =>
      e instanceof CompliancePackError && e.code === "compliance.operator_key_mismatch",
  );
});

Deno.test("zipMembers orders members by name whatever order they come in", () => {
  const a = zipMembers(new Map([["b.txt", new Uint8Array([1])], ["a.txt", new Uint8Array([2])]]));
  const b = zipMembers(new Map([["a.txt", new Uint8Array([2])], ["b.txt", new Uint8Array([1])]]));
  deepStrictEqual(a, b);
});

Deno.test("more than 65 535 members get ZIP64 end records that unzip, Python and the verifier read", async () => {
  const members = new Map<string, Uint8Array>();
  for (let i = 0; i < 70_000; i++) {
    members.set(`signatures/${i.toString(16).padStart(64, "0")}.jws`, new Uint8Array([i & 0xff]));
  }
  const zip = zipMembers(members);
  const dir = readZipDirectory(memoryBytes(zip), packZipLimits());
  deepStrictEqual(dir.problems, []);
  strictEqual(dir.members.length, 70_000);
  await withTempDir(async (tmp) => {
    const path = join(tmp, "big.zip");
    await Deno.writeFile(path, zip);
    const py = await new Deno.Command("python3", {
      args: [
        "-c",
        "import sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\nprint(len(z.infolist()), z.testzip())",
        path,
      ],
      stdout: "piped",
    }).output();
    strictEqual(new TextDecoder().decode(py.stdout).trim(), "70000 None");
    const t = await new Deno.Command("unzip", { args: ["-tq", path], stdout: "piped" }).output();
    strictEqual(t.code, 0, new TextDecoder().decode(t.stdout));
  });
});

/**
 * The pack written entry by entry through WindowMembers and writePack; off thread as the
 * builder does it (one worker for the window, then the manifest).
 */
async function streamed(c: PackContent, signer = sample.operator, offThread = false) {
  const { entries, ...header } = c;
  const deflate = offThread ? offThreadDeflate(undefined, { reusable: true }) : undefined;
  try {
    const members = new WindowMembers(deflate ? { deflate } : {});
    for (const e of entries) members.add(e.line, e.hash, e.signature);
    const sink = new MemorySink();
    const written = await writePack(
      header satisfies PackHeader,
      await members.finish(),
      signer,
      sink,
      deflate ? { compress: (name, bytes) => compressMember(deflate, name, bytes) } : {},
    );
    const zip = sink.bytes();
    const manifest = unzipSync(zip, { filter: (f) => f.name === "pack-manifest.json" });
    return { ...written, zip, manifestBytes: manifest["pack-manifest.json"] };
  } finally {
    deflate?.close();
  }
}

Deno.test("a pack written member by member is byte for byte the pack built in memory", async () => {
  const empty = sampleLog({ seed: 9, entries: 0 });
  for (
    const [c, signer] of [[content, sample.operator], [
      samplePackContent(empty),
      empty.operator,
    ]] as const
  ) {
    const built = buildPack(c, signer);
    const written = await streamed(c, signer);
    deepStrictEqual(written.zip, built.zip);
    deepStrictEqual(written.manifestBytes, built.manifestBytes);
    strictEqual(written.bytes, built.zip.length);
  }
  // A duplicated line (same entry hash twice): one signature member, as in memory.
  const doubled = { ...content, entries: [...content.entries, content.entries[3]] };
  deepStrictEqual((await streamed(doubled)).zip, buildPack(doubled, sample.operator).zip);
  await rejects(
    () => streamed({ ...content, operatorPublicKey: sampleLog({ seed: 6 }).operator.publicKey }),
    (e: unknown) =>
      e instanceof CompliancePackError && e.code === "compliance.operator_key_mismatch",
  );
});

Deno.test("a window whose log is past the one-shot size streams: same manifest as in memory, and it verifies", async () => {
  const long = sampleLog({ seed: 4, entries: 3000, agents: 4, artefacts: 300 });
  const c = samplePackContent(long);
  const built = buildPack(c, long.operator);
  const written = await streamed(c, long.operator);
  deepStrictEqual(
    written.manifestBytes,
    built.manifestBytes,
    "the manifest hashes members, not the container",
  );
  // Deflated on a worker thread: the same archive, byte for byte.
  deepStrictEqual((await streamed(c, long.operator, true)).zip, written.zip);
  const r = await verifyPack(memoryBytes(written.zip), {
    operatorPublicKey: long.operator.publicKey,
    workers: 0,
  });
  deepStrictEqual(r.errors, []);
  strictEqual(r.stats.entries, c.entries.length);
});

Deno.test("a manifest whose compression fails fails the write with that error", async () => {
  const { entries, ...header } = content;
  const members = new WindowMembers();
  for (const e of entries) members.add(e.line, e.hash, e.signature);
  const collected = await members.finish();
  const failure = new CompliancePackError("compliance.deflate_failed", "worker gone");
  const sink = new MemorySink();
  await rejects(
    () =>
      writePack(header, collected, sample.operator, sink, {
        compress: () => Promise.reject(failure),
      }),
    (e) => e === failure,
  );
  // Nothing past the members before the manifest was written.
  const manifestAt = sink.bytes().length;
  const whole = buildPack(content, sample.operator).zip;
  ok(manifestAt < whole.length);
  deepStrictEqual(sink.bytes(), whole.subarray(0, manifestAt));
  strictEqual(readZipDirectory(memoryBytes(sink.bytes()), packZipLimits()).members.length, 0);
});

Deno.test("the streamed sample pack (the scale benchmark's) is the in-memory sample pack", async () => {
  for (const options of [{ seed: 5 }, { seed: 8, entries: 40, before: 6, artefacts: 5 }]) {
    const sink = new MemorySink();
    const written = await writeSamplePack(options, sink);
    const sample = sampleLog(options);
    const built = buildPack(samplePackContent(sample), sample.operator);
    deepStrictEqual(sink.bytes(), built.zip);
    strictEqual(written.bytes, built.zip.length);
  }
});

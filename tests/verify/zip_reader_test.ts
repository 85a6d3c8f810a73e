// The defensive ZIP reader: honest archives read back exactly; every hostile shape is refused
// from the central directory alone (before inflating), and a member that lies about its size
// stops inflating at the declared size.
import { deepStrictEqual, ok, rejects, strictEqual, throws } from "node:assert/strict";
import { crc32 as zlibCrc32, deflateRawSync } from "node:zlib";
import { zipSync } from "fflate";
import {
  memberNameProblem,
  memoryBytes,
  readZipDirectory,
  readZipMember,
  streamZipMember,
  type ZipLimits,
  ZipMemberError,
} from "../../src/verify/mod.ts";
import { rawZip } from "../../scripts/raw_zip.ts";
import { SeededRandom } from "../../src/io/mod.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function limits(overrides: Partial<ZipLimits> = {}): ZipLimits {
  return {
    maxArchiveBytes: 1 << 30,
    maxMembers: 100,
    maxNameBytes: 256,
    maxMemberBytes: () => 1 << 20,
    maxTotalBytes: 4 << 20,
    ...overrides,
  };
}

function kinds(zip: Uint8Array, l: ZipLimits = limits()): string[] {
  return readZipDirectory(memoryBytes(zip), l).problems.map((p) => p.kind);
}

Deno.test("an fflate archive reads back member by member, stored and deflated", async () => {
  const big = new SeededRandom(3).bytes(200_000); // incompressible: many inflate steps
  const zip = zipSync({
    "a.txt": [enc.encode("hello"), { level: 0 }],
    "dir/b.txt": [big, { level: 6 }],
    "empty.txt": new Uint8Array(),
  });
  const source = memoryBytes(zip);
  const dir = readZipDirectory(source, limits());
  deepStrictEqual(dir.problems, []);
  deepStrictEqual(dir.members.map((m) => [m.name, m.method, m.size]), [
    ["a.txt", 0, 5],
    ["dir/b.txt", 8, big.length],
    ["empty.txt", 8, 0],
  ]);
  strictEqual(dec.decode(readZipMember(source, dir.members[0])), "hello");
  const chunks: Uint8Array[] = [];
  for await (const c of streamZipMember(source, dir.members[1])) chunks.push(c);
  ok(chunks.length > 1, "a large member is streamed in several chunks");
  const joined = new Uint8Array(big.length);
  let at = 0;
  for (const c of chunks) {
    joined.set(c, at);
    at += c.length;
  }
  deepStrictEqual(joined, big);
  deepStrictEqual(readZipMember(source, dir.members[1]), big);
  strictEqual(readZipMember(source, dir.members[2]).length, 0);
});

Deno.test("member names that could escape an extraction folder are named and refused", () => {
  for (
    const [name, why] of [
      ["../evil", "'..' segment"],
      ["a/../../evil", "'..' segment"],
      ["/etc/passwd", "absolute path"],
      ["C:evil", "drive letter"],
      ["a\\..\\evil", "backslash in the name"],
      ["a//b", "empty path segment"],
      ["./a", "'.' segment"],
      ["a\u0000b", "control character in the name"],
      ["", "empty name"],
    ]
  ) strictEqual(memberNameProblem(name), why, name);
  strictEqual(memberNameProblem("signatures/abc.jws"), undefined);
  // The one-pass check of plain names agrees with the rules on every short name of a small
  // alphabet (the rules, as written before that fast path, are the reference).
  const reference = (n: string): string | undefined => {
    if (n === "") return "empty name";
    // deno-lint-ignore no-control-regex -- control characters are what is refused
    if (/[\u0000-\u001f\u007f]/.test(n)) return "control character in the name";
    if (n.includes("\\")) return "backslash in the name";
    if (n.startsWith("/")) return "absolute path";
    if (/^[A-Za-z]:/.test(n)) return "drive letter";
    const segments = n.split("/");
    if (segments.some((x) => x === "..")) return "'..' segment";
    if (segments.some((x) => x === ".")) return "'.' segment";
    if (segments.slice(0, -1).some((x) => x === "")) return "empty path segment";
    return undefined;
  };
  const alphabet = ["a", "Z", "9", ".", "/", "\\", ":", "_", "-", "\u0001", "é", " "];
  const names = [""];
  for (let len = 1; len <= 4; len++) {
    for (const prefix of names.filter((n) => n.length === len - 1)) {
      for (const c of alphabet) names.push(prefix + c);
    }
  }
  for (const n of names) strictEqual(memberNameProblem(n), reference(n), JSON.stringify(n));
  // The directory decides plain names from their bytes as it decodes them: the same verdicts
  // (names up to 3 characters and every 13th of 4; rawZip's time grows with the square).
  const some = names.filter((n, i) => n.length < 4 || i % 13 === 0);
  const all = readZipDirectory(
    memoryBytes(rawZip(some.map((name) => ({ name, data: new Uint8Array(0) })))),
    limits({ maxMembers: some.length }),
  );
  deepStrictEqual(
    all.problems.filter((p) => p.kind === "zip-slip member name").map((p) => p.member),
    some.filter((n) => reference(n) !== undefined),
  );
  const zip = rawZip([
    { name: "ok.txt", data: enc.encode("x") },
    { name: "../../x", data: enc.encode("x") },
  ]);
  const dir = readZipDirectory(memoryBytes(zip), limits());
  deepStrictEqual(dir.members, [], "nothing is handed out when any problem exists");
  deepStrictEqual(dir.problems.map((p) => p.message), [
    "\"../../x\": zip-slip member name ('..' segment); refused",
  ]);
});

Deno.test("duplicate names, also differing only in case, are refused", () => {
  deepStrictEqual(
    kinds(
      rawZip([{ name: "a.txt", data: enc.encode("1") }, { name: "a.txt", data: enc.encode("2") }]),
    ),
    ["duplicate member"],
  );
  const dir = readZipDirectory(
    memoryBytes(rawZip([{ name: "README.md", data: enc.encode("1") }, {
      name: "readme.md",
      data: enc.encode("2"),
    }])),
    limits(),
  );
  strictEqual(
    dir.problems[0].message,
    '"readme.md": duplicate member (same name as "README.md" ignoring case)',
  );
});

Deno.test("duplicates ignoring case are found whichever way the names come (sorted, mixed, folded, non-ASCII)", () => {
  // The reader proves sorted lowercase names distinct without its map of folded names; every
  // other shape falls back to the map. Each case against the rule itself: a member is a
  // duplicate when its lowercase form is an earlier member's.
  const expected = (names: string[]) => {
    const seen = new Map<string, string>();
    const out: string[] = [];
    for (const n of names) {
      const earlier = seen.get(n.toLowerCase());
      if (earlier === undefined) seen.set(n.toLowerCase(), n);
      else out.push(`${n}<${earlier}`);
    }
    return out;
  };
  const found = (names: string[]) =>
    readZipDirectory(
      memoryBytes(rawZip(names.map((name) => ({ name, data: enc.encode(name) })))),
      limits({ maxMembers: 1000 }),
    ).problems.filter((p) => p.kind === "duplicate member").map((p) => {
      const m = / ignoring case\)$/.test(p.message)
        ? (p.message.match(/same name as "(.*)" ignoring case/) as RegExpMatchArray)[1]
        : p.member;
      return `${p.member}<${m}`;
    });
  const cases: string[][] = [
    ["README.md", "a.txt", "b.txt", "readme.md"], // a folded name equal to a later plain one
    ["a.txt", "readme.md", "z.txt", "README.md"], // … to an earlier plain one
    ["README.md", "a.txt", "ReadMe.md"], // two folded names alike
    ["a.txt", "b.txt", "a.txt"], // plain names out of order
    ["b.txt", "a.txt", "c.txt"], // out of order, all distinct
    ["k.txt", "\u212a.txt"], // the Kelvin sign lowercases to k
    ["\u00e9.txt", "\u00c9.txt"], // non-ASCII, folds to an earlier one
    ["a/B", "a/b", "A/b"],
    Array.from({ length: 70 }, (_, i) => `F${i}.TXT`).concat(["f3.txt"]), // past the folded cap
    Array.from({ length: 70 }, (_, i) => `F${i}.TXT`),
    Array.from({ length: 300 }, (_, i) => `s/${String(i).padStart(3, "0")}.jws`),
    ["README.md", ...Array.from({ length: 300 }, (_, i) => `s/${i}.jws`)], // not in order
  ];
  const random = new SeededRandom(22);
  const next = () => random.bytes(1)[0] / 256;
  const pool = ["a", "A", "b", "B", "readme.md", "README.md", "x/y", "X/y", "\u00e9", "\u00c9"];
  for (let k = 0; k < 200; k++) {
    const n = 1 + Math.floor(next() * 6);
    const names = Array.from({ length: n }, () => pool[Math.floor(next() * pool.length)]);
    cases.push(next() < 0.5 ? names : [...names].sort());
  }
  for (const names of cases) deepStrictEqual(found(names), expected(names), names.join(" "));
});

Deno.test("encrypted members (traditional, strong or AES) are refused", () => {
  deepStrictEqual(kinds(rawZip([{ name: "a", data: enc.encode("x"), flags: 0x0801 }])), [
    "encrypted member",
  ]);
  deepStrictEqual(kinds(rawZip([{ name: "a", data: enc.encode("x"), flags: 0x0841 }])), [
    "encrypted member",
  ]);
  deepStrictEqual(kinds(rawZip([{ name: "a", data: enc.encode("x"), method: 99 }])), [
    "encrypted member",
  ]);
});

Deno.test("declared sizes past the member, total or count limits are refused before inflating", () => {
  const one = (size: number) => rawZip([{ name: "a", data: new Uint8Array(size) }]);
  deepStrictEqual(kinds(one(2000), limits({ maxMemberBytes: () => 1000 })), ["oversized member"]);
  const many = rawZip(
    Array.from({ length: 5 }, (_, i) => ({ name: `m${i}`, data: new Uint8Array(300) })),
  );
  deepStrictEqual(kinds(many, limits({ maxTotalBytes: 1000 })), ["archive too large"]);
  deepStrictEqual(kinds(many, limits({ maxMembers: 4 })), ["archive too large"]);
  deepStrictEqual(kinds(one(10), limits({ maxArchiveBytes: 50 })), ["archive too large"]);
  const longName = rawZip([{ name: "x".repeat(300), data: new Uint8Array(1) }]);
  deepStrictEqual(kinds(longName), ["unsupported zip feature"]);
});

Deno.test("a member that inflates past its declared size stops there (zip bomb)", async () => {
  const zip = rawZip([{ name: "bomb", data: new Uint8Array(4 << 20), declaredSize: 1000 }]);
  const source = memoryBytes(zip);
  const dir = readZipDirectory(source, limits());
  deepStrictEqual(dir.problems, []);
  const expected = "bomb: inflates past its declared size of 1000 bytes (zip bomb); stopped";
  let produced = 0;
  await rejects(
    async () => {
      for await (const chunk of streamZipMember(source, dir.members[0])) produced += chunk.length;
    },
    (e: unknown) => e instanceof ZipMemberError && e.message === expected,
  );
  ok(produced <= 1000, `handed out ${produced} bytes`);
  throws(
    () => readZipMember(source, dir.members[0]),
    (e: unknown) => e instanceof ZipMemberError && e.message === expected,
  );
  // The same through the streaming path of a large member: ~100 KiB of compressed zeros.
  // Deflated and checksummed natively (fflate's deflate and the script's CRC loop took ~3 s
  // of CPU for these 100 MiB); the archive is the same shape, lying only about the size.
  const zeros = new Uint8Array(100 << 20);
  const big = rawZip([{
    name: "big",
    data: zeros,
    payload: deflateRawSync(zeros),
    crc: zlibCrc32(zeros),
    declaredSize: 5000,
  }]);
  const bigSource = memoryBytes(big);
  const m = readZipDirectory(bigSource, limits()).members[0];
  ok(m.compressedSize > 64 * 1024, "takes the streaming path");
  await rejects(async () => {
    for await (const _ of streamZipMember(bigSource, m)) { /* drain */ }
  }, (e: unknown) => e instanceof ZipMemberError && e.message.includes("inflates past"));
  throws(
    () => readZipMember(bigSource, m),
    (e: unknown) => e instanceof ZipMemberError && e.message.includes("inflates past"),
  );
});

Deno.test("short output, wrong CRC and damaged deflate data are corrupt members", () => {
  const check = (zip: Uint8Array, text: string) => {
    const source = memoryBytes(zip);
    const m = readZipDirectory(source, limits()).members[0];
    throws(
      () => readZipMember(source, m),
      (e: unknown) => e instanceof ZipMemberError && e.message.includes(text),
    );
  };
  check(rawZip([{ name: "a", data: enc.encode("abc"), declaredSize: 10 }]), "inflates to 3 bytes");
  check(rawZip([{ name: "a", data: enc.encode("abc"), crc: 1 }]), "CRC-32 does not match");
  check(
    rawZip([{ name: "a", data: enc.encode("abc"), payload: new Uint8Array([0xff, 0xff, 0xff]) }]),
    "deflate data is damaged",
  );
});

Deno.test("not-a-zip, truncated, ZIP64 and overlapping archives are unreadable", () => {
  deepStrictEqual(kinds(enc.encode("just text, no archive at all")), ["unreadable archive"]);
  deepStrictEqual(kinds(new Uint8Array(5)), ["unreadable archive"]);
  const zip = zipSync({ "a.txt": enc.encode("hello"), "b.txt": enc.encode("world") });
  deepStrictEqual(kinds(zip.subarray(0, zip.length - 10)), ["unreadable archive"]);
  // A ZIP64 end-of-directory locator just before the end record.
  const eocd = zip.length - 22;
  const zip64 = new Uint8Array(zip.length + 20);
  zip64.set(zip.subarray(0, eocd));
  zip64.set([0x50, 0x4b, 0x06, 0x07], eocd);
  zip64.set(zip.subarray(eocd), eocd + 20);
  // Keep the directory offset consistent so only the locator is the problem.
  deepStrictEqual(kinds(zip64), ["unsupported zip feature"]);
  // Two directory entries pointing at the same local header: overlapping data.
  const overlap = rawZip([{ name: "a", data: enc.encode("x") }, {
    name: "b",
    data: enc.encode("x"),
  }]);
  const view = new DataView(overlap.buffer);
  const cdOffset = view.getUint32(overlap.length - 6, true);
  const second = cdOffset + 46 + 1; // first central entry: 46 bytes + 1-byte name
  view.setUint32(second + 42, 0, true);
  ok(
    readZipDirectory(memoryBytes(overlap), limits()).problems.some((p) =>
      p.kind === "unreadable archive"
    ),
  );
});

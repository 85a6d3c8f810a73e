// The gate's one listing of a lineage folder's sidecars: what it holds (regular files, the odd
// names, nothing reached through a symlinked folder), reads through it (a sidecar written after
// the listing is still found, a symlink is refused), and the orphans it yields, in path order.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { digestInto, DigestTable, digestText, signaturePath } from "../../src/lineage/mod.ts";
import { indexSidecars, orphanedSidecars, sidecarReader } from "../../src/verify/_sidecars.ts";
import { withTempDir } from "../_helpers/temp.ts";

const hash = (c: string) => `sha256:${c.repeat(64)}`;

async function put(lineage: string, artefact: string, h: string, text = "sig"): Promise<string> {
  const path = join(lineage, signaturePath(artefact, h));
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
  return path;
}

Deno.test("sidecar index: regular files and odd names per folder; symlinked folders are not followed", async () => {
  await withTempDir(async (dir) => {
    const lineage = join(dir, "lineage");
    await put(lineage, "src/a.ts", hash("1"));
    await put(lineage, "src/a.ts", hash("2"));
    const b = await put(lineage, "src/b.ts", hash("3"));
    // A symlink named like a sidecar, and a name that is not one.
    await Deno.symlink(b, join(b, "..", `${"4".repeat(64)}.jws`));
    await Deno.writeTextFile(join(b, "..", "notes.txt"), "x");
    // A whole top folder that is a symlink to elsewhere (an artefact under a top of its own):
    // not walked.
    const top = (artefact: string) => signaturePath(artefact, hash("5")).split("/")[1];
    const taken = new Set([top("src/a.ts"), top("src/b.ts")]);
    let c = 0;
    while (taken.has(top(`src/c${c}.ts`))) c++;
    const elsewhere = join(dir, "elsewhere");
    await put(elsewhere, `src/c${c}.ts`, hash("5"));
    const cTop = top(`src/c${c}.ts`);
    await Deno.symlink(join(elsewhere, "signatures", cTop), join(lineage, "signatures", cTop));

    const index = indexSidecars(lineage);
    strictEqual(index.digests.length / 32, 3);
    deepStrictEqual(index.odd.map((o) => [o.name, o.kind]), [[`${"4".repeat(64)}.jws`, "symlink"]]);
    strictEqual(index.folders.length, 2);
    deepStrictEqual([...index.folders].sort(), index.folders);
  });
});

Deno.test("sidecar index: reads go through it, a sidecar written later is found, a symlink is refused", async () => {
  await withTempDir(async (dir) => {
    const lineage = join(dir, "lineage");
    const a = await put(lineage, "src/a.ts", hash("1"), "one");
    const index = indexSidecars(lineage);
    const read = sidecarReader(lineage, index);
    deepStrictEqual(read("src/a.ts", hash("1")), new TextEncoder().encode("one"));
    strictEqual(read("src/a.ts", hash("6")), undefined);
    // Written after the listing: the miss lists the folder again.
    await put(lineage, "src/a.ts", hash("7"), "seven");
    deepStrictEqual(read("src/a.ts", hash("7")), new TextEncoder().encode("seven"));
    // A folder that did not exist when listed.
    await put(lineage, "src/new.ts", hash("8"), "eight");
    deepStrictEqual(read("src/new.ts", hash("8")), new TextEncoder().encode("eight"));
    await Deno.symlink(a, join(a, "..", `${"9".repeat(64)}.jws`));
    deepStrictEqual(
      sidecarReader(lineage, indexSidecars(lineage))("src/a.ts", hash("9")),
      { problem: "is a symlink (refused)" },
    );
  });
});

Deno.test("sidecar index: orphans are the sidecars no log entry has, symlinks included, in path order", async () => {
  await withTempDir(async (dir) => {
    const lineage = join(dir, "lineage");
    const paths = [
      await put(lineage, "src/a.ts", hash("1")),
      await put(lineage, "src/a.ts", hash("2")),
      await put(lineage, "src/b.ts", hash("3")),
      await put(lineage, "src/b.ts", hash("e")),
    ];
    await Deno.symlink(paths[2], join(paths[2], "..", `${"4".repeat(64)}.jws`));
    const seen = new DigestTable();
    seen.set(hash("2"), 1);
    seen.set(hash("3"), 2);
    const orphans = orphanedSidecars(indexSidecars(lineage), (d, at) => seen.hasDigest(d, at));
    const rel = (p: string) => p.slice(lineage.length + 1);
    const expected = [
      { path: rel(paths[0]), hash: hash("1") },
      { path: rel(paths[3]), hash: hash("e") },
      { path: rel(join(paths[2], "..", `${"4".repeat(64)}.jws`)), hash: hash("4") },
    ].sort((x, y) => (x.path < y.path ? -1 : 1));
    deepStrictEqual(orphans, expected);
    // Every entry in the log: none.
    for (const c of ["1", "4", "e"]) seen.set(hash(c), 3);
    deepStrictEqual(orphanedSidecars(indexSidecars(lineage), (d, at) => seen.hasDigest(d, at)), []);
    const probe = new Uint8Array(32);
    ok(digestInto(hash("1"), probe) && seen.hasDigest(probe));
  });
});

Deno.test("sidecar lookup: only a digest names a sidecar (sha256: or bare 64 lowercase hex); near-digests find none", async () => {
  await withTempDir(async (dir) => {
    const lineage = join(dir, "lineage");
    await put(lineage, "src/a.ts", hash("a"), "sig-a");
    const read = sidecarReader(lineage, indexSidecars(lineage));
    const sig = new TextEncoder().encode("sig-a");
    deepStrictEqual(read("src/a.ts", hash("a")), sig);
    deepStrictEqual(read("src/a.ts", "a".repeat(64)), sig);
    // "a" + 128 masks onto "a" in a 7-bit table: it must not be read as one.
    const masked = String.fromCharCode("a".charCodeAt(0) + 128);
    for (
      const near of [
        `sha256:${"A".repeat(64)}`,
        "A".repeat(64),
        `sha256:${"a".repeat(63)}`,
        `sha256:${"a".repeat(65)}`,
        "a".repeat(63),
        `SHA256:${"a".repeat(64)}`,
        `sha256:sha256:${"a".repeat(64)}`,
        `sha256:${"a".repeat(63)}${masked}`,
        `${"a".repeat(63)}${masked}`,
        `sha256:${"a".repeat(63)}g`,
        `sha256:${"a".repeat(64)}.jws`,
        "",
      ]
    ) {
      strictEqual(read("src/a.ts", near), undefined, JSON.stringify(near));
    }
  });
});

Deno.test("sidecar lookup: a folder with odd names still reads its regular sidecars and refuses the odd ones", async () => {
  await withTempDir(async (dir) => {
    const lineage = join(dir, "lineage");
    const a = await put(lineage, "src/a.ts", hash("1"), "one");
    await Deno.symlink(a, join(a, "..", `${"2".repeat(64)}.jws`));
    await Deno.mkdir(join(a, "..", `${"3".repeat(64)}.jws`));
    for (const index of [indexSidecars(lineage), undefined]) {
      const read = sidecarReader(lineage, index);
      deepStrictEqual(read("src/a.ts", hash("1")), new TextEncoder().encode("one"));
      deepStrictEqual(read("src/a.ts", hash("2")), { problem: "is a symlink (refused)" });
      deepStrictEqual(read("src/a.ts", "2".repeat(64)), { problem: "is a symlink (refused)" });
      deepStrictEqual(read("src/a.ts", hash("3")), { problem: "is not a regular file" });
      strictEqual(read("src/a.ts", hash("4")), undefined);
    }
  });
});

Deno.test("sidecar index: exactly the names of 64 lowercase hex digits and .jws are sidecars, whatever their kind", async () => {
  await withTempDir(async (dir) => {
    const lineage = join(dir, "lineage");
    const folder = join(await put(lineage, "src/a.ts", hash("1")), "..");
    const hex = "0123456789abcdef".repeat(4);
    // Look-alikes of every kind: upper case, a non-hex letter, a non-ASCII character whose low
    // bits are a digit's ("İ" is U+0130), one digit short or long, another suffix, a suffix only.
    const names = [
      `${hex}.jws`,
      `${"f".repeat(64)}.jws`,
      `${hex.toUpperCase()}.jws`,
      `${hex.slice(0, 63)}g.jws`,
      `\u0130${hex.slice(1)}.jws`,
      `${hex.slice(1)}.jws`,
      `${hex}0.jws`,
      `${hex}.JWS`,
      `${hex}.jwt`,
      `${hex}xjws`,
      `${" ".repeat(64)}.jws`,
      "notes.txt",
    ];
    const rule = /^[0-9a-f]{64}\.jws$/;
    for (const name of names) await Deno.writeTextFile(join(folder, name), "x");
    // The same look-alikes as symlinks and FIFOs (odd kinds) in a second folder.
    const oddFolder = join(await put(lineage, "src/b.ts", hash("2")), "..");
    const fifos = names.filter((_, i) => i % 2 === 0);
    for (const name of names) {
      if (fifos.includes(name)) {
        await new Deno.Command("mkfifo", { args: [join(oddFolder, name)] }).output();
      } else await Deno.symlink(join(folder, "notes.txt"), join(oddFolder, name));
    }
    const index = indexSidecars(lineage);
    const regular: string[] = [];
    for (let d = 0; d < index.digests.length / 32; d++) {
      regular.push(digestText(index.digests, d * 32));
    }
    const expectRegular = [
      hash("1"),
      hash("2"),
      ...names.filter((n) => rule.test(n)).map((n) => `sha256:${n.slice(0, 64)}`),
    ];
    deepStrictEqual(regular.sort(), expectRegular.sort());
    deepStrictEqual(
      index.odd.map((o) => [o.name, o.kind]).sort(),
      names.filter((n) => rule.test(n)).map((n) => [n, fifos.includes(n) ? "other" : "symlink"])
        .sort(),
    );
    // The reader sees the same: the regular sidecars read, the odd ones refused, the rest absent.
    const read = sidecarReader(lineage, index);
    deepStrictEqual(read("src/a.ts", `sha256:${hex}`), new TextEncoder().encode("x"));
    deepStrictEqual(read("src/b.ts", `sha256:${hex}`), { problem: "is not a regular file" });
    deepStrictEqual(read("src/b.ts", `sha256:${"f".repeat(64)}`), {
      problem: "is a symlink (refused)",
    });
  });
});

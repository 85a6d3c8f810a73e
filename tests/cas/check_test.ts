import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { badDigests, CasError, CasStore, checkCasStore } from "../../src/cas/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const enc = (s: string) => new TextEncoder().encode(s);

function store(root: string): CasStore {
  return new CasStore(join(root, "cas"), {
    clock: new FakeClock(Date.UTC(2026, 0, 1)),
    random: new SeededRandom(3),
  });
}

Deno.test("check: a healthy store passes; an empty or absent one too", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    deepStrictEqual(await checkCasStore(cas), {
      root: cas.root,
      blobs: 0,
      bytes: 0,
      good: 0,
      problems: [],
    });
    await cas.put(enc("one\n"));
    await cas.put(enc("two two\n"));
    const report = await checkCasStore(cas);
    strictEqual(report.blobs, 2);
    strictEqual(report.good, 2);
    strictEqual(report.bytes, 4 + 8);
    deepStrictEqual(report.problems, []);
  });
});

Deno.test("check: changed bytes, a symlinked blob, a lost sidecar, a missing referenced blob and strays are each named", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    const changed = (await cas.put(enc("changed\n"))).digest;
    const linked = (await cas.put(enc("linked\n"))).digest;
    const noMeta = (await cas.put(enc("no sidecar\n"))).digest;
    const good = (await cas.put(enc("good\n"))).digest;
    await Deno.writeTextFile(cas.blobPath(changed), "CHANGED\n");
    await Deno.writeTextFile(join(root, "elsewhere"), "linked\n");
    await Deno.remove(cas.blobPath(linked));
    await Deno.symlink(join(root, "elsewhere"), cas.blobPath(linked));
    await Deno.remove(cas.metaPath(noMeta));
    await Deno.writeTextFile(join(cas.root, good.slice(0, 2), "notes.txt"), "?");
    await Deno.writeTextFile(join(cas.root, "zz"), "?");
    // A writer's temp file is not a problem: a put may be under way.
    await Deno.writeTextFile(join(cas.root, ".tmp-1-ab"), "");
    const gone = sha256Hex(enc("never stored"));
    const report = await checkCasStore(cas, { referenced: [good, gone, gone] });
    strictEqual(report.blobs, 4);
    strictEqual(report.good, 1);
    const got = report.problems.map((p) => [p.code, p.digest ?? p.path.slice(root.length)]).sort();
    const want = [
      ["cas.integrity", changed],
      ["cas.not_regular", linked],
      ["cas.meta_missing", noMeta],
      ["cas.missing", gone],
      ["cas.stray", `/cas/${good.slice(0, 2)}/notes.txt`],
      ["cas.stray", "/cas/zz"],
    ].sort();
    deepStrictEqual(got, want);
    deepStrictEqual(badDigests(report), [changed, linked, noMeta, gone].sort());
    // The symlink was never followed: its target is untouched and unread.
    strictEqual(await Deno.readTextFile(join(root, "elsewhere")), "linked\n");
  });
});

Deno.test("restore: bytes that hash to the key replace a damaged blob (kept aside) and mend the sidecar", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    const bytes = enc("the original bytes\n");
    const digest = (await cas.put(bytes, { contentType: "text/plain" })).digest;
    await Deno.writeTextFile(cas.blobPath(digest), "damaged\n");
    await rejects(cas.read(digest), (e) => e instanceof CasError && e.code === "cas.integrity");
    // Wrong bytes are refused, nothing is moved.
    await rejects(
      cas.restore(digest, enc("other")),
      (e) => e instanceof CasError && e.code === "cas.integrity",
    );
    strictEqual(await Deno.readTextFile(cas.blobPath(digest)), "damaged\n");
    const result = await cas.restore(digest, bytes, { contentType: "text/plain" });
    deepStrictEqual(await cas.read(digest), bytes);
    strictEqual(result.moved_aside.length, 1);
    ok(result.moved_aside[0].startsWith(join(cas.root, ".damaged", digest)));
    strictEqual(await Deno.readTextFile(result.moved_aside[0]), "damaged\n");
    strictEqual((await cas.readMeta(digest)).content_type, "text/plain");
    // A missing blob and sidecar: both written anew; the store then checks clean.
    const other = enc("second\n");
    const key = sha256Hex(other);
    const again = await cas.restore(key, other);
    deepStrictEqual(again.moved_aside, []);
    deepStrictEqual(await cas.read(key), other);
    strictEqual((await cas.readMeta(key)).size_bytes, other.length);
    const report = await checkCasStore(cas);
    deepStrictEqual(report.problems, []);
    strictEqual(report.blobs, 2);
  });
});

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { CasError, CasStore, checkCasKey } from "../../src/cas/mod.ts";
import { sha256Hex, sha256Stream } from "../../src/crypto/mod.ts";
import { FakeClock, pathExists, SeededRandom } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const code = (c: string) => (e: unknown) => e instanceof CasError && e.code === c;

function store(root: string): CasStore {
  return new CasStore(join(root, "cas"), {
    clock: new FakeClock(Date.UTC(2026, 0, 1)),
    random: new SeededRandom(7),
  });
}

async function leftovers(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.name.startsWith(".tmp-")) out.push(e.name);
  return out;
}

Deno.test("put stores bytes at <hex[0:2]>/<hex> with a sidecar, and read re-hashes them", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    const bytes = enc("hello cas\n");
    const put = await cas.put(bytes, { contentType: "text/plain", metadata: { origin: "test" } });
    const hex = sha256Hex(bytes);
    strictEqual(put.digest, hex);
    strictEqual(put.created, true);
    strictEqual(put.path, join(root, "cas", hex.slice(0, 2), hex));
    deepStrictEqual(await Deno.readFile(put.path), bytes);
    deepStrictEqual(await cas.read(hex), bytes);
    const meta = await cas.readMeta(hex);
    deepStrictEqual(meta, {
      digest: hex,
      size_bytes: bytes.length,
      content_type: "text/plain",
      created_at: "2026-01-01T00:00:00.000Z",
      metadata: { origin: "test" },
    });
    strictEqual(
      await Deno.readTextFile(join(root, "cas", hex.slice(0, 2), `${hex}.meta.json`)),
      `{"content_type":"text/plain","created_at":"2026-01-01T00:00:00.000Z","digest":"${hex}",` +
        `"metadata":{"origin":"test"},"size_bytes":10}\n`,
    );
    ok(await cas.has(hex));
    strictEqual(await cas.has("0".repeat(64)), false);
    deepStrictEqual(await leftovers(join(root, "cas")), []);
  });
});

Deno.test("the first writer wins: a second put keeps the blob and the first sidecar", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    const bytes = enc("same bytes");
    const first = await cas.put(bytes, { contentType: "text/plain" });
    const mtime = (await Deno.stat(first.path)).mtime;
    const second = await cas.put(bytes, { contentType: "application/json", metadata: { x: 1 } });
    strictEqual(second.created, false);
    strictEqual(second.meta.content_type, "text/plain");
    deepStrictEqual(second.meta.metadata, {});
    deepStrictEqual((await Deno.stat(first.path)).mtime, mtime);
  });
});

Deno.test("concurrent puts of the same bytes create one blob and all succeed", async () => {
  await withTempDir(async (root) => {
    const cas = new CasStore(join(root, "cas"));
    const bytes = new SeededRandom(3).bytes(100_000);
    const results = await Promise.all(Array.from({ length: 8 }, () => cas.put(bytes)));
    strictEqual(results.filter((r) => r.created).length, 1);
    ok(results.every((r) => r.digest === sha256Hex(bytes)));
    deepStrictEqual(await cas.read(results[0].digest), bytes);
    deepStrictEqual(await leftovers(join(root, "cas")), []);
  });
});

Deno.test("keys must be 64 lowercase hex", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    for (
      const bad of [
        "",
        "ab",
        "A".repeat(64),
        "g".repeat(64),
        "../" + "a".repeat(61),
        "a".repeat(65),
      ]
    ) {
      await rejects(cas.read(bad), code("cas.invalid_key"), bad);
      await rejects(cas.readMeta(bad), code("cas.invalid_key"), bad);
    }
    strictEqual(checkCasKey("a".repeat(64)), "a".repeat(64));
  });
});

Deno.test("a changed or truncated blob is an integrity error on read and verify", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    const put = await cas.put(enc("original content"));
    await Deno.chmod(put.path, 0o644);
    await Deno.writeFile(put.path, enc("0riginal content"));
    await rejects(cas.read(put.digest), code("cas.integrity"));
    await rejects(cas.verify(put.digest), code("cas.integrity"));
    await Deno.writeFile(put.path, enc("original"));
    await rejects(cas.read(put.digest), code("cas.integrity"));
  });
});

Deno.test("reads refuse symlinks, symlinked shards and non-regular files", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    const put = await cas.put(enc("payload"));
    const outside = join(root, "outside");
    await Deno.writeFile(outside, enc("payload"));
    await Deno.remove(put.path);
    await Deno.symlink(outside, put.path);
    await rejects(cas.read(put.digest), code("cas.not_regular"));
    await rejects(cas.verify(put.digest), code("cas.not_regular"));
    // A directory where a blob should be.
    const hex = sha256Hex(enc("dir"));
    await Deno.mkdir(join(root, "cas", hex.slice(0, 2), hex), { recursive: true });
    await rejects(cas.read(hex), code("cas.not_regular"));
    // A shard folder that is a symlink to elsewhere.
    const other = sha256Hex(enc("other"));
    const elsewhere = join(root, "elsewhere");
    await Deno.mkdir(elsewhere);
    await Deno.writeFile(join(elsewhere, other), enc("other"));
    await Deno.symlink(elsewhere, join(root, "cas", other.slice(0, 2)));
    await rejects(cas.read(other), code("cas.not_regular"));
    await rejects(cas.put(enc("other")), code("cas.not_regular"));
    await rejects(cas.read("f".repeat(64)), code("cas.not_found"));
  });
});

Deno.test("a streamed put of a 20 MB blob hashes while it writes", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    const chunk = new Uint8Array(1 << 20);
    const expected = sha256Stream();
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < 20; i++) {
      const c = chunk.map((_, j) => (i * 31 + j) & 0xff);
      chunks.push(c);
      expected.update(c);
    }
    async function* source() {
      for (const c of chunks) yield c;
    }
    const put = await cas.putStream(source(), { contentType: "image/png" });
    strictEqual(put.digest, expected.hexDigest());
    strictEqual(put.size_bytes, 20 << 20);
    await cas.verify(put.digest);
    strictEqual((await cas.read(put.digest)).length, 20 << 20);
  });
});

Deno.test("putFile streams a file; a put over maxBytes stores nothing", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    const src = join(root, "img.bin");
    await Deno.writeFile(src, new Uint8Array(3000).fill(9));
    const put = await cas.putFile(src, { contentType: "image/png", maxBytes: 3000 });
    strictEqual(put.size_bytes, 3000);
    const big = join(root, "big.bin");
    await Deno.writeFile(big, new Uint8Array(3001).fill(9));
    await rejects(cas.putFile(big, { maxBytes: 3000 }), code("cas.too_large"));
    const hex = sha256Hex(new Uint8Array(3001).fill(9));
    strictEqual(await pathExists(join(root, "cas", hex.slice(0, 2), hex)), false);
    deepStrictEqual(await leftovers(join(root, "cas")), []);
  });
});

Deno.test("a damaged sidecar is reported with its path and field", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    const put = await cas.put(enc("meta"));
    const metaPath = cas.metaPath(put.digest);
    await Deno.chmod(metaPath, 0o644);
    await Deno.writeTextFile(metaPath, '{"digest": 1}');
    await rejects(
      cas.readMeta(put.digest),
      (e) => code("cas.meta_invalid")(e) && /digest/.test((e as Error).message),
    );
    await Deno.writeTextFile(metaPath, "not json");
    await rejects(cas.readMeta(put.digest), code("cas.meta_invalid"));
    await rejects(cas.put(enc("meta")), code("cas.meta_invalid"));
  });
});

Deno.test("metadata without a canonical form is refused", async () => {
  await withTempDir(async (root) => {
    const cas = store(root);
    await rejects(cas.put(enc("x"), { metadata: { bad: NaN } }), code("cas.meta_invalid"));
  });
});
